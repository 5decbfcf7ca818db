"""Same-day peer figures: reading bench-peers' libs.jsonl, the peer goal judged by it, and `--peers`."""

from __future__ import annotations

import json
import platform
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline_kit.bench.goals import judge
from pipeline_kit.bench.peers import Peer, PeerFigures, best, read_measured
from pipeline_kit.bench.report import markdown, to_json
from pipeline_kit.bench.results import BenchReport, Goal

from .test_bench_cli import bench
from .test_bench_parts import throughput_row

NOW = datetime.now().replace(microsecond=0)
VERSIONS = {"procrastinate": "3.10.0", "pgqueuer": "1.6.0", "oban": "0.7.0", "huey": "3.5.4"}


def _run(lib: str, procs: int, conc: int, jobs_per_s: float | None, **changes: Any) -> dict[str, Any]:
    """One line of libs.jsonl as lib_bench.py writes it (the keys read, plus a few others)."""
    return {
        "lib": lib,
        "version": VERSIONS[lib],
        "mode": "throughput",
        "procs": procs,
        "conc": conc,
        "jobs": 20000,
        "run": 0,
        "status": "ok",
        "jobs_per_s": jobs_per_s,
        "duplicates": 0,
        "missing": 0,
        "config": f"{lib} concurrency {conc}",
        "ts": NOW.isoformat(),
        "host": platform.node(),
        **changes,
    }


