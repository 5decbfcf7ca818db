"""The benchmark's tasks: bulk enqueue through the engine, bulk seeding by SQL, the exactly-once check."""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.bench.errors import BenchFailed
from pipeline_kit.db import Database
from pipeline_kit.db.sqltime import sql_now
from pipeline_kit.engine import TaskSpec, enqueue

LANE = "default"  # unlimited, unpaid: the claim's plain path
KIND = "noop"


@dataclass(frozen=True)
class Check:
    """What the database holds after a run: every task completed exactly once, or not."""

    tasks: int
    completed_once: int  # status completed and claimed exactly once
    attempt_rows: int
    attempts_completed: int
    attempt_tasks: int  # distinct tasks among the attempt rows
    stale_events: int
    reported: int  # completions the workers themselves counted

    def exactly_once(self, *, expect_attempt_rows: bool) -> bool:
        counts = (self.attempt_rows, self.attempts_completed, self.attempt_tasks)
        rows_ok = counts == (self.tasks,) * 3 if expect_attempt_rows else self.attempt_rows == 0
        return self.completed_once == self.tasks == self.reported and rows_ok and self.stale_events == 0


def enqueue_tasks(db: Database, count: int) -> float:
    """Enqueue `count` no-op tasks with one engine.enqueue call; returns seconds taken (to commit)."""
    specs = [TaskSpec(task_id=f"bench-{i:08d}", kind=KIND, lane=LANE) for i in range(count)]
    start = time.perf_counter()
    with db.engine.begin() as conn:
        result = enqueue(conn, specs)
    elapsed = time.perf_counter() - start
    if result.created != count:
        raise BenchFailed(f"enqueue created {result.created} of {count} tasks in a fresh database")
    return elapsed


def check(db: Database, reported: int) -> Check:
    """Count what the run left behind."""
    with db.engine.connect() as conn:
        one = conn.execute(
            sa.text(
                "SELECT COUNT(*), SUM(CASE WHEN status = 'completed' AND attempts = 1 THEN 1 ELSE 0 END) FROM tasks"
            )
        ).one()
        two = conn.execute(
            sa.text(
                "SELECT COUNT(*), SUM(CASE WHEN outcome = 'completed' THEN 1 ELSE 0 END), COUNT(DISTINCT task_id) "
                "FROM attempts"
            )
        ).one()
        stale = conn.execute(sa.text("SELECT COUNT(*) FROM events WHERE kind = 'stale'")).scalar_one()
    return Check(
        tasks=int(one[0]),
        completed_once=int(one[1] or 0),
        attempt_rows=int(two[0]),
        attempts_completed=int(two[1] or 0),
        attempt_tasks=int(two[2]),
        stale_events=int(stale),
        reported=reported,
    )


def seed_rows(db: Database, *, pending: int, completed: int = 0) -> float:
    """Insert `completed` finished tasks (with their attempt rows), then `pending` ones, by SQL.

    One INSERT ... SELECT over generate_series (PostgreSQL) or a recursive CTE (SQLite); the
    engine's enqueue is far too slow for a million rows and is not what this measures.
    Returns seconds taken.
    """
    start = time.perf_counter()
    with db.engine.begin() as conn:
        if completed:
            conn.execute(sa.text(_insert_tasks(db.dialect, "completed", 1)), {"first": 1, "last": completed})
            now = sql_now(db.dialect)
            conn.execute(
                sa.text(
                    "INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at, finished_at, "
                    f"outcome, cost) SELECT task_id, 1, 'bench-history', 'history', {now}, {now}, 'completed', 0.0 "
                    "FROM tasks WHERE status = 'completed'"
                )
            )
        if pending:
            conn.execute(
                sa.text(_insert_tasks(db.dialect, "pending", 0)), {"first": completed + 1, "last": completed + pending}
            )
    return time.perf_counter() - start


def _insert_tasks(dialect: str, status: str, attempts: int) -> str:
    now = sql_now(dialect)
    finished = now if status == "completed" else "NULL"
    columns = (
        "task_id, kind, lane, status, priority, attempts, retry_base, generation, max_attempts, "
        "run_after, deps_remaining, cost, created_at, finished_at"
    )
    values = f"{{key}}, '{KIND}', '{LANE}', '{status}', 0, {attempts}, 0, 0, 3, {now}, 0, 0.0, {now}, {finished}"
    if dialect == "postgresql":
        key = "'bench-' || lpad(g::text, 8, '0')"
        return (
            f"INSERT INTO tasks ({columns}) SELECT {values.format(key=key)} "
            "FROM generate_series(CAST(:first AS bigint), CAST(:last AS bigint)) AS g"
        )
    if dialect == "sqlite":
        key = "'bench-' || printf('%08d', n)"
        return (
            f"WITH RECURSIVE seq(n) AS (SELECT :first UNION ALL SELECT n + 1 FROM seq WHERE n < :last) "
            f"INSERT INTO tasks ({columns}) SELECT {values.format(key=key)} FROM seq"
        )
    raise BenchFailed(f"bulk seeding is written for postgresql and sqlite, not {dialect}")
