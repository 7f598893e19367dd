"""Fuzzing the HTTP doors with Django's test client: the card reader's
``POST /api/tables/<id>/shoe/cards/`` and the REST API's inputs that carry money and
numbers (schemathesis, tests/api/test_schemathesis.py, covers the whole schema; these are
the targeted cases: negative, huge and over-precise amounts, wrong types).

Every answer is below 500, a refusal has the API's error shape with a code, and a refused
request changes nothing.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rounds.models import RoundEvent
from tablehub.models import Table, TableConfig
from tests.fuzz.strategies import (
    AMOUNTS,
    BINARY_FRAMES,
    JUNK,
    RAW_FRAMES,
    SHOE_MESSAGES,
    fuzz_settings,
    weighted,
)
from tests.fuzz.support import (
    READER_CODES,
    bets_closed,
    count,
    ledger_balances,
    reader_seq,
    resolve,
    snapshot,
)
from tests.helpers import make_staff

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dealing(world):
    bets_closed(world)
    return world


AUTH = weighted(
    80,
    st.just("Reader reader-secret"),
    st.sampled_from(
        [
            "Reader nope",
            "Reader other-reader",
            "Bearer reader-secret",
            "Reader",
            "",
            "reader-secret",
        ]
    ),
)
BODIES = weighted(
    80,
    SHOE_MESSAGES.map(lambda m: ("json", m)),
    st.one_of(
        RAW_FRAMES.map(lambda t: ("raw", t.encode("utf-8", "surrogatepass"))),
        BINARY_FRAMES.map(lambda b: ("raw", b)),
    ),
)


@fuzz_settings(150)
@given(auth=AUTH, body=BODIES, where=weighted(90, st.just("t1"), st.sampled_from(["t2", "none"])))
def test_the_card_readers_http_input(client, dealing, auth, body, where):
    kind, payload = body
    table_id = {"t1": dealing.pk, "t2": Table.objects.get(name="t2").pk, "none": 999999}[where]
    seq = reader_seq(dealing)
    data = json.dumps(resolve(payload, seq)).encode() if kind == "json" else payload
    before = snapshot()
    events = RoundEvent.objects.count()
    response = client.post(
        f"/api/tables/{table_id}/shoe/cards/",
        data=data,
        content_type="application/json",
        HTTP_AUTHORIZATION=auth,
    )
    assert response.status_code in (200, 400, 401), (body, response.content)
    answer = response.json()
    assert answer["type"] == "scan" and answer["ok"] is (response.status_code == 200)
    if response.status_code == 401:
        assert answer["error"]["code"] == "unauthorized"
        assert auth != "Reader reader-secret" or where != "t1"
    if response.status_code != 200 or answer["duplicate"] or where != "t1":
        if response.status_code != 200:
            assert answer["error"]["code"] in READER_CODES and answer["error"]["message"]
        assert snapshot() == before, (body, answer)
        outcome = "refused" if response.status_code != 200 else "duplicate"
    else:
        assert RoundEvent.objects.count() == events + 1
        outcome = "accepted"
    ledger_balances()
    code = answer.get("error", {}).get("code", "ok")
    count("HTTP card reader", cases=1, **{outcome: 1, f"status {response.status_code}": 1})
    count("HTTP card reader", **{f"code {code}": 1})


# -- the REST API: a new configuration version ----------------------------------------------

PAIRS = weighted(
    50,
    st.tuples(AMOUNTS, AMOUNTS).map(list),
    st.one_of(st.lists(AMOUNTS, max_size=3), JUNK),
)
CONFIGS = st.fixed_dictionaries(
    {
        "rules": weighted(
            80,
            st.just({"decks": 8}),
            st.one_of(
                st.fixed_dictionaries({"decks": JUNK}),
                st.fixed_dictionaries({"blackjack_pays": st.sampled_from(["3:2", "7:5", "x"])}),
                JUNK,
            ),
        ),
        "limits": weighted(
            85,
            st.fixed_dictionaries(
                {"main": PAIRS},
                optional={"special": PAIRS, "let_it_play": PAIRS, "zzz": PAIRS},
            ),
            JUNK,
        ),
    },
    optional={
        "timers": st.dictionaries(
            st.sampled_from(["betting", "decision", "insurance", "bonus", "video_card", "nap"]),
            AMOUNTS,
            max_size=3,
        ),
        "chips": weighted(70, st.lists(AMOUNTS, min_size=1, max_size=9), JUNK),
        "win_thresholds": weighted(
            70, st.fixed_dictionaries({"nice": AMOUNTS, "big": AMOUNTS}), JUNK
        ),
    },
)


@pytest.fixture
def floor_manager(client, world):
    from tablehub import roles

    client.force_login(make_staff("fm", roles.FLOOR_MANAGER))
    return client


@fuzz_settings(120)
@given(config=weighted(95, CONFIGS, JUNK))
def test_a_new_configuration_with_bad_numbers(floor_manager, world, config):
    versions = TableConfig.objects.count()
    response = floor_manager.post(
        f"/api/tables/{world.pk}/configs/", data=json.dumps(config), content_type="application/json"
    )
    assert response.status_code in (200, 201, 400), (config, response.content)
    if response.status_code == 400:
        error = response.json()["error"]
        assert error["code"] and error["message"], error
        assert TableConfig.objects.count() == versions
        outcome = "refused"
    else:
        saved = response.json()
        for low, high in saved["limits"].values():  # stored in cents, in order
            for amount in (Decimal(low), Decimal(high)):
                assert amount.is_finite() and amount == amount.quantize(Decimal("0.01"))
            assert Decimal(low) <= Decimal(high)
        outcome = "accepted"
    count("REST API configs", cases=1, **{outcome: 1})


@pytest.mark.parametrize(
    "query",
    [
        "page_size=-1",
        "page_size=1000000000000000000000000",
        "page=-3",
        "page=1e30",
        "page=%00",
        "page_size=abc",
    ],
)
def test_list_pages_with_bad_numbers(floor_manager, world, query):
    for url in (f"/api/tables/{world.pk}/rounds/", "/api/stations/"):
        response = floor_manager.get(f"{url}?{query}")
        assert response.status_code in (200, 400, 404), (url, query, response.content)
        if response.status_code != 200:
            assert response.json()["error"]["code"]


@pytest.mark.parametrize(
    "start, end",
    [
        ("junk", "2026-01-01T00:00:00Z"),
        ("2026-01-01T00:00:00Z", "1e30"),
        ("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
        ("-1", "0"),
    ],
)
def test_a_report_with_bad_dates(floor_manager, world, start, end):
    response = floor_manager.get(f"/api/tables/{world.pk}/report/?start={start}&end={end}")
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert response.json()["error"]["code"]


@pytest.mark.parametrize(
    "part, value",
    [
        ("limits", {"main": ["1", "1e30"]}),
        ("limits", {"main": ["-1", "100"]}),
        ("limits", {"main": ["1.001", "100"]}),
        ("limits", {"main": ["1", "99999999999999999999.99"]}),
        ("chips", ["1e30"]),
        ("chips", ["-5"]),
        ("chips", ["0.005"]),
        ("timers", {"decision": "1e30"}),
        ("timers", {"video_card": "1e999999"}),
        ("timers", {"video_card": -1}),
        ("timers", {"betting": "NaN"}),
        ("win_thresholds", {"nice": "-1", "big": "10"}),
    ],
)
def test_a_configuration_with_a_huge_negative_or_over_precise_number_is_400(
    floor_manager, world, part, value
):
    config = {"rules": {"decks": 8}, "limits": {"main": ["1", "100"]}, part: value}
    versions = TableConfig.objects.count()
    response = floor_manager.post(
        f"/api/tables/{world.pk}/configs/", data=json.dumps(config), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert TableConfig.objects.count() == versions


@pytest.mark.parametrize(
    "body",
    [b"[" * 1000 + b"]" * 1000, b'{"rules": NaN}', b"\xff\xfe", b'{"rules": {"decks": 8}'],
)
def test_a_configuration_body_that_is_not_json_is_400(floor_manager, world, body):
    versions = TableConfig.objects.count()
    response = floor_manager.generic(
        "POST", f"/api/tables/{world.pk}/configs/", data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"]
    assert TableConfig.objects.count() == versions
