"""Claim: run a database's claim statements (db/sql/DATABASE.sql) inside the caller's short
transaction.

Every database does the same: pick up to `limit` eligible rows of the given lanes in
priority-then-FIFO order, mark them processing under one fresh lease token with an expiry from
the database clock, open one attempt row for each, and return them. How differs, and each
file says it beside its statements: PostgreSQL in one statement (`claim_and_open`), SQLite by
UPDATE ... RETURNING and then the attempts (`claim`, `open_attempts`), MariaDB, which has no
UPDATE ... RETURNING, by locking the ids, updating them and reading them back (`lock`, `update`,
`read_back`, `open_attempts`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline_kit.db import dialects, routines
from pipeline_kit.db.driver import Tx, json_value, time_value

COLUMNS = (
    "id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at"
)
_STEPS = ("claim_and_open", "claim", "lock", "update", "read_back", "open_attempts")


@functools.cache
def statements(
    dialect: str,
    limit: int | None,
    *,
    spent: bool = False,
    free: bool = False,
    skip: bool = False,
    history: bool = True,
) -> dict[str, str]:
    """The claim statements of a database taking up to `limit` rows, with or without the
    spent-budget filter (`spent`), the gate for lanes claimed without their row lock (`free`:
    unpaused, unlimited, checked now) and the paused providers' kinds left out (`skip`);
    without `history`, the minimal loop's (no attempt rows: the benchmark's ceiling). A `limit`
    of None leaves it the :limit parameter (a routine's).

    The limit is written into the text, not bound: PostgreSQL reuses a prepared statement's
    generic plan only if its estimate matches the custom plans', which it never does for an
    unknown LIMIT, so a bound limit made it plan every claim afresh (a fifth of its CPU).
    """
    found = dialects.of(dialect).statements
    steps = [n for n in _STEPS if n in found and (history or n not in ("claim_and_open", "open_attempts"))]
    if "claim_and_open" in steps:
        steps.remove("claim")
    wanted = {k for k, on in {"spent": spent, "free": free, "skip": skip}.items() if on}
    missing = wanted - set().union(*(found[n].options for n in steps))
    if missing:
        raise KeyError(f"{dialect}'s claim has no {', '.join(sorted(missing))} filter")
    return {n: found[n].sql(limit=limit, **dict.fromkeys(wanted & found[n].options, True)) for n in steps}


def claim_rows(
    tx: Tx,
    *,
    worker_id: str,
    lanes: Sequence[str],
    limit: int,
    lease_s: float,
    token: str,
    spent_books: Sequence[str] = (),
    skip_kinds: Sequence[str] = (),
    free: bool = False,
    routine: bool = False,
) -> list[dict[str, Any]]:
    """Claim up to `limit` eligible tasks of `lanes` (none of `spent_books`, none of `skip_kinds`),
    opening an attempt row for each; the rows as the driver returns them (see `decoded`).
    `routine`: through the worker account's routine instead of plain SQL."""
    if limit <= 0 or not lanes:
        return []
    params: dict[str, Any] = {"worker_id": worker_id, "token": token, "lease_s": float(lease_s), "lanes": list(lanes)}
    if spent_books:
        params["spent"] = list(spent_books)
    if skip_kinds:
        params["skip"] = list(skip_kinds)
    if routine:  # a worker account: the same statement, in the owner's routine (db/routines.py)
        args = {**params, "limit": limit, "spent": list(spent_books), "skip": list(skip_kinds), "free": free}
        return tx.rows(routines.call_sql(tx.dialect, "pk_claim"), routines.arguments(tx.dialect, args))
    sql = statements(tx.dialect, limit, spent=bool(spent_books), free=free, skip=bool(skip_kinds))
    return run_claim(tx, sql, params)


def decoded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Claimed rows in claim order, JSON and times decoded: done after the commit, so that
    SQLite's write lock is held only while SQL runs."""
    expiry: dict[Any, Any] = {}  # the rows of one claim statement share one expiry: parse it once
    for r in rows:
        at = r["lease_expires_at"]
        if at not in expiry:
            expiry[at] = time_value(at)
        r["lease_expires_at"], r["params"] = expiry[at], json_value(r["params"])
    return sorted(rows, key=lambda r: (-r["priority"], r["id"]))


def run_claim(tx: Tx, sql: Mapping[str, str], params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Execute a database's claim statements (from `statements`): the claimed rows as the driver
    returns them, with one attempt row opened for each unless `statements` left that out."""
    if "claim_and_open" in sql:
        return tx.rows(sql["claim_and_open"], params)
    if "claim" in sql:
        rows = tx.rows(sql["claim"], params)
    else:
        ids = tx.values(sql["lock"], params)
        rows = []
        if ids:
            tx.run(sql["update"], {**params, "ids": ids}, defer=True)  # sent with the read-back
            rows = tx.rows(sql["read_back"], {"ids": ids, "token": params["token"]})
    if "open_attempts" in sql and rows:
        tx.run(sql["open_attempts"], {"ids": [r["id"] for r in rows], "token": params["token"]}, defer=True)
    return rows


def lock_lane(tx: Tx, lane: str) -> dict[str, Any] | None:
    """Hold the lane's lock until the transaction ends (the file's `lock_lane`); its limit and pause."""
    rows = tx.rows(dialects.of(tx.dialect).sql("lock_lane"), {"lane": lane})
    return rows[0] if rows else None
