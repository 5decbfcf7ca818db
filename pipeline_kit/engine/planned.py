"""Tasks already planned, as the planner re-reads and rewrites them in its own transaction.

A split, an edit of the cast or the places, or a director pass finds which of a book's tasks
exist, what they were planned with, and rewrites their params; those reads and writes of the
engine's tables are here, on the caller's connection (the split's transaction). Params carry no
status: re-queueing what changed is `operator.reset_tasks`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.driver import within
from pipeline_kit.db.schema import task_deps, tasks
from pipeline_kit.engine.queries import chunks


def task_shots(conn: sa.Connection, task_ids: Collection[str]) -> dict[str, str | None]:
    """task id -> its shot (None: a book's task), for those of `task_ids` that exist (through the
    driver: a split asks this of every shot's tasks, and SQLAlchemy's IN lists cost more than the query)."""
    with within(conn, conn.dialect.name) as tx:
        return {
            r["task_id"]: r["shot_id"]
            for ids in chunks(task_ids)
            for r in tx.rows("SELECT task_id, shot_id FROM tasks WHERE task_id IN :ids", {"ids": ids})
        }


def task_params(conn: sa.Connection, task_ids: Collection[str]) -> dict[str, dict[str, Any]]:
    """task id -> the params it was planned with ({} for none), for those of `task_ids` that exist."""
    return {
        r.task_id: dict(r.params or {})
        for ids in chunks(task_ids)
        for r in conn.execute(sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.task_id.in_(ids)))
    }


def set_params(conn: sa.Connection, task_id: str, params: Mapping[str, Any]) -> bool:
    """Rewrite the params of `task_id`; False when there is no such task."""
    return bool(conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(params=dict(params))).rowcount)


def dependencies(conn: sa.Connection, task_id: str) -> list[str]:
    """The tasks `task_id` waits on (directly)."""
    return list(conn.execute(sa.select(task_deps.c.depends_on).where(task_deps.c.task_id == task_id)).scalars())
