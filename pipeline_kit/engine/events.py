"""The one place the engine writes to the events table: stale writes, alerts, reclaims, heartbeat
batches and operator and reviewer verbs.

Inserted without RETURNING (the table is defined with implicit_returning off), so a worker
account needs INSERT on events and nothing else there; see security.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import routines
from pipeline_kit.db.connect import json_text
from pipeline_kit.db.driver import run_named
from pipeline_kit.db.schema import events
from pipeline_kit.db.sqltime import db_now


def record(conn: sa.Connection, kind: str, detail: Mapping[str, Any], **columns: str | None) -> None:
    """One event, stamped with the database clock, in the caller's transaction; `columns` are
    the other columns it names (task_id, worker_id, lease_token)."""
    row = {
        "kind": kind,
        "task_id": columns.get("task_id"),
        "worker_id": columns.get("worker_id"),
        "token": columns.get("lease_token"),
        "detail": json_text(dict(detail)),
    }
    if routines.enabled(conn):  # a worker account inserts nothing itself: the routine runs `event`
        routines.call(conn, "pk_event", **row)
    else:
        run_named(conn, "event", **row)


def record_each(conn: sa.Connection, kind: str, task_ids: Iterable[str], by: str, detail: Mapping[str, Any]) -> None:
    """The same event for each of `task_ids`, by `by`, in one statement."""
    if routines.enabled(conn):
        for t in task_ids:
            record(conn, kind, detail, task_id=t, worker_id=by)
        return
    conn.execute(
        sa.insert(events).values(at=db_now()),
        [{"kind": kind, "task_id": t, "worker_id": by, "detail": dict(detail)} for t in task_ids],
    )


def alert(conn: sa.Connection, task_id: str | None, worker_id: str | None, message: str) -> None:
    """Record an alert event: something a person should look at."""
    record(conn, "alert", {"message": message}, task_id=task_id, worker_id=worker_id)
