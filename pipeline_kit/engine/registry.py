"""The workers table: who is out there, on which host, serving which lanes, last seen when, and
whether it still answers (its liveness, judged against the lease it runs with)."""

from __future__ import annotations

import socket
from enum import Enum

import sqlalchemy as sa

from pipeline_kit import __version__
from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import workers
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.errors import BadInput

FOLD_AFTER_S = 24 * 3600.0  # workers not seen for a day are folded away from status and monitor
DEFAULT_LEASE_S = 120.0  # the CLI's --lease default, for rows registered before lease_s was kept


class Liveness(str, Enum):
    """What an operator is told about a worker."""

    WORKING = "working"  # beating, holds tasks
    IDLE = "idle"  # beating, holds nothing
    PAUSED = "paused"  # beating, but waiting for a provider or the store to answer again
    STOPPED = "stopped"  # exited cleanly
    NOT_RESPONDING = "not responding"  # silent for longer than its lease: killed, frozen, cut off


def judge(state: str | None, last_seen_age_s: float | None, lease_s: float | None) -> Liveness | None:
    """A registered worker's liveness from its row; None when it never registered."""
    if state is None:
        return None
    if state == Liveness.STOPPED.value:
        return Liveness.STOPPED
    if last_seen_age_s is None or last_seen_age_s > (lease_s or DEFAULT_LEASE_S):
        return Liveness.NOT_RESPONDING
    if state in (Liveness.IDLE.value, Liveness.PAUSED.value):
        return Liveness(state)
    return Liveness.WORKING


def check_identity(worker_id: str, uid: str | None = None) -> None:
    """Refuse, in one line and before anything is written, a worker id or API identity longer
    than its column holds (a server would refuse the row mid-run; SQLite would keep it whole)."""
    for flag, value, column in (("--worker-id", worker_id, workers.c.worker_id), ("--uid", uid, workers.c.uid)):
        most = column.type.length
        if value is not None and most is not None and len(value) > most:
            raise BadInput(f"{flag} is {len(value)} characters long; at most {most} fit")


def register_worker(
    db: Database,
    worker_id: str,
    *,
    lanes: list[str],
    uid: str | None = None,
    backend: str | None = None,
    lease_s: float | None = None,
) -> None:
    """Insert or refresh this worker's row (a restarted worker keeps its id)."""
    values = {
        "uid": uid,
        "host": socket.gethostname(),
        "version": __version__,
        "lanes": ",".join(lanes),
        "backend": backend,
        "started_at": db_now(),
        "last_seen_at": db_now(),
        "state": "working",
        "lease_s": lease_s,
        "paused_reason": None,
        "paused_since": None,
    }
    if routines.enabled(db):
        with db.engine.begin() as conn:
            args = {k: values[k] for k in ("uid", "host", "version", "lanes", "backend", "lease_s")}
            routines.call(conn, "pk_register_worker", worker_id=worker_id, **args)
        return
    with db.engine.begin() as conn:
        done = conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id).values(**values)).rowcount
        if not done:
            conn.execute(sa.insert(workers).values(worker_id=worker_id, **values))


def touch_worker(db: Database, worker_id: str, state: str, *, paused: str | None = None) -> None:
    """Record that the worker is alive and what it is doing (working | idle | stopped); `paused`
    says why it waits instead (state `paused`), its time kept while the reason stays the same."""
    c = workers.c
    if routines.enabled(db):
        reason = None if paused is None else paused[: c.paused_reason.type.length]
        with db.engine.begin() as conn:
            routines.call(conn, "pk_touch_worker", worker_id=worker_id, state=state, paused=reason)
        return
    since: object = None
    if paused is not None:
        state, paused = Liveness.PAUSED.value, paused[: c.paused_reason.type.length]
        since = sa.case((c.paused_reason == paused, c.paused_since), else_=db_now())
    # paused_since first: MariaDB evaluates SET left to right, so it must read the old reason
    values = ((c.paused_since, since), (c.paused_reason, paused), (c.last_seen_at, db_now()), (c.state, state))
    with db.engine.begin() as conn:
        conn.execute(sa.update(workers).where(c.worker_id == worker_id).ordered_values(*values))
