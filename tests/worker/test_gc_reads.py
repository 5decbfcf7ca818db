"""What `store gc` keeps is read from the rows that can own outputs or staged marks, in SQL on
each database: the made tasks' checksums, the latest completed attempts' blobs, how long the
oldest running attempt has run, the running leases' marks and the marks recorded by
completions, and nothing else.

Invariant: the rows below, made by hand in every state a task and an attempt can be in, keep
exactly what the whole-table reading kept (each task's latest completed attempt's blobs, every
made row's output and string side files, the marks of running leases and of recorded
completions), and a made row with no checksum or a reset row keeps nothing. A running attempt's
blobs are kept by their age (test_store_gc.py), not by name: it names none until it completes.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.engine import Status, TaskSpec, enqueue
from pipeline_kit.engine.queries import named_checksums, running_for
from pipeline_kit.store.folder import STAGED, FolderStore, mark_of
from pipeline_kit.store.gc import stale_staged

AT = dt.datetime(2026, 1, 1)


def _sha(letter: str) -> str:
    return letter * 64


def _task(conn: sa.Connection, task_id: str, status: Status, **values: Any) -> None:
    enqueue(conn, [TaskSpec(task_id=task_id, kind="noop", lane="default")])
    conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(status=status.value, **values))


def _attempt(
    conn: sa.Connection, task_id: str, number: int, outcome: str | None, blobs: str | None, token: str = ""
) -> None:
    conn.execute(
        sa.insert(attempts).values(
            task_id=task_id,
            attempt_no=number,
            worker_id="w",
            lease_token=token or f"tok-{task_id}-{number}",
            claimed_at=AT,
            outcome=outcome,
            output_blobs=blobs,
        )
    )


def _rows(db: Database) -> None:
    with db.engine.begin() as conn:
        # made: output and side files (a side that is no checksum names nothing), staged mark m1
        result = {"sha256": _sha("a"), "sides": {".srt": _sha("b"), ".n": 5}, "staged": "1" * 16}
        _task(conn, "made", Status.COMPLETED, output_path="outputs/made.png", result=result)
        _attempt(conn, "made", 1, "completed", f"{_sha('d')} {_sha('e')}")  # an older completion
        _attempt(conn, "made", 2, "completed", _sha("a"))
        _task(conn, "review", Status.AWAITING_REVIEW, output_path="outputs/r.png", result={"sha256": _sha("c")})
        _task(conn, "fileless", Status.COMPLETED, output_path=None, result={"sha256": None, "n": 1})
        # reset: its row forgets its output, its latest completed attempt still names it
        _task(conn, "reset", Status.PENDING, output_path=None, result=None)
        _attempt(conn, "reset", 1, "completed", _sha("f"))
        _attempt(conn, "reset", 2, "lost", _sha("0"))
        # running: an attempt an older version named blobs on before its upload; its lease stages
        # under its mark
        _task(conn, "running", Status.PROCESSING, lease_token="live-token")
        _attempt(conn, "running", 1, "failed", _sha("2"))
        _attempt(conn, "running", 2, None, f"{_sha('3')} {_sha('4')}", token="live-token")


def test_gc_keeps_the_checksums_the_rows_name(db: Database) -> None:
    _rows(db)
    with db.reading() as conn:
        named = named_checksums(conn)
        running = running_for(conn)
    assert named == {_sha(c) for c in "abcf"}
    assert running is not None and running > 3600  # claimed on New Year's Day


def test_gc_deletes_only_the_staged_files_no_lease_can_have_accepted(db: Database, tmp_path: Path) -> None:
    _rows(db)
    folder = tmp_path / "store" / "outputs"
    folder.mkdir(parents=True)
    marks = {"recorded": "1" * 16, "live": mark_of("live-token"), "stale": "9" * 16, "old": mark_of("tok-made-1")}
    for why, mark in marks.items():
        (folder / f"{why}.png{STAGED}{mark}").write_bytes(b"x")
    stale = stale_staged(db, FolderStore(tmp_path / "store"))
    assert {p.name.split(".")[0] for p in stale} == {"stale", "old"}
