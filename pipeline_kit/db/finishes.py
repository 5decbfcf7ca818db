"""Completion: accept results guarded by the token, with a database's finish statements
(db/sql/DATABASE.sql).

Accepting a group of tasks that share a token and a result does, atomically: mark each task
completed (or awaiting_review when its book reviews that lane) only if it is still processing
under that token; book the task's total cost (every attempt's, this one's as now reported);
close the attempt as completed, naming the blobs its output is made of (`store gc` spares them
even if the task row is rewritten later); count each completed task off its dependents'
deps_remaining.

- PostgreSQL: one statement (`finish`); it returns the accepted ids.
- SQLite: `accept` returns the accepted ids and whether anything waits on them; then `close`
  their attempts and `count_off` them, only if something waits.
- MariaDB (no UPDATE ... RETURNING): `accept`'s row count says whether every task was accepted;
  only then does the fast path hold (`None` otherwise: the caller rolls back and takes the
  locking path). Then `close` the attempts and `count_off` dependents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline_kit.db import dialects, routines
from pipeline_kit.db.driver import Tx

# Lanes whose outputs wait for a person when their book reviews: written into each file's
# accept as a literal (a test holds the files to this set).
REVIEW_LANES = frozenset({"image"})


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
    blobs: str | None = None  # the checksums the output is made of, space-separated: named on the attempt

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
            "blobs": self.blobs,
        }


def finish(tx: Tx, ids: Sequence[str], how: Finish, *, routine: bool = False) -> list[str] | None:
    """Accept what is still held among `ids`; the accepted ids (None: MariaDB could not tell).
    `routine`: through the worker account's routine (the same statements, db/routines.py)."""
    params = how.params(ids)
    if routine:
        return tx.values(routines.call_sql(tx.dialect, "pk_finish"), routines.arguments(tx.dialect, params))
    dialect = dialects.of(tx.dialect)
    if dialect.finish_one_statement:
        return tx.values(dialect.sql("finish"), params)
    accept = dialect.sql("accept")
    if dialect.returning:  # the accept returns the accepted rows, and whether anything waits on each
        rows = tx.rows(accept, params)
        accepted = [r["task_id"] for r in rows]
        waited_on = [r["task_id"] for r in rows if r["waited_on"]]
    else:
        if tx.run(accept, params) != len(ids):
            return None
        accepted = waited_on = list(ids)
    if accepted:
        tx.run(dialect.sql("close"), {**params, "ids": accepted}, defer=True)  # MariaDB: sent with the COMMIT
    if waited_on:
        count_off(tx, waited_on, defer=True)
    return accepted


def count_off(tx: Tx, ids: Sequence[str], *, defer: bool = False) -> None:
    """Count tasks that are now `completed` off their dependents' deps_remaining (once each)."""
    tx.run(dialects.of(tx.dialect).sql("count_off"), {"ids": list(ids)}, defer=defer)
