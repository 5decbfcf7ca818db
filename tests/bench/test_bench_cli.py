"""`pipeline-kit bench`: a quick real run on SQLite, and bad flags rejected in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REQUIRED = {"database", "workers", "batch", "tasks_per_s", "raw_tasks_per_s", "ratio", "runs", "exactly_once"}


def bench(*args: str, cwd: Path, timeout: float = 55) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "bench", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.timeout(60)
@pytest.mark.db  # it makes and runs databases of its own
def test_quick_sqlite_run_prints_json_and_checks_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    done = bench("--quick", "--json", "--databases", "sqlite", "--tasks", "300", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = report["results"]
    assert {(r["workers"], r["batch"]) for r in rows} == {(1, 1), (2, 1), (1, 10), (2, 10)}
    for row in rows:
        assert REQUIRED <= row.keys()
        assert row["database"] == "sqlite" and row["runs"] == 1 and row["tasks"] == 300
        assert row["exactly_once"] is True
        assert row["tasks_per_s"] > 0 and row["raw_tasks_per_s"] > 0
    assert report["latency"] and all(x["p50_ms"] > 0 for x in report["latency"])
    assert sorted(p.name for p in out.iterdir())[-1] == "engine.md"
    assert "| sqlite | 1 | 1 |" in (out / "engine.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "flags",
    [("--workers", "0"), ("--databases", "oracle"), ("--runs", "0")],
)
def test_bad_flags_exit_2_with_one_line(flags: tuple[str, ...], tmp_path: Path) -> None:
    done = bench(*flags, "--out", str(tmp_path / "reports"), cwd=tmp_path, timeout=30)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "reports").exists()
