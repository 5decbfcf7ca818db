"""The invariant queries a chaos run (and a crash test) ends with: each must find nothing.

Lost tasks, tasks completed twice, completions not made by the current lease, attempts left
open, cost that does not match what the provider billed, and output files that do not match
their recorded checksum. Each finding is one `Violation`; an empty list means the run held.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.errors import GenerationError
from pipeline_kit.store import Store, open_store

FINISHED = ("completed", "failed")
COST_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Violation:
    check: str
    task_id: str | None
    detail: str


def check_all(db: Database, *, root: Path, billed_cost: float | None = None) -> list[Violation]:
    """Every invariant; `root` holds the check's cache, `billed_cost` is the provider's log."""
    store = open_store(db, cache=root / "data" / "check-cache")
    with db.engine.connect() as conn:
        found = (
            lost_tasks(conn)
            + completed_twice(conn)
            + not_current_lease(conn)
            + open_attempts(conn)
            + task_cost_mismatch(conn)
        )
        if billed_cost is not None:
            found += cost_vs_billing(conn, billed_cost)
        outputs = conn.execute(
            sa.select(tasks.c.task_id, tasks.c.output_path, tasks.c.result).where(
                tasks.c.status == "completed", tasks.c.output_path.is_not(None)
            )
        ).all()
    # Files are read after the transaction ends: fetching thousands of outputs takes longer than
    # a server lets a transaction sit idle (PostgreSQL's idle_in_transaction_session_timeout).
    return found + bad_files(outputs, store)


def lost_tasks(conn: sa.Connection) -> list[Violation]:
    """Tasks neither completed nor failed at the end of the run."""
    rows = conn.execute(sa.select(tasks.c.task_id, tasks.c.status).where(tasks.c.status.not_in(FINISHED)))
    return [Violation("lost", r.task_id, f"status {r.status}") for r in rows]


def completed_twice(conn: sa.Connection) -> list[Violation]:
    """Tasks with more than one completed attempt."""
    n = sa.func.count().label("n")
    rows = conn.execute(
        sa.select(attempts.c.task_id, n)
        .where(attempts.c.outcome == "completed")
        .group_by(attempts.c.task_id)
        .having(sa.func.count() > 1)
    )
    return [Violation("completed_twice", r.task_id, f"{r.n} completed attempts") for r in rows]


def not_current_lease(conn: sa.Connection) -> list[Violation]:
    """Completed tasks whose completed attempt is not the one holding the task's lease token."""
    done = attempts.alias("done")
    wrong = conn.execute(
        sa.select(tasks.c.task_id, tasks.c.lease_token, done.c.lease_token.label("attempt_token"))
        .join(done, sa.and_(done.c.task_id == tasks.c.task_id, done.c.outcome == "completed"))
        .where(sa.or_(tasks.c.lease_token.is_(None), tasks.c.lease_token != done.c.lease_token))
    )
    found = [
        Violation("not_current_lease", r.task_id, f"task token {r.lease_token}, completed by {r.attempt_token}")
        for r in wrong
    ]
    orphan = conn.execute(
        sa.select(tasks.c.task_id).where(
            tasks.c.status == "completed",
            ~sa.exists().where(attempts.c.task_id == tasks.c.task_id, attempts.c.outcome == "completed"),
        )
    )
    return found + [Violation("not_current_lease", r.task_id, "completed without a completed attempt") for r in orphan]


def open_attempts(conn: sa.Connection) -> list[Violation]:
    """Attempts with no outcome (nobody closed them: neither the worker nor the watchdog)."""
    rows = conn.execute(
        sa.select(attempts.c.task_id, attempts.c.attempt_no, attempts.c.worker_id).where(attempts.c.outcome.is_(None))
    )
    return [Violation("open_attempt", r.task_id, f"attempt {r.attempt_no} by {r.worker_id}") for r in rows]


def task_cost_mismatch(conn: sa.Connection) -> list[Violation]:
    """Finished tasks whose cost is not the sum of their attempts' cost."""
    summed = (
        sa.select(sa.func.coalesce(sa.func.sum(attempts.c.cost), 0.0))
        .where(attempts.c.task_id == tasks.c.task_id)
        .scalar_subquery()
    )
    rows = conn.execute(
        sa.select(tasks.c.task_id, tasks.c.cost, summed.label("summed")).where(tasks.c.status.in_(FINISHED))
    )
    return [
        Violation("task_cost", r.task_id, f"task cost {r.cost}, attempts sum {r.summed}")
        for r in rows
        if abs((r.cost or 0.0) - (r.summed or 0.0)) > COST_TOLERANCE
    ]


def cost_vs_billing(conn: sa.Connection, billed_cost: float) -> list[Violation]:
    """The cost booked on attempts against what the provider billed: no call unrecorded or twice."""
    booked = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(attempts.c.cost), 0.0))).scalar_one()
    if abs(float(booked) - billed_cost) > COST_TOLERANCE:
        return [
            Violation(
                "cost_vs_billing", None, f"attempts booked {float(booked):.4f}, provider billed {billed_cost:.4f}"
            )
        ]
    return []


def bad_files(rows: Sequence[sa.Row[Any]], store: Store) -> list[Violation]:
    """Of these completed outputs, those missing from the store or not matching result['sha256']."""
    found: list[Violation] = []
    for r in rows:
        expected = (r.result or {}).get("sha256")
        try:
            path = store.fetch(r.output_path, r.result or {})
        except GenerationError as exc:
            found.append(Violation("bad_file", r.task_id, str(exc)))
            continue
        if not path.is_file():
            found.append(Violation("bad_file", r.task_id, f"missing {path}"))
        elif sha256_of(path) != expected:
            found.append(Violation("bad_file", r.task_id, f"{path} does not match sha256 {expected}"))
    return found


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
