"""Shared test set-up: the CI service check and the service fixtures.

Locally the suite runs on the embedded default (SQLite, in-memory channel
layer) and tests that need PostgreSQL or Redis skip. With CI=true those
services are required: the session stops with a failure before any test runs
if DATABASE_URL (PostgreSQL) or REDIS_URL is unset or unreachable, and a
service fixture never skips.
"""

import asyncio
import io
import os
import signal
import sys
import time
import warnings
from collections.abc import Iterator

import psycopg
import pytest
import redis


def in_ci() -> bool:
    """True when the environment says this is a CI run (CI=true/1/yes)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def is_postgres_url(url: str) -> bool:
    """True for a PostgreSQL DATABASE_URL (postgres://, postgresql://, ...)."""
    return url.startswith(("postgres://", "postgresql://", "pgsql://", "postgis://"))


def ci_service_problems() -> list[str]:
    """Check the services CI needs; return what is missing or unreachable."""
    problems: list[str] = []
    database_url = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    if not database_url:
        problems.append("DATABASE_URL is not set")
    elif not is_postgres_url(database_url):
        problems.append("DATABASE_URL is not a PostgreSQL URL")
    else:
        conninfo = "postgresql://" + database_url.split("://", 1)[1]
        try:
            with psycopg.connect(conninfo, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            problems.append(f"PostgreSQL at DATABASE_URL is unreachable: {exc}")
    if not redis_url:
        problems.append("REDIS_URL is not set")
    else:
        client = redis.Redis.from_url(redis_url, socket_connect_timeout=5, socket_timeout=5)
        try:
            client.ping()
        except redis.RedisError as exc:
            problems.append(f"Redis at REDIS_URL is unreachable: {exc}")
        finally:
            client.close()
    return problems


def _print_the_loops_tasks(signum: int, frame: object) -> None:
    """``kill -USR1 <pytest pid>``: print the tasks of the event loop running in the main
    thread and where each waits (to find what a hung test or teardown waits for)."""
    loop = asyncio.events._get_running_loop()
    if loop is None:
        print("no event loop is running in the main thread", file=sys.stderr)
        return
    for task in asyncio.all_tasks(loop):
        print(f"--- {task!r}", file=sys.stderr)
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()


def _awaiting(task: asyncio.Task) -> str:
    """Where a task waits: each coroutine of its chain of awaits, innermost last (a task's
    own stack shows its outermost coroutine only)."""
    lines = []
    awaited: object = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
        if frame is not None:
            code = frame.f_code
            lines.append(f"  {code.co_filename}:{frame.f_lineno} in {code.co_name}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
    return "\n".join(lines)


def _cancel_all_tasks_at_most_3_s(loop: asyncio.AbstractEventLoop) -> None:
    """asyncio's own ``_cancel_all_tasks`` (run when a test's loop closes), but a task that
    does not end within 3 s of its cancellation is named with where it waits in a warning
    and left behind, instead of hanging the close for ever: the run goes on and says what
    to fix. (A table hub's listener cancelled in a Redis read with the rest of the loop's
    tasks sometimes does not end before the read's own 30 s timeout; it had cost 10 s of a
    test's teardown each time.)"""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    _done, stuck = loop.run_until_complete(asyncio.wait(tasks, timeout=3))
    for task in stuck:
        message = f"a task did not end when cancelled: {task!r}\n{_awaiting(task)}"
        warnings.warn(message, stacklevel=1)
        asyncio.tasks._all_tasks.discard(task)  # type: ignore[attr-defined]
    for task in tasks:
        if task in stuck or task.cancelled() or task.exception() is None:
            continue
        loop.call_exception_handler(
            {
                "message": "unhandled exception during the loop's close",
                "exception": task.exception(),
                "task": task,
            }
        )


asyncio.runners._cancel_all_tasks = _cancel_all_tasks_at_most_3_s  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, _print_the_loops_tasks)


def pytest_sessionstart(session: pytest.Session) -> None:
    """With CI=true, fail the whole run unless PostgreSQL and Redis are there."""
    if not in_ci():
        return
    problems = ci_service_problems()
    if problems:
        pytest.exit(
            "CI=true needs PostgreSQL and Redis (run .ci/run): " + "; ".join(problems),
            returncode=pytest.ExitCode.TESTS_FAILED,
        )


def require_service(variable: str, what: str) -> str:
    """Return an environment variable; skip locally when unset, fail under CI."""
    value = os.environ.get(variable, "")
    if not value:
        message = f"{variable} is not set: this test needs {what}"
        if in_ci():
            pytest.fail(message + " and CI=true never skips it", pytrace=False)
        pytest.skip(message)
    return value


@pytest.fixture
def redis_url() -> str:
    """REDIS_URL; skips when unset locally, fails when unset under CI=true."""
    return require_service("REDIS_URL", "Redis")


@pytest.fixture
def postgres_url() -> str:
    """DATABASE_URL when it is PostgreSQL; skips locally otherwise, fails under CI."""
    url = require_service("DATABASE_URL", "PostgreSQL")
    if not is_postgres_url(url):
        message = "DATABASE_URL is not PostgreSQL"
        if in_ci():
            pytest.fail(message + " and CI=true never skips it", pytrace=False)
        pytest.skip(message)
    return url


@pytest.fixture
def run_command():
    """Run a management command in-process: (exit status, stdout, stderr)."""
    from django.core.management import call_command

    def run(name: str, *args: str) -> tuple[int | str | None, str, str]:
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(name, *args, stdout=out, stderr=err)
            return 0, out.getvalue(), err.getvalue()
        except SystemExit as exc:
            return exc.code, out.getvalue(), err.getvalue()

    return run


@pytest.fixture(autouse=True)
def _no_failed_attempts_from_earlier_tests(settings):
    """The failed-attempt counts (tablehub/attempts.py) live in the cache: each test gets a
    cache of its own (a fresh key prefix, on Redis too, where clearing would flush the whole
    database, channel layer included), so one test's refused joins or logins never lock out
    the next test's."""
    import copy
    import uuid

    own = f"test-{uuid.uuid4().hex}"
    caches = copy.deepcopy(settings.CACHES)
    for config in caches.values():
        config["KEY_PREFIX"] = own
        if config["BACKEND"].endswith("LocMemCache"):
            config["LOCATION"] = own
    settings.CACHES = caches


@pytest.fixture(autouse=True)
def _no_cached_engines_from_earlier_tests():
    """The writer keeps the engines of the rounds it wrote (rounds/writer.py): a test's
    database is new, but SQLite gives its rounds the ids of an earlier test's, whose engines
    must not be taken for theirs."""
    from rounds import writer

    yield
    writer.forget_cached_engines()


@pytest.fixture(autouse=True)
def _timers_fired_by_the_test(settings):
    """Unit tests fire round expiries themselves; the end-to-end tests start real servers.
    Timers act again (an earlier test's ``in_process_timers`` paused them before its
    database was emptied; a live replay's stop is for good: its database is gone)."""
    from rounds import timers  # local: this conftest loads before Django is set up

    settings.TABLEHUB_TIMERS = "none"
    timers.resume()


@pytest.fixture(autouse=True)
def _sync_thread_connections_closed_afterwards():
    """After each test, the database connections of asgiref's one thread for database work
    outside any request (``SyncToAsync.single_thread_executor``) are closed. Every event loop
    of this process without a caller waiting in a thread sends its database work there: an
    async test's consumers, and the in-process server of a live replay (Twisted cannot be
    restarted, so it serves for the rest of the process). A connection its consumers left
    open was taken over by the next async test, whose channels' ``database_sync_to_async``
    checks it before anything else: at the teardown of a test without database access that
    check was refused ("Database access not allowed")."""
    from asgiref.sync import SyncToAsync  # local: this conftest loads before Django is set up
    from django.db import connections

    yield
    executor = getattr(SyncToAsync, "single_thread_executor", None)
    if executor is not None:  # closing needs no database access: no test's rights are used
        executor.submit(connections.close_all).result(timeout=10)


@pytest.fixture(autouse=True)
def _rounds_made_ready_by_the_test(settings):
    """A round's engine is not loaded in the background when its bets close (the load
    would run in the sync thread after the test that closed them has ended), unless the
    test asks for it (tests/rounds/test_round_ready.py)."""
    settings.TABLEHUB_ROUND_READY = False


@pytest.fixture
def in_process_timers(transactional_db, settings) -> Iterator[None]:
    """The in-process server's timers and periodic sweeps act for this test ("inprocess"),
    and are paused, the running ones waited for, before its database is emptied, and so is
    any other work of the server on it (a closing socket's): a connection still reading
    while PostgreSQL truncates the tables deadlocks the flush (seen in CI, twice). (They
    were resumed for every test by ``_timers_fired_by_the_test``.)"""
    from rounds import timers  # local: this conftest loads before Django is set up

    settings.TABLEHUB_TIMERS = "inprocess"
    yield
    assert timers.pause(wait=10), "a timer or sweep still ran 10 s after the test"
    _until_no_other_connection_works()


def _until_no_other_connection_works(most: float = 10.0) -> None:
    """On PostgreSQL: until no other connection to the test database is inside a statement
    or a transaction (at most ``most`` seconds)."""
    from django.db import connection  # local: this conftest loads before Django is set up

    if connection.vendor != "postgresql":
        return  # SQLite's flush waits on its own lock, and no other lock can deadlock it
    until = time.monotonic() + most
    with connection.cursor() as cursor:
        while time.monotonic() < until:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND state <> 'idle'"
            )
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.05)


@pytest.fixture(autouse=True)
def _a_channel_layer_per_event_loop(request):
    """Each async test runs on an event loop of its own, and channels_redis binds a layer's
    locks to the loop that first used them: an async test gets a fresh layer, so a receive
    a previous test left pending cannot hold a lock of a closed loop. (Sync tests that run
    a server in a thread keep theirs for the module: see tests/browser/conftest.py.)"""
    import inspect

    from channels.layers import channel_layers

    if inspect.iscoroutinefunction(getattr(request, "function", None)):
        channel_layers.backends.clear()
    yield
