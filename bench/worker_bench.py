"""Worker benchmark: makespan against the ideal, and sketch frames and clips per second per core.

    python bench/worker_bench.py [--quick] [--runs R]
    python bench/worker_bench.py --accounts [--quick] [--runs R] [--databases postgresql,mariadb]

1. N tasks with the `sleep:S` backend (fixed latency per task) drained by 1, 3 and 6 worker
   processes on SQLite: makespan (first claim to last completion, database clock) against the
   ideal N*S/workers. Goal: within 10% of ideal.
2. The sketch backend in one process: storyboard frames per second and 3-second clips per
   second (a single process uses one core).
Results: reports/bench/worker.json and reports/bench/worker.md (medians of --runs runs).

--accounts instead measures what least privilege costs: engine throughput (claim a batch of 10,
complete it, repeat: the engine bench's worker) at 1, 2 and 4 processes on PostgreSQL and
MariaDB, logged in as the owner (plain SQL) and as a grant-worker account (every write through
the owner's routines), whole runs in turns, and then batch by batch within each process (each
process alternates an owner's batch and an account's: what load comes and goes hits both
alike), in one scratch database per server. Goal: the account within 10% of the owner.
Results: reports/bench/worker_accounts.json and .md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline_kit import engine  # noqa: E402
from pipeline_kit.backends import LocalContext, get_backend  # noqa: E402
from pipeline_kit.backends.base import Job  # noqa: E402
from pipeline_kit.bench.config import BenchConfig  # noqa: E402
from pipeline_kit.bench.engine_bench import one_run  # noqa: E402
from pipeline_kit.bench.scratch import reset, scratch_url, settle  # noqa: E402
from pipeline_kit.bench.workload import LANE, enqueue_tasks  # noqa: E402
from pipeline_kit.db import create  # noqa: E402
from pipeline_kit.db.migrate import init  # noqa: E402
from pipeline_kit.db.schema import attempts  # noqa: E402
from pipeline_kit.security import apply, grant_statements  # noqa: E402

ACCOUNT_PROCS = (1, 2, 4)
ACCOUNT_BATCH = 10

FRAME = {
    "bookcode": "bench",
    "shot_id": "bench-c001-s0001",
    "chapter": 1,
    "seq": 1,
    "scene": 1,
    "prompt": "a lighthouse at dusk",
    "caption": "Mara climbed the hundred steps while Tobias held the lantern.",
    "characters": ["Mara", "Tobias"],
    "location": "lighthouse",
    "time_of_day": "dusk",
    "width": 640,
    "height": 360,
}


def makespan(tasks: int, latency: float, workers: int) -> dict[str, float]:
    """Drain `tasks` sleep tasks with `workers` processes; makespan from the attempts' DB times."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        db = create(url)
        init(db)
        engine.seed_default_lanes(db)
        with db.engine.begin() as conn:
            engine.enqueue(
                conn, [engine.TaskSpec(task_id=f"b{i:05d}", kind="noop", lane="default") for i in range(tasks)]
            )
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pipeline_kit",
                    "--db",
                    url,
                    "work",
                    "--worker-id",
                    f"W{w}",
                    "--lanes",
                    "default",
                    "--backend",
                    f"sleep:{latency}",
                    "--until-empty",
                    "--quiet",
                    "--outputs",
                    f"{tmp}/out",
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for w in range(workers)
        ]
        for p in procs:
            p.wait()
        with db.engine.connect() as conn:
            first, last, done = conn.execute(
                sa.select(
                    sa.func.min(attempts.c.claimed_at), sa.func.max(attempts.c.finished_at), sa.func.count()
                ).where(attempts.c.outcome == "completed")
            ).one()
        db.dispose()
    first, last = (datetime.fromisoformat(x) if isinstance(x, str) else x for x in (first, last))
    span = (last - first).total_seconds()
    ideal = tasks * latency / workers
    return {
        "workers": workers,
        "tasks": tasks,
        "completed": done,
        "makespan_s": span,
        "ideal_s": ideal,
        "ratio": span / ideal,
    }


