"""The report: HTML without code, PNG charts identical across runs, CSV metrics, Parquet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline_kit.analysis.report import write_report
from pipeline_kit.db import Database
from pipeline_kit.errors import NotFound


def test_report_writes_html_png_csv_and_snapshot(known_db: Database, tmp_path: Path) -> None:
    """One call writes the page, a PNG per chart, a CSV per metric and the Parquet snapshot, and
    the page names every worker and shows no code."""
    page = write_report(known_db, None, tmp_path / "r")
    out = page.parent
    names = {p.name for p in out.iterdir()}
    assert page.name == "index.html"
    for chart in (
        "completed_per_pc",
        "throughput",
        "durations",
        "errors",
        "heartbeats",
        "idle",
        "costs",
        "queue_depth",
        "replay_gantt",
    ):
        assert f"{chart}.png" in names
        assert (out / f"{chart}.png").read_bytes()[:4] == b"\x89PNG"
    for table in ("workers", "completed_per_pc", "reclaims", "idle_time", "cost_by_shot", "eta"):
        assert f"{table}.csv" in names
    assert {p.name for p in (out / "snapshot").iterdir()} == {
        "tasks.parquet",
        "attempts.parquet",
        "events.parquet",
        "workers.parquet",
        "books.parquet",
    }
    text = page.read_text(encoding="utf-8")
    for worker in ("pc-a", "pc-b", "pc-c"):
        assert worker in text
    assert not re.search(r"<script|import |def |In \[", text)
    for img in re.findall(r"src='([^']+)'", text):
        assert (out / img).exists()


def test_report_is_byte_identical_across_runs(known_db: Database, tmp_path: Path) -> None:
    """Two reports of the same data have byte-identical PNGs, CSVs and HTML."""
    first = write_report(known_db, None, tmp_path / "a").parent
    second = write_report(known_db, None, tmp_path / "b").parent
    files = sorted(p.name for p in first.iterdir() if p.suffix in (".png", ".csv", ".html"))
    assert files and files == sorted(p.name for p in second.iterdir() if p.suffix in (".png", ".csv", ".html"))
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_report_of_one_book_and_unknown_book(known_db: Database, tmp_path: Path) -> None:
    """A book's report covers that book; an unknown book is NotFound (exit 2), not an empty page."""
    page = write_report(known_db, "bk2", tmp_path / "bk2")
    assert "Post-mortem: Tom &amp; Jerry &lt;Abroad&gt; (bk2)" in page.read_text(encoding="utf-8")
    with pytest.raises(NotFound):
        write_report(known_db, "nope", tmp_path / "nope")


def test_report_on_an_empty_database(sqlite_db: Database, tmp_path: Path) -> None:
    """A database with no activity still gives a complete report (every table as CSV)."""
    page = write_report(sqlite_db, None, tmp_path / "empty")
    assert (page.parent / "queue_depth.csv").exists()
    assert "Post-mortem: all books" in page.read_text(encoding="utf-8")
