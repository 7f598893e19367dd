"""The receipts register shared by several server processes (rounds/receipts.py): an expiry
fired in one process (a Celery worker, which reads no frames) waits for the frames another
process received before the deadline and has not finished with, and for every process to
have published its register since the deadline passed. Needs Redis (skips locally without
it, fails under CI=true)."""

import time
from datetime import UTC, datetime

import pytest

from rounds import receipts
from rounds.receipts import Snapshot

pytestmark = pytest.mark.services
TABLE = 987_654  # no such table elsewhere in the register


@pytest.fixture
def register(redis_url, settings):
    settings.REDIS_URL = redis_url
    published: list[str] = []

    def publish(process: str, at: float, queued=None, held=None) -> None:
        receipts.publish(Snapshot(at, queued or {}, held or {}), process)
        published.append(process)

    yield publish
    client = receipts._redis()
    if published:
        client.hdel(receipts.REGISTER_KEY, *published)


def moment(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


def waiting(deadline: float, now: float, table: int = TABLE) -> bool:
    return receipts.waiting_before(table, moment(deadline), moment(now))


def test_an_expiry_waits_for_every_process_to_publish_after_the_deadline(register):
    deadline = time.time()
    register("other", deadline - 0.010)  # its last snapshot was taken before the deadline
    assert waiting(deadline, deadline + 0.015)  # it may hold a frame read since
    register("other", deadline + 0.005)  # published since: nothing of the table
    assert not waiting(deadline, deadline + 0.015)


def test_a_frame_queued_in_another_process_holds_the_expiry_two_seconds_at_most(register):
    deadline = time.time()
    register("other", deadline + 0.020, queued={TABLE: deadline - 0.001})
    assert waiting(deadline, deadline + 0.025)
    assert not waiting(deadline, deadline + 0.025, table=TABLE + 1)  # another table goes on
    register("other", deadline + receipts.QUEUED_HOLD_SECONDS, queued={TABLE: deadline - 0.001})
    # Its consumer never took it (a connection daphne killed): the table must not stop.
    assert not waiting(deadline, deadline + receipts.QUEUED_HOLD_SECONDS + 0.001)


def test_a_command_another_process_is_handling_holds_the_expiry_until_it_is_done(register):
    deadline = time.time()
    late = deadline + receipts.QUEUED_HOLD_SECONDS + 0.5  # a burst's batch can take that long
    register("other", late - 0.01, held={TABLE: deadline - 0.2})
    assert waiting(deadline, late)
    register("other", late, held={})  # written and answered
    assert not waiting(deadline, late)


def test_frames_read_after_the_deadline_hold_nothing(register):
    deadline = moment(time.time()).timestamp()  # as a round's deadline: to the microsecond
    register("other", deadline + 0.02, queued={TABLE: deadline + 0.001}, held={TABLE: deadline})
    assert waiting(deadline, deadline + 0.03)  # the one received at the deadline is on time
    register("other", deadline + 0.04, queued={TABLE: deadline + 0.001})
    assert not waiting(deadline, deadline + 0.05)


def test_a_silent_process_is_gone_and_is_dropped_once_stale(register):
    now = time.time()
    register("silent", now - receipts.SILENT_SECONDS - 0.1, held={TABLE: now - 5})
    register("dead", now - receipts.STALE_SECONDS - 1, held={TABLE: now - 70})
    assert not waiting(now - 0.5, now)
    assert "silent" not in receipts.publishers(now)
    client = receipts._redis()
    assert client.hexists(receipts.REGISTER_KEY, "silent")
    assert not client.hexists(receipts.REGISTER_KEY, "dead")  # its entry is removed


def test_an_expiry_fired_before_the_deadline_waits_only_for_frames_received(register):
    """A step closed early (a seat left: its deadline is now) does not wait for snapshots
    of a time not yet come."""
    now = time.time()
    register("other", now - 0.005)
    assert not waiting(now + 1, now)
    register("other", now - 0.005, queued={TABLE: now - 0.01})
    assert waiting(now + 1, now)