def sketch_rates(frames: int, clips: int) -> dict[str, float]:
    backend = get_backend("sketch")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for i in range(frames):
            backend.run(
                Job(
                    task_id=f"f{i}",
                    kind="first_frame",
                    lane="image",
                    params={**FRAME, "seed": i},
                    inputs={},
                    out_path=Path(tmp) / f"f{i}.png",
                ),
                LocalContext(),
            )
        frame_s = (time.perf_counter() - t0) / frames
        first = Path(tmp) / "f0.png"
        last = Path(tmp) / "f1.png"
        t0 = time.perf_counter()
        for i in range(clips):
            backend.run(
                Job(
                    task_id=f"v{i}",
                    kind="video",
                    lane="video",
                    params={
                        "bookcode": "bench",
                        "shot_id": f"s{i}",
                        "video_prompt": "pan",
                        "caption": "x",
                        "duration_s": 3.0,
                        "fps": 12,
                        "width": 640,
                        "height": 360,
                    },
                    inputs={"first_frame": first, "last_frame": last},
                    out_path=Path(tmp) / f"v{i}.mp4",
                ),
                LocalContext(),
            )
        clip_s = (time.perf_counter() - t0) / clips
    return {"frames_per_s_per_core": 1 / frame_s, "clips_per_s_per_core": 1 / clip_s}


def _alternate(owner_url: str, account_url: str, out: mp.Queue) -> None:  # type: ignore[type-arg]
    """One process: claim and complete a batch as the owner, then one as the worker account, in
    turn until the queue is empty; the seconds each spent, and the tasks each finished."""
    dbs = {"owner": create(owner_url, pool_size=1), "account": create(account_url, pool_size=1)}
    caches = {mode: engine.LaneCache() for mode in dbs}
    spent, done = dict.fromkeys(dbs, 0.0), dict.fromkeys(dbs, 0)
    empty = False
    while not empty:
        for mode, db in dbs.items():
            t0 = time.perf_counter()
            leases = engine.claim(db, mode, [LANE], limit=ACCOUNT_BATCH, lease_s=600, cache=caches[mode])
            if not leases:
                empty = True
                break
            acks = engine.complete_many(db, [engine.Completion(task_id=x.task_id, token=x.token) for x in leases])
            spent[mode] += time.perf_counter() - t0
            done[mode] += list(acks.values()).count(engine.Ack.ACCEPTED)
    for db in dbs.values():
        db.dispose()
    out.put((spent, done))


def interleaved(url: str, account: str, procs: int, tasks: int) -> dict[str, float]:
    """Tasks per second of busy time, as the owner and as the account, when every process
    alternates the two batch by batch: load that comes and goes hits both alike."""
    reset(url)
    db = create(url)
    enqueue_tasks(db, tasks)
    settle(db)
    db.dispose()
    out: mp.Queue = mp.get_context("fork").Queue()  # type: ignore[type-arg]
    children = [mp.get_context("fork").Process(target=_alternate, args=(url, account, out)) for _ in range(procs)]
    for child in children:
        child.start()
    results = [out.get(timeout=600) for _ in children]
    for child in children:
        child.join()
    return {
        mode: sum(done[mode] for _, done in results) / max(1e-9, sum(spent[mode] for spent, _ in results)) * procs
        for mode in ("owner", "account")
    }


def accounts(database: str, tasks: int, runs: int) -> list[dict[str, object]]:
    """Engine throughput as the owner and as a worker account, side by side, per process count."""
    rows: list[dict[str, object]] = []
    with scratch_url(database, BenchConfig()) as url:
        reset(url)
        role, password = f"pk_bench_w_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
        owner = create(url)
        dialect, name = owner.dialect, owner.engine.url.database
        apply(owner, grant_statements(dialect, role, password, database=name))
        owner.dispose()
        account = sa.engine.make_url(url).set(username=role, password=password).render_as_string(hide_password=False)
        try:
            for procs in ACCOUNT_PROCS:
                rates: dict[str, list[float]] = {"owner": [], "account": []}
                for run in range(runs):
                    for mode, worker_url in (("owner", url), ("account", account)):
                        sample = one_run(
                            url,
                            "engine",
                            workers=procs,
                            batch=ACCOUNT_BATCH,
                            tasks=tasks,
                            timeout_s=600,
                            worker_url=worker_url,
                        )
                        if not sample.exactly_once:
                            raise SystemExit(f"{database} {mode} x{procs}: a task was not completed exactly once")
                        rates[mode].append(sample.tasks_per_s)
                        print(
                            f"{database} {procs} proc(s) run {run + 1} {mode}: {sample.tasks_per_s:,.0f} tasks/s",
                            flush=True,
                        )
                mixed = [interleaved(url, account, procs, tasks) for _ in range(runs)]
                alternating = statistics.median(m["account"] / m["owner"] for m in mixed)
                print(f"{database} {procs} proc(s) batch by batch: account / owner {alternating:.2f}", flush=True)
                own, acc = (statistics.median(rates[m]) for m in ("owner", "account"))
                # each account run against the owner run just before it: load that drifts over
                # the minutes a configuration takes hits both sides of a pair alike
                paired = statistics.median(a / o for o, a in zip(rates["owner"], rates["account"]))
                rows.append(
                    {
                        "database": database,
                        "processes": procs,
                        "batch": ACCOUNT_BATCH,
                        "tasks": tasks,
                        "runs": runs,
                        "owner_tasks_per_s": own,
                        "account_tasks_per_s": acc,
                        "owner_runs": rates["owner"],
                        "account_runs": rates["account"],
                        "ratio": acc / own,
                        "paired_ratio": paired,
                        "alternating_ratio": alternating,
                        "alternating_runs": mixed,
                        "within_10pct": paired >= 0.9,
                    }
                )
        finally:
            admin = create(url)
            with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                if dialect == "postgresql":
                    conn.exec_driver_sql(f"DROP OWNED BY {role}")
                    conn.exec_driver_sql(f"DROP ROLE IF EXISTS {role}")
                else:
                    conn.exec_driver_sql(f"DROP USER IF EXISTS '{role}'@'%%'")
            admin.dispose()
    return rows


