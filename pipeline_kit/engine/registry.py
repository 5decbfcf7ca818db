"""The workers table: who is out there, on which host, serving which lanes, last seen when."""

from __future__ import annotations

import socket

import sqlalchemy as sa

from pipeline_kit import __version__
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import workers
from pipeline_kit.db.sqltime import db_now


def register_worker(db: Database, worker_id: str, *, lanes: list[str], uid: str | None = None,
                    backend: str | None = None) -> None:
    """Insert or refresh this worker's row (a restarted worker keeps its id)."""
    values = {"uid": uid, "host": socket.gethostname(), "version": __version__, "lanes": ",".join(lanes),
              "backend": backend, "started_at": db_now(), "last_seen_at": db_now(), "state": "working"}
    with db.engine.begin() as conn:
        done = conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id).values(**values)).rowcount
        if not done:
            conn.execute(sa.insert(workers).values(worker_id=worker_id, **values))


def touch_worker(db: Database, worker_id: str, state: str) -> None:
    """Record that the worker is alive and what it is doing (working | idle | stopped)."""
    with db.engine.begin() as conn:
        conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id)
                     .values(last_seen_at=db_now(), state=state))
