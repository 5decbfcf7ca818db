"""Watchdog: take back expired leases, so a dead or sleeping worker's tasks are done by others.

Any worker runs it in its claim loop at a bounded rate, and `pipeline-kit watchdog` runs it on
demand. Racing watchdogs reclaim a task once: rows are locked (SKIP LOCKED where the engine has
it) and the update is guarded by the expired token.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import rows_named, run_named
from pipeline_kit.engine.dependents import block_dependents
from pipeline_kit.engine.states import Status


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
        # the routine's steps (db/routines.py _reclaim), from the same file
        for row in rows_named(conn, "expired", limit=int(limit)):
            give_up = row["on_expire"] == "fail" or row["attempts"] - row["retry_base"] >= row["max_attempts"]
            lease = {"r_task": row["task_id"], "r_token": row["lease_token"], "r_worker": row["worker_id"]}
            if not run_named(conn, "reclaim_task", **lease, give_up=give_up):
                continue
            run_named(conn, "reclaim_attempt", **lease)
            run_named(conn, "reclaim_event", **lease, give_up=give_up, by=by)
            run_named(
                conn, "reclaim_alert", **lease, give_up=give_up, r_on_expire=row["on_expire"], r_max=row["max_attempts"]
            )
            if give_up:
                block_dependents(conn, [row["task_id"]])
            found.append(Reclaimed(row["task_id"], row["worker_id"], Status.FAILED if give_up else Status.PENDING))
    return found
