"""The settings of a test run: the product's, with DEBUG on unless the environment says
otherwise (the demo's key, http cookies, the demo's origins), as ./dev run asks for it.

The servers and commands the tests start in processes of their own inherit DEBUG from this
process's environment and use the product's settings (tablehub.settings) themselves. mypy's
Django plugin reads these settings too (pyproject.toml).
"""

import os
import re

os.environ.setdefault("DEBUG", "1")


def _redis_of_this_worker() -> None:
    """Under pytest-xdist each worker has a test database of its own (pytest-django adds the
    worker's name) and here a Redis database of its own, the next numbers after REDIS_URL's:
    the channel layer's groups (``table.<id>``), the cache and Celery's queues would
    otherwise mix two workers' tables of the same id. Set in the environment, so that the
    servers and workers a test starts in processes of their own use it too."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    url = os.environ.get("REDIS_URL", "")
    number = re.fullmatch(r"gw(\d+)", worker)
    if not (url and number):
        return
    base = re.search(r"/(\d+)$", url)
    database = (int(base.group(1)) if base else 0) + 1 + int(number.group(1))
    stem = url[: base.start()] if base else url.rstrip("/")
    os.environ["REDIS_URL"] = f"{stem}/{database}"


_redis_of_this_worker()

from tablehub.settings import *  # noqa: E402, F403

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    # Django's, with a faster flush between transactional tests (tests/postgresql/base.py).
    DATABASES["default"]["ENGINE"] = "tests.postgresql"  # noqa: F405

# Django's hash, a thousandth of its work (tests/hashers.py).
PASSWORD_HASHERS = ["tests.hashers.QuickPBKDF2PasswordHasher"]

# No timers of the server's own outside a test that asks for them (``in_process_timers``,
# or ``settings.TABLEHUB_TIMERS = "inprocess"``): unit tests fire expiries themselves. The
# product's default on the embedded stack is "inprocess", and between one test's settings
# being put back and the next test's, an in-process server still running in this process
# (a live replay's: Twisted cannot restart it) ran its periodic sweeps on whatever database
# was there, in the thread the next test's consumers use.
TABLEHUB_TIMERS = "none"
