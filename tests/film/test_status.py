"""`film_status` and `pipeline-kit film`: what of the film exists and which shots block it."""

from __future__ import annotations

import argparse
import json
import unicodedata

import pytest
import sqlalchemy as sa

from pipeline_kit.cli import film_cmds
from pipeline_kit.db import Database
from pipeline_kit.db.schema import chapters, tasks
from pipeline_kit.engine import enqueue
from pipeline_kit.errors import NotFound
from pipeline_kit.film import book_task_id, chapter_task_id, film_status
from pipeline_kit.text.film_tasks import assembly_specs

from .books import BOOK, add_book, shot_id


def finish(conn: sa.Connection, task_id: str, output: str | None = None) -> None:
    conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(status="completed", output_path=output))


@pytest.fixture
def book(db: Database) -> Database:
    """Chapter 1 (2 shots) fully made with its film; chapter 2 (3 shots) has one clip done."""
    with db.engine.begin() as conn:
        add_book(conn, {1: 2, 2: 3})
        enqueue(conn, assembly_specs(conn, BOOK))
        for task_id in (f"{shot_id(1, 1)}/video", f"{shot_id(1, 2)}/video", f"{shot_id(2, 2)}/video"):
            finish(conn, task_id)
        finish(conn, chapter_task_id(BOOK, 1), f"/data/films/{BOOK}/chapter-001.mp4")
    return db


def test_status_counts_clips_and_names_blockers(book: Database) -> None:
    """Per chapter: clips done of total, the shots whose clip blocks it, and the film path once
    its assembly completed; the book has no film while a chapter lacks one."""
    status = film_status(book, BOOK)
    one, two = status.chapters
    assert (one.clips_done, one.shots, one.blockers, one.ready) == (2, 2, (), True)
    assert one.film_path == f"/data/films/{BOOK}/chapter-001.mp4"
    assert (two.clips_done, two.shots, two.ready, two.film_path) == (1, 3, False, None)
    assert [b.shot_id for b in two.blockers] == [shot_id(2, 1), shot_id(2, 3)]
    assert {b.status for b in two.blockers} == {"pending"}
    assert (status.clips_done, status.shots) == (3, 5)
    assert (status.task_id, status.task_status, status.film_path) == (book_task_id(BOOK), "pending", None)


def test_unknown_book_is_not_found(db: Database) -> None:
    """An unknown bookcode is NotFound, which the CLI prints as one line with exit code 2."""
    with pytest.raises(NotFound, match="no book 'nope'") as info:
        film_status(db, "nope")
    assert info.value.exit_code == 2


def run_cli(url: str, *argv: str) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db")
    film_cmds.register(parser.add_subparsers())
    args = parser.parse_args(["--db", url, "film", *argv])
    assert args.func(args) == 0


def test_cli_shows_chapters_blockers_and_paths(book: Database, db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`pipeline-kit film BOOKCODE` prints each chapter's clip count, its blockers and film path,
    and `--json` the same facts as one object."""
    run_cli(db_url, BOOK)
    out = capsys.readouterr().out
    assert f"/data/films/{BOOK}/chapter-001.mp4" in out and "1/3" in out
    assert f"blocked by {shot_id(2, 3)} (video pending)" in out
    assert "book film: pending" in out
    run_cli(db_url, BOOK, "--json")
    data = json.loads(capsys.readouterr().out)
    assert [c["clips_done"] for c in data["chapters"]] == [2, 1]
    assert data["chapters"][1]["blockers"][0]["shot_id"] == shot_id(2, 1)


def test_cli_columns_line_up_with_chinese_titles(
    book: Database, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Chapter titles in Chinese (two terminal cells a character), short or longer than the
    title column, keep `film`'s columns in line: each chapter's clip count starts at one cell."""
    with book.engine.begin() as conn:
        conn.execute(
            sa.update(chapters)
            .where(chapters.c.number == 1)
            .values(title="第一回 灵根育孕源流出 心性修持大道生 美猴王称王花果山")
        )
        conn.execute(sa.update(chapters).where(chapters.c.number == 2).values(title="序章"))
    run_cli(db_url, BOOK)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  chapter ")]
    assert len(rows) == 2 and "序章" in rows[1]
    assert len({cells(row[: row.index("/")]) for row in rows}) == 1, rows  # the "done/shots" slash


def cells(text: str) -> int:
    """Terminal cells `text` takes, measured independently of the code under test."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
