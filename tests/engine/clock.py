"""Time passing in lease and backoff tests without sleeping on a busy machine: the database clock
stays the real one; the rows' deadlines are moved into the past, which is all a long wait does."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.db.sqltime import db_now, now_plus


def leases_run_out(db: Database, worker_id: str | None = None) -> None:
    """Every lease held (by `worker_id`, when given) has just expired."""
    held = tasks.c.status == "processing"
    if worker_id is not None:
        held &= tasks.c.worker_id == worker_id
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).where(held).values(lease_expires_at=now_plus(-1)))


def backoffs_end(db: Database) -> None:
    """Every task waiting out a retry's backoff is due now."""
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).where(tasks.c.run_after > db_now()).values(run_after=now_plus(-1)))
