"""`pipeline-kit simulate` and `report` from the command line, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_kit.db import Database


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "pipeline_kit", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_simulate_json_has_makespan_and_per_machine_counts() -> None:
    """--json prints one JSON object with the makespan and completions per machine."""
    run = cli("simulate", "--tasks", "1029", "--minutes", "10", "--machines", "3", "--json")
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["makespan_minutes"] == 3430 and got["completed"] == {"A": 343, "B": 343, "C": 343}


@pytest.mark.parametrize(
    "args",
    [
        ["--machines", "0"],
        ["--machines", "3", "--speeds", "1,0.9"],
        ["--fail-streak", "A20"],
        ["--fail-streak", "Q:3"],
        ["--sleep", "B:9-3"],
        ["--fail-rate", "1.5"],
        ["--speeds", "fast"],
        ["--tasks", "many"],
    ],
)
def test_simulate_bad_input_exits_2_with_one_line(args: list[str]) -> None:
    """Bad flags give exit 2 and exactly one line on stderr, no traceback."""
    run = cli("simulate", *args)
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "Traceback" not in run.stderr


def test_report_command(known_db: Database, tmp_path: Path) -> None:
    """`report BOOK --out DIR` writes the report and prints its path; an unknown book exits 2."""
    url = known_db.engine.url.render_as_string(hide_password=False)
    run = cli("--db", url, "report", "bk1", "--out", str(tmp_path / "r"))
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()) == tmp_path / "r" / "index.html"
    assert (tmp_path / "r" / "index.html").exists()
    bad = cli("--db", url, "report", "nope", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
