"""A deadlock between two workers' transactions is a transient conflict, not a worker crash.

Invariant protected (a worker PC runs all night): when the server picks a worker's transaction
as a deadlock victim it has rolled it back whole, so the worker must run it again (as it does
for a lost connection) instead of dying with a traceback. The chaos run on MariaDB saw `complete`
and the lease renewal die this way (error 1213).
"""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.worker.reconnect import Reconnect

from .helpers import enqueue_frames


def _real_deadlock(db: Database, first: str, second: str) -> sa.exc.DBAPIError:
    """Two transactions lock two task rows in opposite orders; returns the victim's error."""
    errors: list[sa.exc.DBAPIError] = []
    both_hold = threading.Barrier(2, timeout=30)

    def touch(a: str, b: str) -> None:
        try:
            with db.engine.begin() as conn:
                conn.execute(sa.update(tasks).where(tasks.c.task_id == a).values(stage="x"))
                both_hold.wait()
                conn.execute(sa.update(tasks).where(tasks.c.task_id == b).values(stage="y"))
        except sa.exc.DBAPIError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=touch, args=pair) for pair in ((first, second), (second, first))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(errors) == 1, errors
    return errors[0]


def test_deadlock_victim_is_retried(db: Database) -> None:
    """The worker's retry wrapper runs a deadlock victim's transaction again instead of raising."""
    if db.dialect == "sqlite":
        pytest.skip("SQLite's IMMEDIATE transactions serialise writers: no deadlock to lose")
    first, second = enqueue_frames(db, 2)
    error = _real_deadlock(db, first, second)
    assert "deadlock" in str(error.orig).lower()
    raised = [error]

    def victim_then_ok() -> str:
        if raised:
            raise raised.pop()
        return "ok"

    assert Reconnect(schedule=(0.01,), jitter=0).call(victim_then_ok, what="complete") == "ok"
