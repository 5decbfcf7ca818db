"""The claim statement of each dialect, side by side: the one place where the engines differ.

Every variant does the same thing inside the caller's (short) transaction: pick up to `limit`
eligible rows of the given lanes in priority-then-FIFO order, mark them processing under one
fresh lease token with an expiry from the database clock, open one attempt row for each, and
return them.

- SQLite ignores FOR UPDATE; the transaction began IMMEDIATE, so it already holds the only
  write lock. INDEXED BY pins the partial index: a stale ANALYZE cannot turn the claim into a
  table scan. The attempts are opened by a second INSERT ... SELECT.
- PostgreSQL does it in one statement: UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED)
  RETURNING, with the attempts inserted by a data-modifying CTE over the returned rows.
- MariaDB has SKIP LOCKED (>= 10.6) but no UPDATE ... RETURNING: lock the ids, update them,
  read them back by id and token, then open the attempts.

SQL is in the driver module's neutral form (:name parameters, `IN :list`); see db/driver.py.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline_kit.db import routines
from pipeline_kit.db.driver import Tx, json_value, time_value
from pipeline_kit.db.sqltime import sql_now, sql_now_plus

COLUMNS = (
    "id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at"
)
_SET = (
    "status = 'processing', worker_id = :worker_id, lease_token = :token, "
    "lease_expires_at = {expires}, heartbeat_at = {now}, stage = 'claimed', progress = NULL, "
    "attempts = attempts + 1"
)
_ELIGIBLE = (
    "status = 'pending' AND deps_remaining = 0 AND run_after <= {now} AND lane IN :lanes{books}{kinds}{gate} "
    "ORDER BY priority DESC, id LIMIT {limit}"
)
# Lanes claimed without their row lock must still be unpaused and unlimited at this instant: a
# worker's cached lane settings may be a second old, the lanes table is not. Uncorrelated, so it
# is checked once per claim (a one-time filter), not joined per row: a join made PostgreSQL
# scan and sort every eligible row instead of reading the first few off the index. If any of
# the lanes changed, the claim takes nothing until the cache is re-read.
_FREE_GATE = " AND NOT EXISTS (SELECT 1 FROM lanes WHERE lane IN :lanes AND (paused OR max_running IS NOT NULL))"
# Only when some book's budget is spent: its tasks in paid lanes wait.
_NOT_SPENT = " AND (bookcode IS NULL OR bookcode NOT IN :spent)"
# Only while a provider is paused for this worker (unreachable, or refusing calls): the kinds it
# makes wait, and the worker takes the rest of its lanes' work.
_NOT_PAUSED = " AND kind NOT IN :skip"
_OPEN_ATTEMPTS = (
    "INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at) "
    "SELECT task_id, attempts, worker_id, lease_token, {now} FROM tasks WHERE task_id IN :ids AND lease_token = :token"
)


def _fmt(
    template: str, dialect: str, limit: int | str = 0, books: bool = False, free: bool = False, kinds: bool = False
) -> str:
    return template.format(
        now=sql_now(dialect),
        expires=sql_now_plus(dialect, ":lease_s"),
        limit=limit if isinstance(limit, str) else int(limit),  # str: a routine's parameter
        books=_NOT_SPENT if books else "",
        kinds=_NOT_PAUSED if kinds else "",
        gate=_FREE_GATE if free else "",
    )


@functools.cache
def statements(
    dialect: str, limit: int | str, *, books: bool = False, free: bool = False, kinds: bool = False
) -> dict[str, str]:
    """The claim statement(s) of a dialect taking up to `limit` rows, with or without the
    spent-budget filter; `free` adds the gate for lanes claimed without their row lock
    (unpaused, unlimited, checked now); `kinds` leaves out the kinds of paused providers.

    The limit is written into the text, not bound: PostgreSQL reuses a prepared statement's
    generic plan only if its estimate matches the custom plans', which it never does for an
    unknown LIMIT, so a bound limit made it plan every claim afresh (a fifth of its CPU).
    """
    if dialect == "sqlite":
        return {
            "claim": _fmt(
                f"UPDATE tasks SET {_SET} WHERE id IN ("
                f"SELECT id FROM tasks INDEXED BY ix_tasks_eligible WHERE {_ELIGIBLE}) "
                f"RETURNING {COLUMNS}",
                "sqlite",
                limit,
                books,
                free,
                kinds,
            ),
            "open": _fmt(_OPEN_ATTEMPTS, "sqlite"),
        }
    if dialect == "postgresql":
        claim = (
            f"UPDATE tasks SET {_SET} FROM ("
            f"SELECT id AS picked FROM tasks WHERE {_ELIGIBLE} FOR UPDATE SKIP LOCKED) AS c "
            f"WHERE tasks.id = c.picked RETURNING {COLUMNS}"
        )
        return {
            "claim": _fmt(claim, "postgresql", limit, books, free, kinds),  # the bare claim (the bench's raw ceiling)
            "claim_and_open": _fmt(
                f"WITH claimed AS ({claim}), "
                f"opened AS (INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at) "
                f"SELECT task_id, attempts, :worker_id, :token, {{now}} FROM claimed) "
                f"SELECT {COLUMNS} FROM claimed",
                "postgresql",
                limit,
                books,
                free,
                kinds,
            ),
        }
    return {
        "lock": _fmt(
            f"SELECT id FROM tasks WHERE {_ELIGIBLE} FOR UPDATE SKIP LOCKED", "mysql", limit, books, free, kinds
        ),
        "update": _fmt(f"UPDATE tasks SET {_SET} WHERE id IN :ids", "mysql"),
        "read_back": f"SELECT {COLUMNS} FROM tasks WHERE id IN :ids AND lease_token = :token",
        "open": _fmt(_OPEN_ATTEMPTS, "mysql"),
    }


# A lock on a lane, held to the end of the claim transaction, so that counting its running
# tasks and claiming more is atomic across all machines. PostgreSQL takes a transaction-scoped
# advisory lock named after the lane (its FOR UPDATE would need a write privilege on lanes, which
# a worker account must not have; the CTE is materialised, so the lock is taken); MariaDB's
# FOR UPDATE needs only SELECT; SQLite's IMMEDIATE lock already is one.
LANE_LOCKS = 0x706B  # "pk": the first key of the lane locks, the lane's hash the second
LOCK_LANE = {
    "sqlite": "SELECT max_running, paused FROM lanes WHERE lane = :lane",
    "postgresql": (
        f"WITH locked AS (SELECT pg_advisory_xact_lock({LANE_LOCKS}, hashtext(:lane))) "
        "SELECT max_running, paused FROM lanes, locked WHERE lane = :lane"
    ),
    "mysql": "SELECT max_running, paused FROM lanes WHERE lane = :lane FOR UPDATE",
}


# What a claim reads besides the claim itself: the lanes' settings (cached by the worker), a
# limited lane's running count (under its lock), the books whose budget is spent, and the remote
# jobs earlier attempts of re-claimed tasks left to resume.

LANE_SETTINGS = "SELECT lane, max_running, paused, paid FROM lanes WHERE lane IN :lanes"
RUNNING = "SELECT COUNT(*) FROM tasks WHERE status = 'processing' AND lane = :lane"
SPENT_BOOKS = (
    "SELECT bookcode FROM books WHERE budget IS NOT NULL AND budget <= ("
    "SELECT COALESCE(SUM(a.cost), 0.0) FROM attempts a JOIN tasks t ON t.task_id = a.task_id "
    "WHERE t.bookcode = books.bookcode)"
)
REMOTE_JOBS = (
    "SELECT task_id, remote_job_id FROM attempts WHERE task_id IN :ids AND remote_job_id IS NOT NULL "
    "ORDER BY attempt_no"
)


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
    sql = statements(tx.dialect, limit, books=bool(spent_books), free=free, kinds=bool(skip_kinds))
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


def run_claim(
    tx: Tx, sql: Mapping[str, str], params: Mapping[str, Any], *, history: bool = True
) -> list[dict[str, Any]]:
    """Execute a dialect's claim statements (from `statements`): the claimed rows as the driver
    returns them, and, with `history`, one attempt row opened for each (the bench's minimal
    ceiling runs it without)."""
    if history and "claim_and_open" in sql:
        return tx.rows(sql["claim_and_open"], params)
    if "claim" in sql:
        rows = tx.rows(sql["claim"], params)
    else:
        ids = tx.values(sql["lock"], params)
        rows = []
        if ids:
            tx.run(sql["update"], {**params, "ids": ids}, defer=True)  # sent with the read-back
            rows = tx.rows(sql["read_back"], {"ids": ids, "token": params["token"]})
    if history and rows:
        tx.run(sql["open"], {"ids": [r["task_id"] for r in rows], "token": params["token"]}, defer=True)
    return rows


def lock_lane(tx: Tx, lane: str) -> dict[str, Any] | None:
    """Hold the lane's row lock until the transaction ends (see LOCK_LANE); its limit and pause."""
    rows = tx.rows(LOCK_LANE[tx.dialect], {"lane": lane})
    return rows[0] if rows else None
