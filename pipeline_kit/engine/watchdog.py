"""Watchdog: take back expired leases, so a dead or sleeping worker's tasks are done by others.

Any worker runs it in its claim loop at a bounded rate, and `pipeline-kit watchdog` runs it on
demand. Racing watchdogs reclaim a task once: rows are locked (SKIP LOCKED where the engine has
it) and the update is guarded by the expired token.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.dialects import DIALECTS
from pipeline_kit.db.schema import attempts, lanes, tasks
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.engine.dependents import block_dependents
from pipeline_kit.engine.events import alert, record
from pipeline_kit.engine.states import Outcome, Status


@dataclass(frozen=True)
class Reclaimed:
    task_id: str
    lost_by: str | None
    new_status: Status


def reclaim_expired(db: Database, *, by: str, limit: int = 200) -> list[Reclaimed]:
    """Return expired leases to pending (or fail them where the lane says so); closes attempts as lost."""
    found: list[Reclaimed] = []
    if routines.enabled(db):  # a worker account: the same steps in the owner's routine
        with db.engine.begin() as conn:
            rows = routines.call(conn, "pk_reclaim", by=by, limit=int(limit))
        return [Reclaimed(r.task_id, r.worker_id, Status(r.status)) for r in rows]
    with db.engine.begin() as conn:
        query = (
            sa.select(
                tasks.c.task_id,
                tasks.c.lease_token,
                tasks.c.worker_id,
                tasks.c.attempts,
                tasks.c.retry_base,
                tasks.c.max_attempts,
                lanes.c.on_expire,
            )
            .join(lanes, lanes.c.lane == tasks.c.lane)
            .where(tasks.c.status == Status.PROCESSING.value, tasks.c.lease_expires_at < db_now())
            .order_by(tasks.c.lease_expires_at)
            .limit(limit)
        )
        if DIALECTS[conn.dialect.name].row_locks:
            query = query.with_for_update(skip_locked=True, of=tasks)
        for row in conn.execute(query).all():
            give_up = row.on_expire == "fail" or row.attempts - row.retry_base >= row.max_attempts
            status = Status.FAILED if give_up else Status.PENDING
            values = {
                "status": status.value,
                "lease_expires_at": None,
                "stage": None,
                "last_error": f"lease expired (held by {row.worker_id})",
            }
            if give_up:
                values["finished_at"] = db_now()
            else:
                values["run_after"] = db_now()
            won = conn.execute(
                sa.update(tasks)
                .where(
                    tasks.c.task_id == row.task_id,
                    tasks.c.lease_token == row.lease_token,
                    tasks.c.status == Status.PROCESSING.value,
                )
                .values(**values)
            ).rowcount
            if not won:
                continue
            conn.execute(
                sa.update(attempts)
                .where(
                    attempts.c.task_id == row.task_id,
                    attempts.c.lease_token == row.lease_token,
                    attempts.c.outcome.is_(None),
                )
                .values(
                    outcome=Outcome.LOST.value,
                    finished_at=db_now(),
                    error_kind="lease_expired",
                    error="lease expired before the worker finished",
                )
            )
            record(
                conn,
                "reclaim",
                {"by": by, "status": status.value},
                task_id=row.task_id,
                worker_id=row.worker_id,
                lease_token=row.lease_token,
            )
            if give_up:
                reason = (
                    "lane fails on expiry"
                    if row.on_expire == "fail"
                    else f"lease lost on the last of {row.max_attempts} attempts"
                )
                alert(conn, row.task_id, row.worker_id, f"lease expired: {reason}")
                block_dependents(conn, [row.task_id])
            found.append(Reclaimed(row.task_id, row.worker_id, status))
    return found
