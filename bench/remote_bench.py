"""Remote-backend benchmark: the worker's own time per remote task, and `--inflight` makespans.

    python bench/remote_bench.py [--quick] [--runs R]

1. Overhead per task besides the provider's own time: N tasks through one `pipeline-kit work`
   process (`--inflight 1`) against a loopback stand-in that answers at once (tests/servers):
   Ark clips (create, poll, download, check the MP4), Ark frames and ComfyUI frames. The
   stand-in's own time (its handlers, timed) is taken off the makespan; the rest is ours:
   claim, inputs, requests, download, publish, complete.
2. Makespan of 100 Ark clips of 5 s each with one worker at `--inflight 1, 4, 8` against the
   ideal 100 x 5 / N. Goal: within 15% of ideal.
`--quick` scales down (20 tasks for 1., 24 clips of 1 s for 2., one run) and says so.
Makespans come from the database clock (first claim to last completion) on SQLite, and each
run checks every task completed once with one paid create each. The stand-ins' rate limits are
lifted (PIPELINE_KIT_ARK_RATE, _COMFYUI_RATE) so the worker, not an account's quota, is
measured. Results: reports/bench/remote.json and reports/bench/remote.md (medians of runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers.ark_fake import FakeArk  # noqa: E402
from servers.comfyui_fake import FakeComfyUI  # noqa: E402
from servers.scripted import FakeServer, Request  # noqa: E402

from pipeline_kit import engine  # noqa: E402
from pipeline_kit.db import create  # noqa: E402
from pipeline_kit.db.connect import Database  # noqa: E402
from pipeline_kit.db.migrate import init  # noqa: E402
from pipeline_kit.db.schema import attempts, tasks  # noqa: E402
from tests.worker.test_inflight import KEY, ark_env, enqueue_videos  # noqa: E402

GOAL = 1.15  # a makespan at most 15% above the ideal
INFLIGHT = (1, 4, 8)
POLLS = 10  # a stand-in clip is done after this many polls; its length sets the poll interval
REPORTS = ROOT / "reports" / "bench"


@dataclass(frozen=True)
class Case:
    """One kind of remote task: its lane and backend, the stand-in, the tasks and the env."""

    name: str
    lane: str
    backend: str
    server: Callable[[], FakeServer]
    enqueue: Callable[[Database, Path, int], Any]
    env: Callable[[FakeServer], dict[str, str]]


def enqueue_frames(db: Database, _tmp: Path, count: int) -> None:
    """`count` first frames without characters (each made from its prompt alone)."""
    specs = [
        engine.TaskSpec(
            task_id=f"bench-001-{n:04d}/first_frame",
            kind="first_frame",
            lane="image",
            bookcode="bench",
            shot_id=f"bench-001-{n:04d}",
            params={
                "shot_id": f"bench-001-{n:04d}",
                "prompt": f"a harbour, shot {n}",
                "seed": n,
                "width": 640,
                "height": 360,
            },
        )
        for n in range(1, count + 1)
    ]
    with db.engine.begin() as conn:
        engine.enqueue(conn, specs)


def clips(db: Database, tmp: Path, count: int) -> None:
    """`count` clips, their two frames made beforehand (outside the measured span)."""
    enqueue_videos(db, count, tmp / "data/outputs")


def ark_case(name: str, lane: str, seconds: float) -> Case:
    """Ark tasks whose stand-in takes `seconds` per clip (0: answers at once)."""
    polls = POLLS if seconds else 1
    return Case(
        name,
        lane,
        "ark",
        lambda: FakeArk(api_key=KEY, polls=polls),
        clips if lane == "video" else enqueue_frames,
        lambda server: ark_env(cast(FakeArk, server), seconds / polls),
    )


COMFYUI = Case(
    "comfyui frame",
    "image",
    "comfyui",
    lambda: FakeComfyUI(polls_to_finish=0),
    enqueue_frames,
    lambda server: {
        "PIPELINE_KIT_COMFYUI_URL": server.url,
        "PIPELINE_KIT_COMFYUI_RATE": "200",
        "PIPELINE_KIT_COMFYUI_BURST": "20",
    },
)


def timed(server: FakeServer) -> list[float]:
    """Seconds the stand-in spends answering each request (the provider's own time)."""
    spent: list[float] = []
    answer = server.handle

    def handle(request: Request) -> None:
        started = time.perf_counter()
        try:
            answer(request)
        finally:
            spent.append(time.perf_counter() - started)

    server.handle = handle  # type: ignore[method-assign]
    return spent


def run(case: Case, count: int, inflight: int) -> tuple[float, float]:
    """A fresh SQLite database with `count` tasks, drained by one worker: its makespan, and the
    seconds the stand-in spent answering."""
    server = case.server()
    spent = timed(server)
    with tempfile.TemporaryDirectory() as folder, server:
        tmp = Path(folder)
        url = f"sqlite:///{tmp / 'bench.db'}"
        db = create(url)
        try:
            init(db)
            engine.seed_default_lanes(db)
            case.enqueue(db, tmp, count)
            clean = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")}
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pipeline_kit",
                    "--db",
                    url,
                    "work",
                    "--worker-id",
                    "bench",
                    "--lanes",
                    case.lane,
                    "--backend",
                    case.backend,
                    "--inflight",
                    str(inflight),
                    "--until-empty",
                    "--quiet",
                ],
                cwd=tmp,
                env={**clean, **case.env(server)},
                capture_output=True,
                text=True,
                timeout=3600,
            )
            if done.returncode != 0:
                raise SystemExit(f"{case.name}: the worker failed: {done.stderr.strip()}")
            span = makespan(db, case.lane, count)
        finally:
            db.dispose()
    if len(server.billing) != count:
        raise SystemExit(f"{case.name}: {len(server.billing)} paid creates for {count} tasks")
    return span, sum(spent)


