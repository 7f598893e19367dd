"""The fuzzers' fixtures (helpers in tests/fuzz/support.py) and the case counts printed at
the end of the run (with FUZZ_REPORT=FILE also written there as JSON)."""

from __future__ import annotations

import json
import os

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Group, User
from django.db import connections

from tablehub import roles
from tablehub.models import Jurisdiction
from tests.fuzz.support import CASES, make_table


def pytest_terminal_summary(terminalreporter) -> None:
    if not CASES:
        return
    terminalreporter.section("fuzz cases")
    for fuzzer, numbers in sorted(CASES.items()):
        figures = ", ".join(f"{k} {v}" for k, v in sorted(numbers.items()))
        terminalreporter.write_line(f"{fuzzer}: {figures}")
    report = os.environ.get("FUZZ_REPORT")
    if report:
        with open(report, "w") as out:
            json.dump({k: dict(v) for k, v in CASES.items()}, out, indent=1, sort_keys=True)


@pytest.fixture(autouse=True)
async def _close_the_consumers_connection(request):
    """The consumers' database work runs in asgiref's sync thread; close its connection so
    the test database can be dropped afterwards. Only after a test that had the database:
    in one without it, Django refuses even the check of whether a connection is usable."""
    yield
    had_database = request.node.get_closest_marker("django_db") or {
        "db",
        "transactional_db",
        "world",
    } & set(request.fixturenames)
    if had_database:
        await database_sync_to_async(connections.close_all)()


@pytest.fixture(autouse=True)
def _quick(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TABLEHUB_WARM_PARSHEETS = False
    # The fuzzers send wrong credentials and keys on purpose, hundreds of them: the limit on
    # failed attempts has its own tests (tests/sessions/test_attempts.py).
    settings.TABLEHUB_ATTEMPT_LIMITS = {"per_credential": 10**6, "per_address": 10**6}


@pytest.fixture
def no_rate_limit(settings):
    """The fuzzers send as fast as the server answers: the rate limit has its own tests."""
    settings.TABLEHUB_RATE_LIMITS = {kind: {"rate": 0} for kind in ("station", "shoe", "tablet")}


@pytest.fixture
def world(transactional_db, _quick):
    jurisdiction = Jurisdiction.objects.create(
        code="fuzz", name="Fuzz", max_decision_seconds=3600, tips_allowed=True
    )
    table = make_table("t1", "reader-secret", {"s1": "s1-secret", "s2": "s2-secret"}, jurisdiction)
    other = make_table("t2", "other-reader", {"s1": "t2-s1-secret"}, jurisdiction)
    for username, role in (("dealer", roles.DEALER), ("boss", roles.SUPERVISOR), ("guest", None)):
        user = User.objects.create_user(username, password=f"{username}-pw")
        if role:
            user.groups.add(Group.objects.get_or_create(name=role)[0])
            table.staff.add(user)  # dealers and supervisors work their own tables' tablets
            other.staff.add(user)
    return table
