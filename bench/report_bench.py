"""Benchmark the post-mortem on a big synthetic log: 1,000,000 tasks and 3,000,000 attempts.

Times loading (from a SQLite file under /tmp), every metric, the replay and the full report
(goal: under 60 s and 4 GB peak RSS), and runs the heaviest metrics with DuckDB and with plain
pandas side by side. Writes JSON and a markdown table to reports/bench/.

    python bench/report_bench.py            # 1M tasks, 3M attempts
    python bench/report_bench.py --quick    # 100k tasks, 300k attempts
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

from pipeline_kit.analysis import metrics, reliability
from pipeline_kit.analysis.load import RunLog, load, normalise
from pipeline_kit.analysis.postmortem import REPLAY_MAX_ATTEMPTS
from pipeline_kit.analysis.replay import replay
from pipeline_kit.analysis.report import write_report_for
from pipeline_kit.db import create
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import metadata
from pipeline_kit.engine.lanes import seed_default_lanes

WORKERS = tuple(f"pc-{i:02d}" for i in range(1, 9))
LANES = (("image", "frame"), ("image", "last_frame"), ("video", "clip"), ("llm", "prompt"))
T0 = np.datetime64("2026-01-01T00:00:00", "us")
HEARTBEAT_S = 300


def synthetic(n_tasks: int, seed: int = 1) -> RunLog:
    """A log of n_tasks with ~3 attempts each on 8 workers; every worker runs one attempt at a
    time back to back, earlier attempts of a task before later ones."""
    rng = np.random.default_rng(seed)
    per_task = rng.integers(1, 6, n_tasks)  # 1..5 attempts, mean 3
    n_att = int(per_task.sum())
    task_idx = np.repeat(np.arange(n_tasks), per_task)
    first = np.cumsum(per_task) - per_task
    attempt_no = np.arange(n_att) - np.repeat(first, per_task) + 1
    last = attempt_no == np.repeat(per_task, per_task)
    outcome = np.where(rng.random(n_att) < 0.9, "retried", "lost").astype(object)
    outcome[last] = np.where(rng.random(int(last.sum())) < 0.97, "completed", "failed")
    worker = rng.integers(0, len(WORKERS), n_att)
    seconds = rng.gamma(4.0, 15.0, n_att)
    order = np.argsort(worker, kind="stable")
    start = np.empty(n_att)
    ends = np.empty(n_att)
    for w in range(len(WORKERS)):
        mine = order[worker[order] == w]
        gaps = rng.exponential(2.0, len(mine))
        ends[mine] = np.cumsum(seconds[mine] + gaps)
        start[mine] = ends[mine] - seconds[mine]
    claimed = T0 + (start * 1e6).astype("timedelta64[us]")
    finished = T0 + (ends * 1e6).astype("timedelta64[us]")
    lane = rng.integers(0, len(LANES), n_tasks)
    task_ids = np.char.add("task-", np.arange(n_tasks).astype(str))
    last_end = pd.Series(finished).groupby(task_idx).max().to_numpy()
    final = outcome[last]
    tasks = pd.DataFrame(
        {
            "id": np.arange(1, n_tasks + 1),
            "task_id": task_ids,
            "bookcode": "bench",
            "shot_id": np.char.add("shot-", (np.arange(n_tasks) // 2).astype(str)),
            "kind": [LANES[i][1] for i in lane],
            "lane": [LANES[i][0] for i in lane],
            "status": final,
            "priority": 0,
            "worker_id": np.array(WORKERS)[worker[last]],
            "attempts": per_task,
            "max_attempts": 5,
            "cost": 0.0,
            "created_at": T0,
            "finished_at": last_end,
            "output_path": None,
        }
    )
    attempts = pd.DataFrame(
        {
            "task_id": task_ids[task_idx],
            "attempt_no": attempt_no,
            "worker_id": np.array(WORKERS)[worker],
            "claimed_at": claimed,
            "finished_at": finished,
            "outcome": outcome,
            "error_kind": np.where(outcome == "retried", "timeout", None),
            "cost": np.where(lane[task_idx] == 2, 0.05, 0.0),
            "model": "bench",
            "output_bytes": 1000,
        }
    )
    lost = attempts[attempts["outcome"] == "lost"]
    span = int(ends.max())
    beats = [(w, T0 + np.arange(0, span, HEARTBEAT_S) * np.timedelta64(1, "s")) for w in WORKERS]
    events = pd.concat(
        [
            pd.DataFrame({"at": stamps, "kind": "heartbeat", "task_id": None, "worker_id": w, "detail": '{"count": 1}'})
            for w, stamps in beats
        ]
        + [
            pd.DataFrame(
                {
                    "at": lost["finished_at"].to_numpy(),
                    "kind": "reclaim",
                    "task_id": lost["task_id"].to_numpy(),
                    "worker_id": lost["worker_id"].to_numpy(),
                    "detail": '{"by": "pc-01"}',
                }
            )
        ],
        ignore_index=True,
    )
    events.insert(0, "id", np.arange(1, len(events) + 1))
    workers = pd.DataFrame(
        {
            "worker_id": WORKERS,
            "uid": None,
            "host": [f"host-{w}" for w in WORKERS],
            "version": "0.1.0",
            "lanes": "image,video,llm",
            "backend": "sketch",
            "started_at": T0,
            "last_seen_at": finished.max(),
            "state": "stopped",
        }
    )
    frames = {"tasks": tasks, "attempts": attempts, "events": events, "workers": workers}
    return RunLog(**{name: normalise(name, f) for name, f in frames.items()})


def time_sqlite_load(n_tasks: int) -> dict[str, float]:
    """In a child process (so its memory stays out of the report's peak): store the synthetic
    log in a SQLite file with the real schema, then time `load` reading it back."""
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        write_s, url = timed(lambda: write_sqlite(synthetic(n_tasks), Path(tmp) / "bench.db"))
        db = create(url)
        load_s, loaded = timed(lambda: load(db))
        db.dispose()
        return {
            "write_sqlite_s": round(write_s, 2),
            "load_sqlite_s": round(load_s, 2),
            "loaded_attempts": len(loaded.attempts),
            "peak_rss_mb": round(peak_rss_mb(), 1),
        }


def write_sqlite(log: RunLog, path: Path) -> str:
    """Store the log in a fresh SQLite file with the real schema (not timed)."""
    url = f"sqlite:///{path}"
    db = create(url)
    init(db)
    seed_default_lanes(db)
    with db.engine.begin() as conn:
        for name in ("workers", "tasks", "attempts", "events"):
            frame = getattr(log, name).drop(columns=["by", "count", "op"], errors="ignore")
            if name == "tasks":
                frame = frame.assign(retry_base=0, run_after=frame["created_at"], deps_remaining=0)
            if name == "attempts":
                frame = frame.assign(lease_token="t")
            if name == "events":
                frame = frame.assign(detail=frame["detail"].map(json.loads))
            frame.to_sql(name, conn, if_exists="append", index=False, chunksize=50_000, method=_schema_insert)
    db.dispose()
    return url


def _schema_insert(table: Any, conn: Any, keys: list[str], rows: Any) -> None:
    """pandas' to_sql through the project's own Table, so its column defaults apply."""
    records = [dict(zip(keys, r, strict=True)) for r in rows]
    conn.execute(sa.insert(metadata.tables[table.name]), records)


# --- the pandas twins of the heaviest metrics, for the side-by-side ------------------------------


def idle_time_pandas(log: RunLog) -> pd.DataFrame:
    a = log.attempts[["worker_id", "claimed_at", "finished_at"]].dropna(subset=["claimed_at"])
    a = a.assign(e=a["finished_at"].fillna(log.as_of)).sort_values(["worker_id", "claimed_at", "e"])
    prev = a.groupby("worker_id")["e"].transform(lambda s: s.cummax().shift())
    grp = (prev.isna() | (a["claimed_at"] > prev)).astype(int).groupby(a["worker_id"]).cumsum()
    u = a.groupby([a["worker_id"], grp]).agg(s=("claimed_at", "min"), e=("e", "max"))
    u["busy"] = (u["e"] - u["s"]).dt.total_seconds()
    w = u.groupby(level=0).agg(first=("s", "min"), last=("e", "max"), busy_s=("busy", "sum"))
    w["span_s"] = (w["last"] - w["first"]).dt.total_seconds()
    w["idle_s"] = w["span_s"] - w["busy_s"]
    return w.reset_index()


def duration_stats_pandas(log: RunLog) -> pd.DataFrame:
    a = log.attempts[log.attempts["outcome"] == "completed"]
    d = a.merge(log.tasks[["task_id", "lane", "kind"]], on="task_id")
    d["seconds"] = (d["finished_at"] - d["claimed_at"]).dt.total_seconds()
    g = d.groupby(["lane", "kind"])["seconds"]
    return pd.DataFrame(
        {"attempts": g.size(), "mean_s": g.mean(), "p50_s": g.median(), "p90_s": g.quantile(0.9), "max_s": g.max()}
    ).reset_index()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k tasks instead of 1M")
    parser.add_argument("--out", type=Path, default=Path("reports/bench"))
    parser.add_argument("--skip-sqlite", action="store_true", help="do not time loading")
    args = parser.parse_args(argv)
    n_tasks = 100_000 if args.quick else 1_000_000
    sqlite: dict[str, float] = {}
    if not args.skip_sqlite:
        # First, while this process is small: a child's peak RSS starts from its parent's.
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            sqlite = pool.submit(time_sqlite_load, n_tasks).result()
        print(f"SQLite (child process): {sqlite}", flush=True)
    gen_s, log = timed(lambda: synthetic(n_tasks))
    print(
        f"generated {len(log.tasks):,} tasks, {len(log.attempts):,} attempts, "
        f"{len(log.events):,} events in {gen_s:.1f} s",
        flush=True,
    )
    result: dict[str, Any] = {
        "tasks": len(log.tasks),
        "attempts": len(log.attempts),
        "events": len(log.events),
        "workers": len(log.workers),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "generate_s": round(gen_s, 2),
    }
    if sqlite:
        result["sqlite"] = sqlite
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        steps: dict[str, Callable[[], Any]] = {
            "completed_per_pc": lambda: metrics.completed_per_pc(log),
            "throughput": lambda: metrics.throughput(log),
            "duration_stats": lambda: metrics.duration_stats(log),
            "costs": lambda: metrics.costs(log),
            "queue_depth": lambda: metrics.queue_depth(log),
            "eta": lambda: metrics.eta(log),
            "attempts_per_task": lambda: reliability.attempts_per_task(log),
            "errors_by_kind": lambda: reliability.errors_by_kind(log),
            "outcomes_by_pc": lambda: reliability.outcomes_by_pc(log),
            "reclaims": lambda: reliability.reclaims(log),
            "heartbeat_gaps": lambda: reliability.heartbeat_gaps(log),
            "idle_time": lambda: reliability.idle_time(log),
            "replay": lambda: replay(log),
        }
        per_metric = {}
        for name, fn in steps.items():
            per_metric[name] = round(timed(fn)[0], 3)
            print(f"  {name}: {per_metric[name]:.2f} s", flush=True)
        result["metric_s"] = per_metric
        cpu = time.process_time()
        result["report_s"], _ = timed(lambda: write_report_for(log, Path(tmp) / "report"))
        result["report_cpu_s"] = round(time.process_time() - cpu, 2)
        result["report_replayed"] = len(log.attempts) <= REPLAY_MAX_ATTEMPTS
        print(
            f"full report (metrics, charts, CSV, Parquet; replay included: "
            f"{result['report_replayed']}): {result['report_s']:.1f} s",
            flush=True,
        )
    side: dict[str, dict[str, float]] = {}
    for name, duck_fn, pandas_fn in (
        ("idle_time", lambda: reliability.idle_time(log), lambda: idle_time_pandas(log)),
        ("duration_stats", lambda: metrics.duration_stats(log), lambda: duration_stats_pandas(log)),
    ):
        d_s, d_val = timed(duck_fn)
        p_s, p_val = timed(pandas_fn)
        assert np.allclose(
            sorted(d_val["busy_s" if name == "idle_time" else "p50_s"]),
            sorted(p_val["busy_s" if name == "idle_time" else "p50_s"]),
        )
        side[name] = {"duckdb_s": round(d_s, 3), "pandas_s": round(p_s, 3)}
    result["duckdb_vs_pandas"] = side
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    result["load_average"] = round(os.getloadavg()[0], 2)
    result["cpus"] = os.cpu_count()
    result["goal"] = {
        "report_s_max": 60,
        "peak_rss_mb_max": 4096,
        "met": result["report_s"] < 60 and result["peak_rss_mb"] < 4096,
    }
    result["report_s"] = round(result["report_s"], 2)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "report_bench_quick" if args.quick else "report_bench"
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / f"{stem}.md").write_text(_markdown(result))
    print(_markdown(result))
    return 0


def _markdown(r: dict[str, Any]) -> str:
    lines = [
        f"# Report benchmark: {r['tasks']:,} tasks, {r['attempts']:,} attempts, {r['events']:,} events",
        "",
        "| step | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {v:.2f} |" for k, v in r["metric_s"].items()]
    lines += [
        f"| **full report** (replay in it: {r['report_replayed']}) | **{r['report_s']:.2f}** |",
        "",
        f"Full report CPU time (all threads): {r['report_cpu_s']:.1f} s; load average at "
        f"the end {r['load_average']:.1f} on {r['cpus']} cores (the machine is shared).",
        "",
        f"Peak RSS: {r['peak_rss_mb']:,.0f} MB. Goal (< 60 s, < 4 GB) met: {r['goal']['met']}.",
        "",
    ]
    if "sqlite" in r:
        s = r["sqlite"]
        lines += [
            f"Loading the same log from a SQLite file with `load` (separate process): "
            f"{s['load_sqlite_s']:.1f} s, peak RSS {s['peak_rss_mb']:,.0f} MB "
            f"(writing the file took {s['write_sqlite_s']:.1f} s, not counted).",
            "",
        ]
    lines += ["| metric | DuckDB s | pandas s |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['duckdb_s']:.2f} | {v['pandas_s']:.2f} |" for k, v in r["duckdb_vs_pandas"].items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
