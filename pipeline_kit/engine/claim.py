"""Claim: lease eligible tasks to a worker in one short transaction."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import sqlalchemy as sa

from pipeline_kit.db.claims import claim_rows, lock_lane
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, books, lanes, tasks
from pipeline_kit.engine.models import Lease
from pipeline_kit.engine.states import Status
from pipeline_kit.errors import BadInput

MAX_BATCH = 1000
MAX_LEASE_S = 7 * 86_400


@dataclass
class LaneCache:
    """Which lanes are limited, paused or paid, re-read every `ttl_s` seconds.

    Only an optimisation: a limited lane is always re-checked under its row lock, and the
    unlimited path's SQL re-checks `paused`/`max_running` itself (db/claims.py's gate), so a
    stale cache never lets a claim break a limit or take from a paused lane; it can only delay
    claiming from a lane that was just resumed or given a limit.
    """

    ttl_s: float = 2.0
    _rows: dict[str, sa.RowMapping] = field(default_factory=dict)
    _read_at: float = -1e9

    def get(self, conn: sa.Connection, names: Sequence[str]) -> dict[str, sa.RowMapping]:
        if time.monotonic() - self._read_at > self.ttl_s or not set(names) <= self._rows.keys():
            rows = conn.execute(sa.select(lanes).where(lanes.c.lane.in_(list(names)))).mappings()
            self._rows = {r["lane"]: r for r in rows}
            self._read_at = time.monotonic()
        return self._rows


def claim(
    db: Database,
    worker_id: str,
    lanes_served: Sequence[str],
    *,
    limit: int = 1,
    lease_s: float = 60.0,
    cache: LaneCache | None = None,
) -> list[Lease]:
    """Lease up to `limit` eligible tasks, highest priority first, then oldest first.

    Eligible: pending, run_after due, every dependency completed, lane not paused and under its
    fleet-wide max_running, and (for paid lanes) the book's budget not spent: the sum of all its
    attempts' costs, so money spent by lost or fenced attempts counts too. Each returned
    lease carries one fresh token; an attempt row is opened for each task.
    """
    if not 1 <= limit <= MAX_BATCH:
        raise BadInput(f"claim limit must be from 1 to {MAX_BATCH}, got {limit}")
    if not 0 < lease_s <= MAX_LEASE_S:
        raise BadInput(f"lease must be above 0 and at most {MAX_LEASE_S} seconds, got {lease_s}")
    token = uuid.uuid4().hex
    cache = cache or LaneCache(ttl_s=0)
    with db.engine.begin() as conn:
        config = cache.get(conn, lanes_served)
        open_lanes = [n for n in lanes_served if n in config and not config[n]["paused"]]
        spent = _spent_books(conn) if any(config[n]["paid"] for n in open_lanes) else []
        limited = sorted(n for n in open_lanes if config[n]["max_running"] is not None)
        free = [n for n in open_lanes if config[n]["max_running"] is None]
        rows: list[sa.RowMapping] = []
        for lane in limited:  # sorted: claimers lock lanes in one order, so never deadlock
            rows += _claim_limited(conn, lane, worker_id, limit - len(rows), lease_s, token,
                                   spent if config[lane]["paid"] else [])
        for group in ([n for n in free if not config[n]["paid"]], [n for n in free if config[n]["paid"]]):
            if group and len(rows) < limit:
                rows += claim_rows(conn, worker_id=worker_id, lanes=group, limit=limit - len(rows),
                                   lease_s=lease_s, token=token,
                                   spent_books=spent if config[group[0]]["paid"] else [], free=True)
        if not rows:
            return []
        resumable = _remote_jobs(conn, [r["task_id"] for r in rows if r["attempts"] > 1])
    return [Lease.from_row(r, resumable.get(r["task_id"])) for r in rows]


def _claim_limited(conn: sa.Connection, lane: str, worker_id: str, want: int, lease_s: float,
                   token: str, spent: list[str]) -> list[sa.RowMapping]:
    """Claim from a lane with max_running: lock it, count what runs, take only the free slots."""
    if want <= 0:
        return []
    lock_lane(conn, lane)
    row = conn.execute(sa.select(lanes.c.max_running, lanes.c.paused).where(lanes.c.lane == lane)).first()
    if row is None or row.paused:
        return []
    running = conn.execute(
        sa.select(sa.func.count()).select_from(tasks)
        .where(tasks.c.status == Status.PROCESSING.value, tasks.c.lane == lane)
    ).scalar_one()
    slots = want if row.max_running is None else min(want, row.max_running - running)
    return claim_rows(conn, worker_id=worker_id, lanes=[lane], limit=slots, lease_s=lease_s, token=token,
                      spent_books=spent)


def _spent_books(conn: sa.Connection) -> list[str]:
    """Books whose paid attempts (all of them, fenced or lost included) reached their budget."""
    spent = (
        sa.select(books.c.bookcode)
        .where(books.c.budget.is_not(None))
        .where(books.c.budget <= sa.select(sa.func.coalesce(sa.func.sum(attempts.c.cost), 0.0))
               .select_from(attempts.join(tasks, tasks.c.task_id == attempts.c.task_id))
               .where(tasks.c.bookcode == books.c.bookcode).scalar_subquery())
    )
    return list(conn.execute(spent).scalars())


def _remote_jobs(conn: sa.Connection, task_ids: list[str]) -> dict[str, str]:
    """The latest remote job id an earlier attempt of each task recorded, if any."""
    if not task_ids:
        return {}
    query = (
        sa.select(attempts.c.task_id, attempts.c.remote_job_id)
        .where(attempts.c.task_id.in_(task_ids), attempts.c.remote_job_id.is_not(None))
        .order_by(attempts.c.attempt_no)
    )
    return {r.task_id: r.remote_job_id for r in conn.execute(query)}