def write_accounts(rows: list[dict[str, object]]) -> None:
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "worker_accounts.json").write_text(json.dumps({"rows": rows}, indent=2))
    lines = [
        "| database | processes | batch | tasks | owner tasks/s (plain SQL) | worker account tasks/s (routines) "
        "| account / owner (medians) | paired runs, median | batch by batch | within 10% (paired) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['database']} | {r['processes']} | {r['batch']} | {r['tasks']} | {r['owner_tasks_per_s']:,.0f} | "
        f"{r['account_tasks_per_s']:,.0f} | {r['ratio']:.2f} | {r['paired_ratio']:.2f} | "
        f"{r['alternating_ratio']:.2f} | "
        f"{'yes' if r['within_10pct'] else 'no'} |"
        for r in rows
    ]
    (out / "worker_accounts.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 tasks, one run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--accounts", action="store_true", help="owner against worker account, engine throughput")
    parser.add_argument("--databases", default="postgresql,mariadb", help="with --accounts: postgresql,mariadb")
    parser.add_argument("--tasks", type=int, default=5000, help="with --accounts: tasks per run")
    args = parser.parse_args()
    if args.accounts:
        runs, tasks = (1, 1000) if args.quick else (args.runs, args.tasks)
        write_accounts([row for db in args.databases.split(",") for row in accounts(db.strip(), tasks, runs)])
        return
    tasks, runs = (60, 1) if args.quick else (300, args.runs)
    rows = []
    for workers in (1, 3, 6):
        results = [makespan(tasks, args.latency, workers) for _ in range(runs)]
        ratio = statistics.median(r["ratio"] for r in results)
        rows.append(
            {
                **results[0],
                "makespan_s": statistics.median(r["makespan_s"] for r in results),
                "ratio": ratio,
                "runs": runs,
                "within_10pct": ratio <= 1.10,
            }
        )
        print(
            f"{workers} worker(s): makespan {rows[-1]['makespan_s']:.1f} s, ideal {rows[-1]['ideal_s']:.1f} s, "
            f"ratio {ratio:.3f}",
            flush=True,
        )
    rates = [sketch_rates(10 if args.quick else 30, 3 if args.quick else 10) for _ in range(runs)]
    sketch = {k: statistics.median(r[k] for r in rates) for k in rates[0]}
    print(
        f"sketch: {sketch['frames_per_s_per_core']:.1f} frames/s, {sketch['clips_per_s_per_core']:.2f} clips/s per core"
    )
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "worker.json").write_text(
        json.dumps({"makespan": rows, "sketch": sketch, "latency_s": args.latency}, indent=2)
    )
    lines = [
        "| workers | tasks | latency s | makespan s (median) | ideal s | ratio | within 10% |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['workers']} | {r['tasks']} | {args.latency} | {r['makespan_s']:.1f} | {r['ideal_s']:.1f} | "
        f"{r['ratio']:.3f} | {'yes' if r['within_10pct'] else 'no'} |"
        for r in rows
    ]
    lines += [
        "",
        f"sketch backend, one process: {sketch['frames_per_s_per_core']:.1f} frames/s, "
        f"{sketch['clips_per_s_per_core']:.2f} three-second clips/s per core",
    ]
    (out / "worker.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
