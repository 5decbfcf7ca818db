"""The README's main command, `pipeline-kit demo`, run as a user runs it: in an empty folder, twice.

Invariants: on the SQLite default it finishes the whole sample book, stored under the title its
file gives (every task completed once, a frame or clip on disk for each shot's tasks, the book's
film and its report); running it again creates nothing new and completes nothing twice.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def _demo(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PIPELINE_KIT_DB"}  # the default database
    return subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "demo"], cwd=cwd, env=env, capture_output=True, text=True, timeout=240
    )


def _counts(db: Path) -> tuple[int, int, int]:
    with sqlite3.connect(db) as conn:
        tasks, completed = conn.execute("SELECT COUNT(*), SUM(status = 'completed') FROM tasks").fetchone()
        (attempts,) = conn.execute("SELECT COUNT(*) FROM attempts WHERE outcome = 'completed'").fetchone()
    return tasks, completed, attempts


@pytest.mark.timeout(300)
@pytest.mark.db  # it makes and runs databases of its own
def test_demo_finishes_the_sample_book_and_a_second_run_adds_nothing(tmp_path: Path) -> None:
    first = _demo(tmp_path)
    assert first.returncode == 0, first.stderr
    db = tmp_path / "data" / "production.db"
    tasks, completed, attempts = _counts(db)
    assert tasks > 0 and completed == tasks == attempts
    with sqlite3.connect(db) as conn:  # the book is stored under the title its file gives
        titles = conn.execute("SELECT title FROM books").fetchall()
    assert titles == [("The Lamplighter of Gullhaven",)]
    assert f"{tasks} completed" in first.stdout
    films = list((tmp_path / "data" / "films").glob("*/film.mp4"))
    assert len(films) == 1 and films[0].stat().st_size > 0
    assert list((tmp_path / "reports").glob("*/index.html"))
    outputs = {p.suffix for p in (tmp_path / "data" / "outputs").rglob("*") if p.is_file()}
    assert {".png", ".mp4"} <= outputs

    again = _demo(tmp_path)
    assert again.returncode == 0, again.stderr
    assert _counts(db) == (tasks, completed, attempts)
    assert "0 shots and 0 tasks created" in again.stdout
