"""A post-mortem of a real multi-worker run, on SQLite and on PostgreSQL."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.analysis.load import load
from pipeline_kit.analysis.postmortem import postmortem
from pipeline_kit.analysis.report import write_report
from pipeline_kit.db import Database
from pipeline_kit.db.schema import books
from pipeline_kit.engine import TaskSpec

from .chartcheck import problems

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ("PC-A", "PC-B", "PC-C")
KINDS = (
    ("image", "character_sheet"),
    ("image", "first_frame"),
    ("image", "last_frame"),
    ("video", "video"),
    ("default", "subtitle_track"),
    ("default", "contact_sheet"),
)
TITLE = "The Lamplighter of Gullhaven"


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_report_of_a_real_three_worker_run(db_url: str, db: Database, tmp_path: Path) -> None:
    """Three real worker processes drain 48 tasks of six kinds in a few seconds; the report
    names the book and each worker, its completed-per-PC table adds up to the tasks done, and
    every chart has data filling its axes (units fitted to seconds, no label overlapping or
    cut off, no duration rounded to 0.0) or one line saying why it has nothing to show."""
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title=TITLE, lang="en", review=False))
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id=f"r{i:02d}", kind=KINDS[i % 6][1], lane=KINDS[i % 6][0], bookcode="bk")
                for i in range(48)
            ],
        )
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pipeline_kit",
                "--db",
                db_url,
                "work",
                "--worker-id",
                w,
                "--lanes",
                "image,video,default",
                "--backend",
                "sleep:0.05",
                "--until-empty",
                "--quiet",
                "--outputs",
                str(tmp_path / "out"),
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in WORKERS
    ]
    for p in procs:
        assert p.wait(timeout=240) == 0, p.stderr.read() if p.stderr else ""
    html = write_report(db, "bk", tmp_path / "report")
    page = html.read_text()
    assert f"<h1>Post-mortem: {TITLE} (bk)</h1>" in page
    for worker in WORKERS:
        assert worker in page
    with (html.parent / "completed_per_pc.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert sum(int(r["completed"]) for r in rows) == 48
    assert {r["worker_id"] for r in rows} <= set(WORKERS) and len(rows) >= 2
    assert "def " not in page and "import " not in page  # no code in the report
    charts = postmortem(load(db, "bk")).figures()
    assert {name: p for name, chart in charts.items() if (p := problems(chart))} == {}
    assert charts["replay_gantt"].axes[-1].get_xlabel() == "seconds from the start"
    assert "nothing to show: no attempt recorded a cost (48 attempts, total 0)" in page
