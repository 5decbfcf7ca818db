"""Wake-up on new work: PostgreSQL tells idle workers at once; elsewhere they poll.

Invariant protected: every way a task becomes claimable (enqueue, a dependency completed, a
retry, a reclaim, a lane resumed) notifies listeners on PostgreSQL, and claiming does not; an
idle worker's wait ends on such a notification, on its poll timeout, or on stop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from pipeline_kit import engine
from pipeline_kit.db import Database, create
from pipeline_kit.db.wake import CHANNEL, Waiter
from pipeline_kit.engine import Completion, TaskSpec


@pytest.fixture
def listener(db_url: str, db: Database) -> Iterator[psycopg.Connection]:
    if db.dialect != "postgresql":
        pytest.skip("NOTIFY is PostgreSQL's")
    conn = db.engine.raw_connection()
    pg = conn.driver_connection
    conn.detach()
    pg.autocommit = True
    pg.execute(f"LISTEN {CHANNEL}")
    yield pg
    pg.close()


def _heard(pg: psycopg.Connection) -> list[str]:
    """The payloads (lanes) notified since the last call."""
    return [n.payload for n in pg.notifies(timeout=0.5, stop_after=100)]


def _enqueue(db: Database, *specs: TaskSpec) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, list(specs))


def test_every_way_to_claimable_notifies_and_claiming_does_not(db: Database, listener: psycopg.Connection) -> None:
    _enqueue(
        db,
        TaskSpec(task_id="a", kind="noop", lane="default"),
        TaskSpec(task_id="b", kind="noop", lane="default", depends_on=("a",)),
    )
    assert _heard(listener) == ["default"]  # one per lane and transaction, not one per task; b waits
    (lease,) = engine.claim(db, "w", ["default"], limit=1, lease_s=30)
    assert _heard(listener) == []
    engine.complete(db, Completion(task_id="a", token=lease.token))
    assert _heard(listener) == ["default"]  # b's last dependency is done
    (lease,) = engine.claim(db, "w", ["default"], limit=1, lease_s=30)
    engine.fail(db, "b", lease.token, error="boom", retryable=True)
    assert _heard(listener) == ["default"]  # back to pending (after its backoff)
    engine.update_lane(db, "default", paused=True)
    engine.update_lane(db, "default", paused=False)
    assert _heard(listener) == ["default", "default"]


def test_waiter_wakes_on_enqueue_on_postgresql_and_polls_elsewhere(db_url: str, db: Database) -> None:
    stop = threading.Event()
    waiter = Waiter(create(db_url), stop)
    try:
        waiter.wait(0.01)  # starts listening
        timer = threading.Timer(0.3, _enqueue, (db, TaskSpec(task_id="x", kind="noop", lane="default")))
        timer.start()
        started = time.monotonic()
        woken = waiter.wait(5)
        timer.join()
        if db.dialect == "postgresql":
            assert woken and time.monotonic() - started < 4.5
        else:
            assert not woken and time.monotonic() - started >= 4.9
    finally:
        waiter.close()


def test_stop_ends_a_wait(db_url: str) -> None:
    stop = threading.Event()
    waiter = Waiter(create(db_url), stop)
    try:
        threading.Timer(0.2, stop.set).start()
        started = time.monotonic()
        assert waiter.wait(30) is False
        assert time.monotonic() - started < 29
    finally:
        waiter.close()
