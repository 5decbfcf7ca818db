"""`overview` and `pipeline-kit status` on every database: workers' liveness judged against their
lease, folding of workers not seen for a day, unknown books, and tables that stay aligned."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
import sqlalchemy as sa

from pipeline_kit import engine, text
from pipeline_kit.cli import main as cli_main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks, workers
from pipeline_kit.db.sqltime import now_plus
from pipeline_kit.engine import TaskSpec
from pipeline_kit.errors import NotFound

CJK_TITLE = "西游记：美猴王大闹天宫，取经路上九九八十一难全记"  # longer than the title column
CJK_WORKER = "渲染机-甲"


def cells(line: str) -> int:
    """Terminal cells a line takes, measured independently of the code under test."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def table_after(out: str, header: str) -> list[str]:
    """The lines of the table whose header line starts with `header` (up to a blank line)."""
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(header))
    rest = lines[first:]
    return rest[: rest.index("")] if "" in rest else rest


def assert_aligned(lines: list[str]) -> None:
    """Every column (cells split by two or more spaces) starts at one terminal cell in every
    line, or, for right-aligned numbers, ends at one."""
    spans = [
        [(cells(line[: m.start()]), cells(line[: m.end()])) for m in re.finditer(r"\S+(?: \S+)*", line)]
        for line in lines
    ]
    for column in zip(*spans, strict=False):
        starts, ends = {s for s, _ in column}, {e for _, e in column}
        assert len(starts) == 1 or len(ends) == 1, "\n".join(lines)


def status(url: str, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli_main(["--db", url, "status", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def seen_ago(db: Database, worker_id: str, seconds: float) -> None:
    """Pretend the worker was last seen `seconds` ago, by the database clock."""
    with db.engine.begin() as conn:
        conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id).values(last_seen_at=now_plus(-seconds)))


def liveness(db: Database, worker_id: str) -> str | None:
    return engine.overview(db, all_workers=True).workers[worker_id]["liveness"]


def test_liveness_is_judged_against_the_workers_own_lease(db: Database) -> None:
    """A worker whose last heartbeat is older than its lease is `not responding`; one that
    exited cleanly stays `stopped` however old; otherwise it is working or idle as it said."""
    engine.register_worker(db, "w", lanes=["default"], lease_s=30)
    assert liveness(db, "w") == "working"
    engine.touch_worker(db, "w", "idle")
    assert liveness(db, "w") == "idle"
    seen_ago(db, "w", 20)  # within its 30 s lease
    assert liveness(db, "w") == "idle"
    seen_ago(db, "w", 45)  # past it: killed, frozen or cut off
    assert liveness(db, "w") == "not responding"
    engine.touch_worker(db, "w", "working")
    assert liveness(db, "w") == "working"
    engine.touch_worker(db, "w", "stopped")
    seen_ago(db, "w", 3600)
    assert liveness(db, "w") == "stopped"


def test_workers_not_seen_for_a_day_are_folded(db_url: str, db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """Workers not seen for a day and holding nothing are left out of `status` (and its JSON),
    which says how many it folded; `status --all` lists them. A recent one is always listed."""
    engine.register_worker(db, "old-pc", lanes=["default"], lease_s=60)
    engine.register_worker(db, "new-pc", lanes=["default"], lease_s=60)
    seen_ago(db, "old-pc", 2 * 24 * 3600)
    view = engine.overview(db)
    assert set(view.workers) == {"new-pc"} and view.folded_workers == 1
    assert set(engine.overview(db, all_workers=True).workers) == {"old-pc", "new-pc"}

    code, out, _ = status(db_url, capsys)
    assert code == 0 and "new-pc" in out and "old-pc" not in out
    assert "1 worker not seen for a day folded away" in out and "--all" in out
    code, out, _ = status(db_url, capsys, "--all")
    assert code == 0 and "old-pc" in out and "not responding" in out and "folded" not in out
    code, out, _ = status(db_url, capsys, "--json")
    data = json.loads(out)
    assert data["folded_workers"] == 1 and set(data["workers"]) == {"new-pc"}
    assert data["workers"]["new-pc"]["liveness"] == "working"
    assert data["workers"]["new-pc"]["lease_s"] == 60


def test_status_of_an_unknown_book_exits_2(db_url: str, db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """`status NOPE` is bad input: exit 2 and one line naming the book, not an all-zero board."""
    with pytest.raises(NotFound, match="no book 'nope'"):
        engine.overview(db, "nope")
    code, out, err = status(db_url, capsys, "nope")
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1 and "'nope'" in err, err


def test_status_columns_line_up_by_display_width(db_url: str, db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """A Chinese title and a Chinese worker id (two cells a character) keep the books and
    workers tables aligned: every cell of a column ends at the same terminal cell."""
    zh = text.ingest_text(db, "第一回\n\n美猴王在花果山上称王。\n", CJK_TITLE, lang="zh").bookcode
    en = text.ingest_text(db, "Chapter 1\n\nA short tale.\n", "A Tale", lang="en").bookcode
    with db.engine.begin() as conn:
        engine.enqueue(
            conn, [TaskSpec(task_id=f"{book}-t", kind="noop", lane="default", bookcode=book) for book in (zh, en)]
        )
    engine.register_worker(db, CJK_WORKER, lanes=["default"], lease_s=60)
    engine.register_worker(db, "pc-2", lanes=["default"], lease_s=60)
    engine.claim(db, CJK_WORKER, ["default"], limit=1)

    code, out, _ = status(db_url, capsys)
    assert code == 0
    books = table_after(out, "book ")
    assert len(books) == 3 and "西游记" in books[1] + books[2] and "A Tale" in books[1] + books[2]
    assert_aligned(books)
    crew = table_after(out, "worker ")
    assert len(crew) == 3 and any(line.startswith(CJK_WORKER) for line in crew)
    assert_aligned(crew)


def test_status_headers_are_never_cut(db_url: str, db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """Every status is a whole column header (`awaiting_review`, not `awaiting_r`)."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="r", kind="noop", lane="default")])
        conn.execute(sa.update(tasks).where(tasks.c.task_id == "r").values(status="awaiting_review"))
    code, out, _ = status(db_url, capsys)
    header = next(line for line in out.splitlines() if line.startswith("lane "))
    assert code == 0 and header.split()[-1] == "awaiting_review", header