def _folder(tmp_path: Path, runs: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "peers"
    folder.mkdir()
    (folder / "libs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    return folder


def _goal(figures: PeerFigures, workers_tasks_per_s: dict[int, float]) -> Goal:
    """The peer goal for PostgreSQL rows whose best batch reaches these tasks/s per worker count."""
    rows = [throughput_row("postgresql", n, tps, tps) for n, tps in workers_tasks_per_s.items()]
    return judge(rows, [], figures)[1]


SAME_DAY = [
    _run(lib, procs, conc, jobs_per_s * procs)
    for procs in (1, 2)
    for lib, conc, jobs_per_s in (("procrastinate", 16, 700), ("pgqueuer", 0, 5000), ("oban", 16, 1300))
]


def test_median_of_clean_runs_only(tmp_path: Path) -> None:
    """A figure is the median of the runs with status ok, no duplicate and none missing; a run that
    lost or repeated a job, or did not finish, never makes a peer look faster or slower."""
    folder = _folder(
        tmp_path,
        [
            _run("pgqueuer", 1, 16, 100),
            _run("pgqueuer", 1, 16, 300),
            _run("pgqueuer", 1, 16, 200),
            _run("pgqueuer", 1, 16, None, status="timeout (executed 5/20000)"),
            _run("pgqueuer", 1, 16, 9999, duplicates=1),
            _run("pgqueuer", 1, 16, 9999, missing=2),
            {"lib": "pgqueuer", "mode": "idle", "conc": 4},
        ],
    )
    figures = read_measured(folder)
    assert figures.peers == (
        Peer("pgqueuer 1.6.0", "postgresql", 1, "pgqueuer concurrency 16", 200, 3, f"{NOW:%Y-%m-%d %H:%M}–{NOW:%H:%M}"),
    )
    assert figures.same_day and figures.source.startswith(f"{folder / 'libs.jsonl'}, 3 runs ")


def test_best_configuration_per_process_count(tmp_path: Path) -> None:
    """The goal compares with each library's fastest configuration at each process count, whichever it is."""
    figures = read_measured(
        _folder(
            tmp_path,
            [
                _run("pgqueuer", 1, 16, 4000),
                _run("pgqueuer", 1, 0, 5000),
                _run("pgqueuer", 2, 16, 6000),
                _run("pgqueuer", 2, 0, 5500),
                _run("huey", 1, 4, 4000),
            ],
        )
    )
    fastest = best(figures.peers)
    assert fastest[("pgqueuer", "postgresql", 1)].config == "pgqueuer concurrency 0"
    assert fastest[("pgqueuer", "postgresql", 2)].config == "pgqueuer concurrency 16"
    assert fastest[("huey", "sqlite", 1)].jobs_per_s == 4000


def test_goal_judged_against_same_day_figures(tmp_path: Path) -> None:
    """With --peers the goal compares with the same-day medians and says so; one process count behind misses it."""
    figures = read_measured(_folder(tmp_path, SAME_DAY))
    ahead = _goal(figures, {1: 6000, 2: 12000})
    assert ahead.met is True and "same day" in ahead.goal and str(tmp_path) in ahead.detail
    assert "pgqueuer x2: 12,000 (batch 10) vs 10,000 ahead" in ahead.detail
    behind = _goal(figures, {1: 6000, 2: 9000})
    assert behind.met is False and "pgqueuer x2: 9,000 (batch 10) vs 10,000 BEHIND" in behind.detail


def test_library_missing_from_the_file_is_said_and_never_met(tmp_path: Path) -> None:
    """A goal library the file lacks is named in the detail, and the goal is never reported met without it."""
    figures = read_measured(_folder(tmp_path, [_run("pgqueuer", 1, 0, 5000)]))
    ahead = _goal(figures, {1: 6000})
    assert ahead.met is None
    assert "procrastinate x1: not in the peer figures" in ahead.detail and "oban x1: not in" in ahead.detail
    assert _goal(figures, {1: 4000}).met is False


def test_figures_from_another_day_are_labelled_so_in_goal_report_and_json(tmp_path: Path) -> None:
    """Figures not measured today are never presented as same-day; the JSON carries the figures and source."""
    figures = read_measured(_folder(tmp_path, [{**r, "ts": (NOW - timedelta(days=2)).isoformat()} for r in SAME_DAY]))
    goal = _goal(figures, {1: 6000})
    assert not figures.same_day and "another day" in goal.goal
    report = BenchReport(
        started_at=NOW.isoformat(),
        seconds=1.0,
        machine={"cpus": 2, "load_before": "0", "load_after": "0", "python": "3", "sqlalchemy": "2", "servers": {}},
        config={"tasks_per_run": {"10": 100}, "runs": 1},
        results=(),
        enqueue=(),
        latency=(),
        goals=(goal,),
        peers=figures,
    )
    page = markdown(report)
    assert "## Peers, measured on another day or machine" in page and "compare orders of magnitude" in page
    assert f"Source: {figures.source}" in page and "| oban 0.7.0 | postgresql | 2 | oban concurrency 16 | 1 |" in page
    peers = to_json(report)["peers"]
    assert peers["source"] == figures.source and peers["same_day"] is False
    assert ("oban 0.7.0", 2, 2600) in {(p["library"], p["processes"], p["jobs_per_s"]) for p in peers["peers"]}


@pytest.mark.timeout(60)
def test_cli_reports_the_same_day_figures_it_was_given(tmp_path: Path) -> None:
    """`--peers DIR` reaches the goal and the JSON output (a tiny SQLite run: the goal itself is not measured)."""
    folder = _folder(tmp_path, SAME_DAY)
    done = bench(
        "--peers",
        str(folder),
        "--databases",
        "sqlite",
        "--quick",
        "--workers",
        "1",
        "--batches",
        "10",
        "--tasks",
        "100",
        "--latency-rows",
        "0",
        "--json",
        "--out",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["peers"]["same_day"] is True and report["peers"]["source"].startswith(str(folder / "libs.jsonl"))
    assert "peers measured the same day" in report["goals"][1]["goal"]


@pytest.mark.parametrize(
    "content",
    [
        None,
        "",
        "{not json\n",
        "[1, 2]\n",
        json.dumps(_run("oban", 1, 16, 1300, ts="yesterday")) + "\n",
        json.dumps(_run("oban", 1, 16, None, status="worker exited early")) + "\n",
        json.dumps(_run("huey", 1, 4, 4000)) + "\n",
    ],
    # named, not shown: the runs hold this second's time, and parallel test processes must
    # collect the same ids
    ids=["no folder", "empty", "not json", "not an object", "bad time", "no clean run", "no goal library"],
)
def test_bad_peers_folder_exits_2_in_one_line_before_measuring(content: str | None, tmp_path: Path) -> None:
    """A missing, empty or malformed libs.jsonl, or one without a clean run of a goal library, stops the
    bench with exit 2 and one stderr line, before anything is measured or written."""
    folder = tmp_path / "peers"
    if content is not None:
        folder.mkdir()
        (folder / "libs.jsonl").write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    done = bench(
        "--peers", str(folder), "--databases", "sqlite", "--quick", "--out", str(out), cwd=tmp_path, timeout=30
    )
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(folder / "libs.jsonl") in done.stderr
    assert not out.exists()
