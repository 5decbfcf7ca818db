"""The claim statement of each dialect, side by side: the one place where the engines differ.

Every variant does the same thing inside the caller's (short) transaction: pick up to `limit`
eligible rows of the given lanes in priority-then-FIFO order, mark them processing under one
fresh lease token with an expiry from the database clock, open one attempt row for each, and
return them.

- SQLite ignores FOR UPDATE; the transaction began IMMEDIATE, so it already holds the only
  write lock. INDEXED BY pins the partial index: a stale ANALYZE cannot turn the claim into a
  table scan.
- PostgreSQL does it in one statement: UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED)
  RETURNING, with the attempts inserted by a data-modifying CTE over the returned rows.
- MariaDB has SKIP LOCKED (>= 10.6) but no UPDATE ... RETURNING: lock the ids, update them,
  read them back by id and token.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.db.sqltime import db_now, sql_now, sql_now_plus

COLUMNS = (
    "id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, "
    "lease_token, lease_expires_at"
)
_SET = (
    "status = 'processing', worker_id = :worker_id, lease_token = :token, "
    "lease_expires_at = {expires}, heartbeat_at = {now}, stage = 'claimed', progress = NULL, "
    "attempts = attempts + 1"
)
_ELIGIBLE = (
    "status = 'pending' AND deps_remaining = 0 AND run_after <= {now} AND lane IN :lanes{books}{gate} "
    "ORDER BY priority DESC, id LIMIT :limit"
)
# Lanes claimed without their row lock must still be unpaused and unlimited at this instant: a
# worker's cached lane settings may be a second old, the lanes table is not.
_FREE_GATE = " AND lane IN (SELECT lane FROM lanes WHERE NOT paused AND max_running IS NULL)"
# Only when some book's budget is spent: its tasks in paid lanes wait.
_NOT_SPENT = " AND (bookcode IS NULL OR bookcode NOT IN :spent)"


def _fmt(template: str, dialect: str, books: bool, free: bool = False) -> str:
    return template.format(now=sql_now(dialect), expires=sql_now_plus(dialect, ":lease_s"),
                           books=_NOT_SPENT if books else "", gate=_FREE_GATE if free else "")


def _text(sql: str, *, returns: bool = True) -> Any:
    """A claim statement; returned columns decode like the table's (JSON, timestamps)."""
    stmt = sa.text(sql).bindparams(*(sa.bindparam(n, expanding=True) for n in ("lanes", "spent", "ids")
                                     if f":{n}" in sql))
    if returns:
        return stmt.columns(params=tasks.c.params.type, lease_expires_at=tasks.c.lease_expires_at.type)
    return stmt


@functools.cache
def statements(dialect: str, books: bool, free: bool = False) -> dict[str, Any]:
    """The claim statement(s) of a dialect, with or without the spent-budget filter; `free`
    adds the gate for lanes claimed without their row lock (unpaused, unlimited, checked now)."""
    if dialect == "sqlite":
        return {"claim": _text(_fmt(
            f"UPDATE tasks SET {_SET} WHERE id IN ("
            f"SELECT id FROM tasks INDEXED BY ix_tasks_eligible WHERE {_ELIGIBLE}) "
            f"RETURNING {COLUMNS}", "sqlite", books, free))}
    if dialect == "postgresql":
        claim = (f"UPDATE tasks SET {_SET} FROM ("
                 f"SELECT id AS picked FROM tasks WHERE {_ELIGIBLE} FOR UPDATE SKIP LOCKED) AS c "
                 f"WHERE tasks.id = c.picked RETURNING {COLUMNS}")
        return {
            "claim": _text(_fmt(claim, "postgresql", books, free)),  # the bare claim (the bench's raw ceiling)
            "claim_and_open": _text(_fmt(
                f"WITH claimed AS ({claim}), "
                f"opened AS (INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at) "
                f"SELECT task_id, attempts, :worker_id, :token, {{now}} FROM claimed) "
                f"SELECT {COLUMNS} FROM claimed", "postgresql", books, free)),
        }
    return {
        "lock": _text(_fmt(f"SELECT id FROM tasks WHERE {_ELIGIBLE} FOR UPDATE SKIP LOCKED", "mysql", books, free),
                      returns=False),
        "update": _text(_fmt(f"UPDATE tasks SET {_SET} WHERE id IN :ids", "mysql", books), returns=False),
        "read_back": _text(f"SELECT {COLUMNS} FROM tasks WHERE id IN :ids AND lease_token = :token"),
    }


# Row lock on a lane, held to the end of the claim transaction, so that counting its running
# tasks and claiming more is atomic across all machines. SQLite's IMMEDIATE lock already is.
LOCK_LANE = {
    "sqlite": "SELECT lane FROM lanes WHERE lane = :lane",
    "postgresql": "SELECT lane FROM lanes WHERE lane = :lane FOR UPDATE",
    "mysql": "SELECT lane FROM lanes WHERE lane = :lane FOR UPDATE",
}


def claim_rows(
    conn: sa.Connection,
    *,
    worker_id: str,
    lanes: Sequence[str],
    limit: int,
    lease_s: float,
    token: str,
    spent_books: Sequence[str] = (),
    free: bool = False,
) -> list[sa.RowMapping]:
    """Claim up to `limit` eligible tasks of `lanes` (none of `spent_books`), opening an attempt
    row for each; rows come back in claim order."""
    if limit <= 0 or not lanes:
        return []
    params: dict[str, Any] = {
        "worker_id": worker_id,
        "token": token,
        "lease_s": float(lease_s),
        "lanes": list(lanes),
        "limit": int(limit),
    }
    if spent_books:
        params["spent"] = list(spent_books)
    dialect = "mysql" if conn.dialect.name in ("mysql", "mariadb") else conn.dialect.name
    sql = statements(dialect, bool(spent_books), free)
    if "claim_and_open" in sql:
        rows = conn.execute(sql["claim_and_open"], params).mappings().all()
        return sorted(rows, key=lambda r: (-r["priority"], r["id"]))
    if "claim" in sql:
        rows = conn.execute(sql["claim"], params).mappings().all()
    else:
        ids = list(conn.execute(sql["lock"], params).scalars())
        if not ids:
            return []
        conn.execute(sql["update"], {**params, "ids": ids})
        rows = conn.execute(sql["read_back"], {"ids": ids, "token": token}).mappings().all()
    if rows:
        conn.execute(_OPEN_ATTEMPTS, [{"task_id": r["task_id"], "attempt_no": r["attempts"],
                                       "worker_id": worker_id, "lease_token": token} for r in rows])
    return sorted(rows, key=lambda r: (-r["priority"], r["id"]))


_OPEN_ATTEMPTS = sa.insert(attempts).values(claimed_at=db_now())  # built once: every claim runs it


def lock_lane(conn: sa.Connection, lane: str) -> None:
    """Hold the lane's row lock until the transaction ends (see LOCK_LANE)."""
    family = "mysql" if conn.dialect.name in ("mysql", "mariadb") else conn.dialect.name
    conn.execute(sa.text(LOCK_LANE[family]), {"lane": lane})
