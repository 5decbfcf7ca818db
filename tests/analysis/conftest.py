"""A hand-built run log whose every metric is worked out by hand in the tests.

Timeline (minutes after T0; tasks t1..t6 are book bk1, t7 is book bk2, all created at T0):
  t1 image/frame s1  pc-a  00-10 completed cost 1.0
  t2 image/frame s2  pc-b  00-05 retried (timeout) cost 0.5; pc-b 05-20 completed cost 1.0
  t3 video/clip  s1  pc-a  10-30 lost (reclaimed at 40 by pc-b); pc-b 40-70 completed cost 2.0
  t4 image/frame s3  pc-a  60-80 completed cost 1.0
  t5 image/frame s3  pc-b  70-75 failed (bad_request) cost 0
  t6 video/clip  s2  pending, never claimed
  t7 image/frame x1  pc-a  80-90 completed cost 3.0
Workers pc-a, pc-b, pc-c (pc-c registered, never worked). Heartbeats: pc-a at 0,1,2,3,13;
pc-b at 0,2,4.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import numpy as np
import pytest
import sqlalchemy as sa

from pipeline_kit.analysis.simulate import SimResult
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, books, events, tasks, workers

T0 = dt.datetime(2026, 1, 1, 0, 0, 0)


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


TASKS = [
    # task_id, book, shot, kind, lane, status, finished minute
    ("t1", "bk1", "s1", "frame", "image", "completed", 10),
    ("t2", "bk1", "s2", "frame", "image", "completed", 20),
    ("t3", "bk1", "s1", "clip", "video", "completed", 70),
    ("t4", "bk1", "s3", "frame", "image", "completed", 80),
    ("t5", "bk1", "s3", "frame", "image", "failed", 75),
    ("t6", "bk1", "s2", "clip", "video", "pending", None),
    ("t7", "bk2", "x1", "frame", "image", "completed", 90),
]
ATTEMPTS = [
    # task_id, no, worker, claimed, finished, outcome, error_kind, cost
    ("t1", 1, "pc-a", 0, 10, "completed", None, 1.0),
    ("t2", 1, "pc-b", 0, 5, "retried", "timeout", 0.5),
    ("t2", 2, "pc-b", 5, 20, "completed", None, 1.0),
    ("t3", 1, "pc-a", 10, 30, "lost", None, None),
    ("t3", 2, "pc-b", 40, 70, "completed", None, 2.0),
    ("t4", 1, "pc-a", 60, 80, "completed", None, 1.0),
    ("t5", 1, "pc-b", 70, 75, "failed", "bad_request", 0.0),
    ("t7", 1, "pc-a", 80, 90, "completed", None, 3.0),
]
HEARTBEATS = {"pc-a": (0, 1, 2, 3, 13), "pc-b": (0, 2, 4)}
TITLES = {"bk1": "The Lamplighter of Gullhaven", "bk2": "Tom & Jerry <Abroad>"}


def insert_log(
    db: Database,
    task_rows: list[tuple] = TASKS,
    attempt_rows: list[tuple] = ATTEMPTS,
    heartbeats: dict[str, tuple[float, ...]] = HEARTBEATS,
    worker_ids: tuple[str, ...] = ("pc-a", "pc-b", "pc-c"),
) -> None:
    """Insert a log given as the tuples above straight into the tables."""
    counts: dict[str, int] = {}
    for a in attempt_rows:
        counts[a[0]] = counts.get(a[0], 0) + 1
    with db.engine.begin() as conn:
        books_named = sorted({t[1] for t in task_rows} & set(TITLES))
        if books_named:
            conn.execute(sa.insert(books), [{"bookcode": b, "title": TITLES[b], "lang": "en"} for b in books_named])
        conn.execute(
            sa.insert(workers),
            [
                {
                    "worker_id": w,
                    "host": f"host-{w}",
                    "version": "0.1.0",
                    "lanes": "image,video",
                    "backend": "sketch",
                    "started_at": T0,
                    "last_seen_at": at(90),
                    "state": "stopped",
                }
                for w in worker_ids
            ],
        )
        conn.execute(
            sa.insert(tasks),
            [
                {
                    "task_id": tid,
                    "bookcode": book,
                    "shot_id": shot,
                    "kind": kind,
                    "lane": lane,
                    "status": status,
                    "priority": 0,
                    "attempts": counts.get(tid, 0),
                    "retry_base": 0,
                    "max_attempts": 3,
                    "run_after": T0,
                    "deps_remaining": 0,
                    "cost": 0.0,
                    "created_at": T0,
                    "finished_at": None if fin is None else at(fin),
                }
                for tid, book, shot, kind, lane, status, fin in task_rows
            ],
        )
        conn.execute(
            sa.insert(attempts),
            [
                {
                    "task_id": tid,
                    "attempt_no": no,
                    "worker_id": w,
                    "lease_token": f"{tid}-{no}",
                    "claimed_at": at(c),
                    "finished_at": None if f is None else at(f),
                    "outcome": o,
                    "error_kind": ek,
                    "cost": cost,
                }
                for tid, no, w, c, f, o, ek, cost in attempt_rows
            ],
        )
        rows = [
            {"at": at(m), "kind": "heartbeat", "task_id": None, "worker_id": w, "detail": {"count": 1}}
            for w, beats in heartbeats.items()
            for m in beats
        ]
        rows.append({"at": at(0), "kind": "claim", "task_id": None, "worker_id": "pc-a", "detail": {"count": 1}})
        rows += [
            {"at": at(40), "kind": "reclaim", "task_id": a[0], "worker_id": a[2], "detail": {"by": "pc-b"}}
            for a in attempt_rows
            if a[5] == "lost"
        ]
        conn.execute(sa.insert(events), rows)


@pytest.fixture
def known_db(sqlite_db: Database) -> Iterator[Database]:
    """The hand-built log in SQLite."""
    insert_log(sqlite_db)
    yield sqlite_db


@pytest.fixture
def known_any_db(db: Database) -> Iterator[Database]:
    """The hand-built log in each of SQLite, PostgreSQL and MariaDB."""
    insert_log(db)
    yield db


def simulated_rows(result: SimResult, beat_minutes: float = 30.0) -> dict:
    """A simulated run (see analysis.simulate) as insert_log rows: one book, three kinds of
    task, every attempt a row (a failed attempt before a completion is `retried`), a cost per
    completion, and heartbeats every `beat_minutes` while a machine works, so a sleep shows as
    a long heartbeat gap."""
    g = result.schedule.gantt.sort_values(["task", "start"], kind="stable")
    kinds = (("image", "first_frame"), ("image", "last_frame"), ("video", "clip"))
    task_rows, attempt_rows, beats = [], [], {}
    for task, mine in g.groupby("task", sort=True):
        lane, kind = kinds[int(task) % len(kinds)]
        last = mine.iloc[-1]
        status = "completed" if last["outcome"] == "completed" else "failed"
        task_rows.append((f"t{task:05d}", "bk1", f"s{int(task) // 3:04d}", kind, lane, status, float(last["end"])))
        for no, a in enumerate(mine.itertuples(index=False), start=1):
            outcome = {"completed": "completed", "lost": "lost"}.get(
                a.outcome, "failed" if no == len(mine) else "retried"
            )
            attempt_rows.append(
                (
                    f"t{task:05d}",
                    no,
                    a.machine,
                    float(a.start),
                    float(a.end),
                    outcome,
                    None if outcome in ("completed", "lost") else "timeout",
                    0.25 if outcome == "completed" else 0.0,
                )
            )
            beats.setdefault(a.machine, set()).update(float(m) for m in np.arange(a.start, a.end, beat_minutes))
    return {
        "task_rows": task_rows,
        "attempt_rows": attempt_rows,
        "heartbeats": {m: tuple(sorted(b)) for m, b in sorted(beats.items())},
        "worker_ids": tuple(result.plan.names),
    }
