"""A look at a book on SQLite while a worker holds the write lock.

Invariant: the read-only commands (status, cast, places, style, shot show) take no write lock, so
they answer at once while a claim or a completion holds the file's one write lock, instead of
queueing behind every worker on the PC (a read begun IMMEDIATE would wait out the 60 s busy
timeout here).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_kit.text import sample_book_path
from tests.text.helpers import SAMPLE_TITLE

pytestmark = pytest.mark.db


def _run(url: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", url, *args], capture_output=True, text=True, timeout=timeout
    )


def test_read_commands_answer_while_the_write_lock_is_held(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    url = f"sqlite:///{path}"
    assert _run(url, "init").returncode == 0
    book = _run(url, "ingest", str(sample_book_path()), "--title", SAMPLE_TITLE).stdout.strip()
    assert _run(url, "split", book).returncode == 0
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # what a worker's claim holds, here for the whole test
    try:
        for args in (
            ("status", book),
            ("cast", book),
            ("places", book),
            ("style", book),
            ("shot", "show", f"{book}-c001-s0001"),
        ):
            try:
                done = _run(url, *args, timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"`{' '.join(args)}` waited for the write lock")
            assert done.returncode == 0, (args, done.stderr)
            assert done.stdout.strip(), args
    finally:
        holder.execute("ROLLBACK")
        holder.close()
