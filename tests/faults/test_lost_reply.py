"""A COMMIT whose reply is lost: the row committed, yet the client sees a connection error.

Invariant protected (design invariant 3, pitfall "a lost COMMIT reply"): retrying `complete`
with the same token answers DUPLICATE and writes nothing twice — one completed attempt, the cost
booked once, each dependent counted down once.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import driver
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.worker.reconnect import Reconnect

from .helpers import enqueue_frames


def _lose_next_commit_reply(db: Database) -> list[bool]:
    """Make the completion's next commit succeed on the server and then fail on the client;
    returns the arm switch. Completions run on the engine's driver connection (db/driver.py):
    the commit is its COMMIT (on MariaDB sent with the statements before it), or on PostgreSQL
    the one autocommitted finish statement."""
    held = driver._connection(db)
    error = db.engine.dialect.loaded_dbapi.OperationalError
    armed = [False]
    real = held.dbapi

    class Cursor:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def execute(self, sql: str, params: Any = None) -> Any:
            result = self._inner.execute(sql, params) if params is not None else self._inner.execute(sql)
            if armed[0] and (sql.endswith("COMMIT") or sql.startswith("WITH done AS")):
                armed[0] = False
                raise error("server closed the connection unexpectedly")
            return result

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    class Connection:
        def cursor(self) -> Cursor:
            return Cursor(real.cursor())

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    held.dbapi = Connection()
    return armed


def test_lost_commit_reply_then_retry_is_duplicate(db: Database) -> None:
    """The retried completion is DUPLICATE; nothing (attempt, cost, dependents) is written twice."""
    (task_id,) = enqueue_frames(db, 1)
    with db.engine.begin() as conn:
        engine.enqueue(conn, [engine.TaskSpec(task_id="after", kind="noop", lane="default", depends_on=(task_id,))])
    (lease,) = engine.claim(db, "A", ["image"], lease_s=30)
    engine.record_cost(db, task_id, lease.token, 0.04, model="fake")
    done = engine.Completion(
        task_id=task_id, token=lease.token, output_path="x.png", result={"sha256": "ab"}, cost=0.04
    )
    armed = _lose_next_commit_reply(db)

    armed[0] = True
    with pytest.raises(sa.exc.DBAPIError):
        engine.complete(db, done, worker_id="A")
    assert not armed[0], "the fault must have fired on the completion's commit"
    assert engine.complete(db, done, worker_id="A") is engine.Ack.DUPLICATE

    armed[0] = True  # the worker's own path: Reconnect retries the lost reply by itself
    retried = Reconnect(schedule=(0.01,), jitter=0).call(
        lambda: engine.complete(db, done, worker_id="A"), what="complete"
    )
    assert retried is engine.Ack.DUPLICATE

    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(attempts.c.outcome, attempts.c.cost).where(attempts.c.task_id == task_id)).all()
        task = conn.execute(sa.select(tasks.c.status, tasks.c.cost).where(tasks.c.task_id == task_id)).one()
        after = conn.execute(sa.select(tasks.c.status, tasks.c.deps_remaining).where(tasks.c.task_id == "after")).one()
    assert [tuple(r) for r in rows] == [("completed", 0.04)]
    assert tuple(task) == ("completed", 0.04)
    assert tuple(after) == ("pending", 0)
