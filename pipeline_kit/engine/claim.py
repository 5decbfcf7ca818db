"""Claim: lease eligible tasks to a worker in one short transaction."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline_kit.db import dialects, routines
from pipeline_kit.db.claims import claim_rows, decoded, lock_lane
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import Tx, transaction
from pipeline_kit.engine.models import Lease
from pipeline_kit.errors import BadInput

MAX_BATCH = 1000
MAX_LEASE_S = 7 * 86_400


@dataclass(frozen=True)
class Plan:
    """Which lanes a claim takes under their row lock (limited, in lock order) and which in
    one statement per group (unlimited: unpaid, then paid), and whether any is paid."""

    limited: tuple[tuple[str, bool], ...]  # (lane, paid), sorted: claimers lock lanes in one order
    free: tuple[tuple[tuple[str, ...], bool], ...]  # (lanes, paid)
    paid: bool

    @classmethod
    def of(cls, config: dict[str, dict[str, Any]], lanes_served: Sequence[str]) -> Plan:
        open_lanes = [n for n in lanes_served if n in config and not config[n]["paused"]]
        limited = tuple(
            sorted((n, bool(config[n]["paid"])) for n in open_lanes if config[n]["max_running"] is not None)
        )
        unlimited: dict[bool, list[str]] = {False: [], True: []}
        for n in open_lanes:
            if config[n]["max_running"] is None:
                unlimited[bool(config[n]["paid"])].append(n)
        free = tuple((tuple(group), paid) for paid, group in unlimited.items() if group)
        return cls(limited, free, any(config[n]["paid"] for n in open_lanes))


@dataclass
class LaneCache:
    """Which lanes are limited, paused or paid, and which books spent their budget, re-read
    every `ttl_s` seconds.

    Lanes: only an optimisation. A limited lane is always re-checked under its row lock, and the
    unlimited path's SQL re-checks `paused`/`max_running` itself (db/claims.py's gate), so a
    stale cache never lets a claim break a limit or take from a paused lane; it can only delay
    claiming from a lane that was just resumed or given a limit.
    Budgets: summing a book's attempts costs a read per attempt, too much for every claim; a
    budget can be overrun by what the fleet claims within `ttl_s`, no more than it already is by
    the calls in flight when it is reached.
    """

    ttl_s: float = 2.0
    _rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    _read_at: float = -1e9
    _spent: list[str] = field(default_factory=list)
    _spent_at: float = -1e9
    _plans: dict[tuple[str, ...], Plan] = field(default_factory=dict)  # by lanes served, until the next read

    def get(self, db: Database, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        if time.monotonic() - self._read_at > self.ttl_s or not set(names) <= self._rows.keys():
            with transaction(db, single=True) as tx:
                rows = tx.rows(dialects.of(db.dialect).sql("lane_settings"), {"lanes": list(names)})
            self._rows = {r["lane"]: r for r in rows}
            self._read_at = time.monotonic()
            self._plans = {}
        return self._rows

    def plan(self, db: Database, lanes_served: Sequence[str]) -> Plan:
        """How a claim of `lanes_served` goes under the current settings (worked out once per read)."""
        config = self.get(db, lanes_served)
        key = tuple(lanes_served)
        if key not in self._plans:
            self._plans[key] = Plan.of(config, lanes_served)
        return self._plans[key]

    def spent_books(self, db: Database) -> list[str]:
        """Books whose paid attempts (all of them, fenced or lost included) reached their budget."""
        if time.monotonic() - self._spent_at > self.ttl_s:
            with transaction(db, single=True) as tx:
                self._spent = tx.values(dialects.of(db.dialect).sql("spent_books"))
            self._spent_at = time.monotonic()
        return self._spent


def claim(
    db: Database,
    worker_id: str,
    lanes_served: Sequence[str],
    *,
    limit: int = 1,
    lease_s: float = 60.0,
    cache: LaneCache | None = None,
    skip_kinds: Sequence[str] = (),
) -> list[Lease]:
    """Lease up to `limit` eligible tasks, highest priority first, then oldest first.

    Eligible: pending, run_after due, every dependency completed, lane not paused and under its
    fleet-wide max_running, and (for paid lanes) the book's budget not spent: the sum of all its
    attempts' costs, so money spent by lost or fenced attempts counts too. Each returned
    lease carries one fresh token; an attempt row is opened for each task. Tasks of `skip_kinds`
    (made by a provider paused for this worker) are left for later.
    """
    if not 1 <= limit <= MAX_BATCH:
        raise BadInput(f"claim limit must be from 1 to {MAX_BATCH}, got {limit}")
    if not 0 < lease_s <= MAX_LEASE_S:
        raise BadInput(f"lease must be above 0 and at most {MAX_LEASE_S} seconds, got {lease_s}")
    cache = cache or LaneCache(ttl_s=0)
    plan = cache.plan(db, lanes_served)
    if not plan.limited and not plan.free:
        return []
    spent = cache.spent_books(db) if plan.paid else []
    token = secrets.token_hex(16)  # 32 random hex digits, as uuid4().hex but a fifth of its cost
    routine = routines.enabled(db)
    rows: list[dict[str, Any]] = []
    one_statement = dialects.of(db.dialect).claim_one_statement and not plan.limited and len(plan.free) == 1
    with transaction(db, single=one_statement) as tx:
        for lane, paid in plan.limited:
            rows += _claim_limited(
                tx, lane, worker_id, limit - len(rows), lease_s, token, spent if paid else [], skip_kinds, routine
            )
        for group, paid in plan.free:
            if len(rows) < limit:
                rows += claim_rows(
                    tx,
                    worker_id=worker_id,
                    lanes=group,
                    limit=limit - len(rows),
                    lease_s=lease_s,
                    token=token,
                    spent_books=spent if paid else [],
                    skip_kinds=skip_kinds,
                    free=True,
                    routine=routine,
                )
    rows = decoded(rows)
    retried = [r["task_id"] for r in rows if r["attempts"] > 1]
    resumable = _remote_jobs(db, retried) if retried else {}
    return [Lease.from_row(r, resumable.get(r["task_id"])) for r in rows]


def _claim_limited(
    tx: Tx,
    lane: str,
    worker_id: str,
    want: int,
    lease_s: float,
    token: str,
    spent: list[str],
    skip: Sequence[str],
    routine: bool,
) -> list[dict[str, Any]]:
    """Claim from a lane with max_running: lock it, count what runs, take only the free slots."""
    if want <= 0:
        return []
    row = lock_lane(tx, lane)
    if row is None or row["paused"]:
        return []
    running = tx.values(dialects.of(tx.dialect).sql("running"), {"lane": lane})[0]
    slots = want if row["max_running"] is None else min(want, row["max_running"] - running)
    return claim_rows(
        tx,
        worker_id=worker_id,
        lanes=[lane],
        limit=slots,
        lease_s=lease_s,
        token=token,
        spent_books=spent,
        skip_kinds=skip,
        routine=routine,
    )


def _remote_jobs(db: Database, task_ids: list[str]) -> dict[str, str]:
    """The latest remote job id an earlier attempt of each task recorded, if any."""
    with transaction(db, single=True) as tx:
        return {
            r["task_id"]: r["remote_job_id"]
            for r in tx.rows(dialects.of(db.dialect).sql("remote_jobs"), {"ids": task_ids})
        }
