"""The workers table: who is out there, on which host, serving which lanes, last seen when, and
whether it still answers (its liveness, judged against the lease it runs with)."""

from __future__ import annotations

import socket
from enum import Enum

import sqlalchemy as sa

from pipeline_kit import __version__
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import workers
from pipeline_kit.db.sqltime import db_now

FOLD_AFTER_S = 24 * 3600.0  # workers not seen for a day are folded away from status and monitor
DEFAULT_LEASE_S = 120.0  # the CLI's --lease default, for rows registered before lease_s was kept


class Liveness(str, Enum):
    """What an operator is told about a worker."""

    WORKING = "working"  # beating, holds tasks
    IDLE = "idle"  # beating, holds nothing
    STOPPED = "stopped"  # exited cleanly
    NOT_RESPONDING = "not responding"  # silent for longer than its lease: killed, frozen, cut off


def judge(state: str | None, last_seen_age_s: float | None,
          lease_s: float | None) -> Liveness | None:
    """A registered worker's liveness from its row; None when it never registered."""
    if state is None:
        return None
    if state == Liveness.STOPPED.value:
        return Liveness.STOPPED
    if last_seen_age_s is None or last_seen_age_s > (lease_s or DEFAULT_LEASE_S):
        return Liveness.NOT_RESPONDING
    return Liveness.IDLE if state == Liveness.IDLE.value else Liveness.WORKING


def register_worker(db: Database, worker_id: str, *, lanes: list[str], uid: str | None = None,
                    backend: str | None = None, lease_s: float | None = None) -> None:
    """Insert or refresh this worker's row (a restarted worker keeps its id)."""
    values = {"uid": uid, "host": socket.gethostname(), "version": __version__,
              "lanes": ",".join(lanes), "backend": backend, "started_at": db_now(),
              "last_seen_at": db_now(), "state": "working", "lease_s": lease_s}
    with db.engine.begin() as conn:
        done = conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id).values(**values)).rowcount
        if not done:
            conn.execute(sa.insert(workers).values(worker_id=worker_id, **values))


def touch_worker(db: Database, worker_id: str, state: str) -> None:
    """Record that the worker is alive and what it is doing (working | idle | stopped)."""
    with db.engine.begin() as conn:
        conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id)
                     .values(last_seen_at=db_now(), state=state))
