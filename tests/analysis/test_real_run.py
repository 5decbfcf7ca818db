"""A post-mortem of a real multi-worker run, on SQLite and on PostgreSQL."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_kit import engine
from pipeline_kit.analysis.report import write_report
from pipeline_kit.db import Database
from pipeline_kit.engine import TaskSpec

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ("PC-A", "PC-B", "PC-C")


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_report_of_a_real_three_worker_run_names_every_worker(db_url: str, db: Database, tmp_path: Path) -> None:
    """Three real worker processes drain 45 tasks; the report names each of them, and its
    completed-per-PC table adds up to exactly the tasks done, with every chart written."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"r{i:02d}", kind="noop", lane="default") for i in range(45)])
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline_kit", "--db", db_url, "work", "--worker-id", w,
                               "--lanes", "default", "--backend", "sleep:0.05", "--until-empty", "--quiet",
                               "--outputs", str(tmp_path / "out")], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for w in WORKERS]
    for p in procs:
        assert p.wait(timeout=240) == 0, p.stderr.read() if p.stderr else ""
    html = write_report(db, None, tmp_path / "report")
    page = html.read_text()
    for worker in WORKERS:
        assert worker in page
    with (html.parent / "completed_per_pc.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert sum(int(r["completed"]) for r in rows) == 45
    assert {r["worker_id"] for r in rows} <= set(WORKERS) and len(rows) >= 2
    pngs = sorted(p.name for p in html.parent.glob("*.png"))
    assert "completed_per_pc.png" in pngs and "throughput.png" in pngs
    assert "def " not in page and "import " not in page  # no code in the report