def makespan(db: Database, lane: str, count: int) -> float:
    """First claim to last completion in `lane` by the database clock; every task done once."""
    in_lane = sa.select(tasks.c.task_id).where(tasks.c.lane == lane)
    with db.engine.connect() as conn:
        first, last, completed, total = conn.execute(
            sa.select(
                sa.func.min(attempts.c.claimed_at),
                sa.func.max(attempts.c.finished_at),
                sa.func.count().filter(attempts.c.outcome == "completed"),
                sa.func.count(),
            ).where(attempts.c.task_id.in_(in_lane))
        ).one()
    if not completed == total == count:
        raise SystemExit(f"{completed} of {count} tasks completed in {total} attempts: not exactly once")
    first, last = (datetime.fromisoformat(x) if isinstance(x, str) else x for x in (first, last))
    return float((last - first).total_seconds())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="20 tasks per overhead case, 24 clips of 1 s for the makespans, one run"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (median); default 3")
    args = parser.parse_args()
    runs = 1 if args.quick else args.runs
    per_case, clip_count, clip_s = (20, 24, 1.0) if args.quick else (50, 100, 5.0)
    scale = (
        (
            f"--quick: scaled down to {per_case} tasks per overhead case and {clip_count} clips of "
            f"{clip_s:g} s (the full run: 50 tasks, 100 clips of 5 s), one run"
        )
        if args.quick
        else f"median of {runs} runs"
    )
    print(scale, flush=True)

    overhead = []
    for case in (ark_case("ark clip", "video", 0.0), ark_case("ark frame", "image", 0.0), COMFYUI):
        measured = [run(case, per_case, 1) for _ in range(runs)]
        row = {
            "case": case.name,
            "tasks": per_case,
            "runs": measured,
            "ms_per_task": 1000 * statistics.median(span for span, _ in measured) / per_case,
            "stand_in_ms_per_task": 1000 * statistics.median(spent for _, spent in measured) / per_case,
            "overhead_ms_per_task": 1000 * statistics.median(span - spent for span, spent in measured) / per_case,
        }
        overhead.append(row)
        print(
            f"overhead, {case.name}: {row['overhead_ms_per_task']:.0f} ms per task "
            f"({row['ms_per_task']:.0f} ms in all, {row['stand_in_ms_per_task']:.0f} ms of them the stand-in's)",
            flush=True,
        )

    makespans = []
    for inflight in INFLIGHT:
        spans = [run(ark_case("ark clip", "video", clip_s), clip_count, inflight)[0] for _ in range(runs)]
        ideal = clip_count * clip_s / inflight
        span = statistics.median(spans)
        makespans.append(
            {
                "inflight": inflight,
                "clips": clip_count,
                "clip_s": clip_s,
                "runs": spans,
                "makespan_s": span,
                "ideal_s": ideal,
                "ratio": span / ideal,
                "within_15pct": span / ideal <= GOAL,
            }
        )
        print(f"--inflight {inflight}: {span:.1f} s, ideal {ideal:.1f} s, ratio {span / ideal:.3f}", flush=True)

    report = {
        "quick": args.quick,
        "scale": scale,
        "overhead": overhead,
        "makespan": makespans,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
    }
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "remote.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (REPORTS / "remote.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Remote backends: overhead per task and --inflight makespans",
        "",
        report["scale"] + ".",
        "",
        "| stand-in answering at once | tasks | ms per task | of which the stand-in's | overhead ms per task |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['case']} | {r['tasks']} | {r['ms_per_task']:.0f} | {r['stand_in_ms_per_task']:.0f} | "
        f"{r['overhead_ms_per_task']:.0f} |"
        for r in report["overhead"]
    ]
    lines += [
        "",
        "| --inflight | clips x seconds | makespan s | ideal s | ratio | within 15% |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['inflight']} | {r['clips']} x {r['clip_s']:g} | {r['makespan_s']:.1f} | {r['ideal_s']:.1f} | "
        f"{r['ratio']:.3f} | {'yes' if r['within_15pct'] else 'no'} |"
        for r in report["makespan"]
    ]
    lines += [
        "",
        f"SQLite, one worker process; {report['cpus']} CPUs shared with other work "
        f"(1-minute load {report['load_average']:.1f} at the end).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
