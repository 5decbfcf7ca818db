"""The completion statements of each dialect, side by side: accept results guarded by the token.

Accepting a group of tasks that share a token and a result does, atomically: mark each task
completed (or awaiting_review when its book reviews that lane) only if it is still processing
under that token; book the task's total cost (every attempt's, this one's as now reported);
close the attempt as completed; count each completed task off its dependents' deps_remaining.

- PostgreSQL: one statement, the attempt and the dependents updated by data-modifying CTEs over
  the accepted rows; it returns the accepted ids.
- SQLite: UPDATE ... RETURNING the accepted ids (and whether anything waits on them), then
  close their attempts, then count them off, only if something waits.
- MariaDB (no UPDATE ... RETURNING): the guarded UPDATE's row count says whether every task was
  accepted; only then does the fast path hold (`None` otherwise: the caller rolls back and
  takes the locking path). Then close the attempts and count off dependents in SQL.

SQL is in the driver module's neutral form (:name parameters, `IN :list`); see db/driver.py.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline_kit.db import routines
from pipeline_kit.db.driver import Tx
from pipeline_kit.db.sqltime import sql_now

REVIEW_LANES = frozenset({"image"})  # lanes whose outputs wait for a person when their book reviews
_FLOAT = {"sqlite": "REAL", "postgresql": "DOUBLE PRECISION", "mysql": "DOUBLE"}


@dataclass(frozen=True)
class Finish:
    """What every task of one group is finished with."""

    token: str
    result: str | None = None  # JSON text
    output_path: str | None = None
    cost: float | None = None  # this attempt's cost as now reported (None: keep what was recorded)
    output_bytes: int | None = None
    model: str | None = None
    settings: str | None = None  # JSON text

    def params(self, ids: Sequence[str]) -> dict[str, Any]:
        return {
            "ids": list(ids),
            "token": self.token,
            "result": self.result,
            "path": self.output_path,
            "cost": self.cost,
            "bytes": self.output_bytes,
            "model": self.model,
            "settings": self.settings,
        }


_ACCEPT = (
    "UPDATE tasks SET status = CASE WHEN {reviewed} THEN 'awaiting_review' ELSE 'completed' END, "
    "result = :result, output_path = :path, finished_at = {now}, lease_expires_at = NULL, stage = 'done', "
    "progress = 1.0, last_error = NULL, cost = (SELECT COALESCE(SUM(CASE WHEN a.lease_token = :token "
    "THEN COALESCE(CAST(:cost AS {float}), a.cost) ELSE a.cost END), 0.0) FROM attempts a "
    "WHERE a.task_id = tasks.task_id) "
    "WHERE task_id IN :ids AND lease_token = :token AND status = 'processing'"
)
_CLOSE = (
    "UPDATE attempts SET outcome = 'completed', finished_at = {now}, "
    "cost = COALESCE(CAST(:cost AS {float}), cost), output_bytes = COALESCE(:bytes, output_bytes), "
    "model = COALESCE(:model, model), settings = COALESCE(:settings, settings) "
    "WHERE task_id IN :ids AND lease_token = :token AND outcome IS NULL"
)
# Each dependent loses one per dependency completed now; review-held tasks do not count yet.
COUNT_OFF = (
    "UPDATE tasks SET deps_remaining = deps_remaining - (SELECT COUNT(*) FROM task_deps d JOIN tasks s "
    "ON s.task_id = d.depends_on WHERE d.task_id = tasks.task_id AND d.depends_on IN :ids "
    "AND s.status = 'completed') WHERE task_id IN (SELECT task_id FROM task_deps WHERE depends_on IN :ids)"
)


@functools.cache
def statements(dialect: str, review_lanes: frozenset[str]) -> dict[str, str]:
    """The finish statement(s) of a dialect; results in `review_lanes` of a book with review on
    wait for a person (the lanes are code constants, written into the SQL as literals)."""
    quoted = ", ".join("'" + lane.replace("'", "''") + "'" for lane in sorted(review_lanes))
    reviewed = f"lane IN ({quoted}) AND bookcode IN (SELECT bookcode FROM books WHERE review)" if quoted else "1 = 0"
    fmt = functools.partial(str.format, now=sql_now(dialect), float=_FLOAT[dialect], reviewed=reviewed)
    if dialect == "postgresql":
        return {
            "finish": fmt(
                f"WITH done AS ({_ACCEPT} RETURNING task_id, status), "
                "closed AS (UPDATE attempts SET outcome = 'completed', finished_at = {now}, "
                "cost = COALESCE(CAST(:cost AS {float}), attempts.cost), "
                "output_bytes = COALESCE(:bytes, attempts.output_bytes), model = COALESCE(:model, attempts.model), "
                "settings = COALESCE(:settings, attempts.settings) FROM done "
                "WHERE attempts.task_id = done.task_id AND attempts.lease_token = :token "
                "AND attempts.outcome IS NULL), "
                "counted AS (UPDATE tasks SET deps_remaining = tasks.deps_remaining - w.n FROM ("
                "SELECT d.task_id, COUNT(*) AS n FROM task_deps d JOIN done ON done.task_id = d.depends_on "
                "WHERE done.status = 'completed' GROUP BY d.task_id) AS w WHERE tasks.task_id = w.task_id) "
                "SELECT task_id FROM done"
            )
        }
    if dialect == "sqlite":
        return {
            "accept": fmt(
                f"{_ACCEPT} RETURNING task_id, status = 'completed' AND EXISTS "
                "(SELECT 1 FROM task_deps WHERE depends_on = tasks.task_id) AS waited_on"
            ),
            "close": fmt(_CLOSE),
        }
    return {"accept": fmt(_ACCEPT), "close": fmt(_CLOSE)}


def finish(
    tx: Tx, ids: Sequence[str], how: Finish, review_lanes: frozenset[str], *, routine: bool = False
) -> list[str] | None:
    """Accept what is still held among `ids`; the accepted ids (None: MariaDB could not tell).
    `routine`: through the worker account's routine (the same statements, db/routines.py)."""
    params = how.params(ids)
    if routine:
        return tx.values(routines.call_sql(tx.dialect, "pk_finish"), routines.arguments(tx.dialect, params))
    sql = statements(tx.dialect, review_lanes)
    if "finish" in sql:
        return tx.values(sql["finish"], params)
    if tx.dialect == "sqlite":
        rows = tx.rows(sql["accept"], params)
        accepted = [r["task_id"] for r in rows]
        waited_on = [r["task_id"] for r in rows if r["waited_on"]]
    else:
        if tx.run(sql["accept"], params) != len(ids):
            return None
        accepted = waited_on = list(ids)
    if accepted:
        tx.run(sql["close"], {**params, "ids": accepted}, defer=True)  # MariaDB: sent with the COMMIT
    if waited_on:
        count_off(tx, waited_on, defer=True)
    return accepted


def count_off(tx: Tx, ids: Sequence[str], *, defer: bool = False) -> None:
    """Count tasks that are now `completed` off their dependents' deps_remaining (once each)."""
    tx.run(COUNT_OFF, {"ids": list(ids)}, defer=defer)
