"""Wake-up benchmark: how soon an idle worker starts new work, and what idling costs.

    python bench/wake_bench.py [--quick] [--runs R] [--probes N] [--databases sqlite,postgresql,mariadb]

Per database, one `pipeline-kit work` process (tasks of 20 ms, default poll):
1. idle CPU: the worker's own CPU seconds (/proc) over an idle stretch, as a share of one core;
2. idle latency: probes enqueued one at a time at random gaps; latency = the probe's attempt
   `claimed_at` minus the task's `created_at`, both from the database clock;
3. busy latency: the same probes at high priority while a second worker and this one drain a
   backlog of 20 ms tasks; the backlog still pending when the last probe is done is reported
   (`busy_backlog_left`, a share of the backlog): above 0%, both workers were busy throughout.
Goals: p50 idle latency at most 50 ms on PostgreSQL (LISTEN/NOTIFY), at most 1 s elsewhere
(polling); idle CPU under 1% of a core.
Results: reports/bench/wake.json and reports/bench/wake.md (medians over --runs runs).
PostgreSQL and MariaDB get scratch databases that are dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline_kit import engine  # noqa: E402
from pipeline_kit.db import Database, create  # noqa: E402
from pipeline_kit.db.migrate import init  # noqa: E402
from pipeline_kit.db.schema import attempts, tasks, workers  # noqa: E402

SERVERS = {"postgresql": "postgresql://root@127.0.0.1:5432/postgres", "mariadb": "mysql://root@127.0.0.1:3306/test"}
GOAL_P50_MS = {"postgresql": 50.0, "sqlite": 1000.0, "mariadb": 1000.0}
GOAL_IDLE_CPU = 0.01


@contextmanager
def scratch(database: str) -> Iterator[str]:
    """A fresh, initialised database of that kind; dropped (or deleted) afterwards."""
    if database == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/wake.db"
            _prepare(url)
            yield url
        return
    name = f"pk_wake_{uuid.uuid4().hex[:8]}"
    admin = create(SERVERS[database]).engine.execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}" + (" CHARACTER SET utf8mb4" if database == "mariadb" else "")))
    url = SERVERS[database].rsplit("/", 1)[0] + f"/{name}"
    try:
        _prepare(url)
        yield url
    finally:
        with admin.connect() as conn:
            force = " WITH (FORCE)" if database == "postgresql" else ""
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}{force}"))
        admin.dispose()


def _prepare(url: str) -> None:
    db = create(url)
    init(db)
    engine.seed_default_lanes(db)
    db.dispose()


def _worker(url: str, worker_id: str, tmp: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipeline_kit",
            "--db",
            url,
            "work",
            "--worker-id",
            worker_id,
            "--lanes",
            "default",
            "--backend",
            "sleep:0.02",
            "--quiet",
            "--outputs",
            f"{tmp}/out",
            "--lease",
            "60",
        ],
        cwd=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _wait_registered(db: Database, worker_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with db.engine.connect() as conn:
            if conn.execute(sa.select(workers.c.worker_id).where(workers.c.worker_id == worker_id)).first():
                return
        time.sleep(0.1)
    raise RuntimeError(f"worker {worker_id} did not start")


def _probe(db: Database, task_id: str, priority: int) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [engine.TaskSpec(task_id=task_id, kind="noop", lane="default", priority=priority)])


def _latencies_ms(db: Database, prefix: str) -> list[float]:
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(tasks.c.created_at, attempts.c.claimed_at)
            .join(attempts, attempts.c.task_id == tasks.c.task_id)
            .where(tasks.c.task_id.like(f"{prefix}%"))
        ).all()
    return [(_at(claimed) - _at(created)).total_seconds() * 1000 for created, claimed in rows]


def _at(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _drained(db: Database, prefix: str, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with db.engine.connect() as conn:
            done = conn.execute(
                sa.select(sa.func.count())
                .select_from(tasks)
                .where(tasks.c.task_id.like(f"{prefix}%"), tasks.c.status == "completed")
            ).scalar_one()
        if done >= count:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{prefix}: only {done} of {count} probes completed")


def measure(database: str, *, probes: int, idle_s: float) -> dict[str, object]:
    with scratch(database) as url, tempfile.TemporaryDirectory() as tmp:
        db = create(url)
        worker = _worker(url, "idle-1", tmp)
        helper = None
        try:
            _wait_registered(db, "idle-1")
            time.sleep(2)  # past start-up
            cpu0, t0 = _cpu_s(worker.pid), time.monotonic()
            time.sleep(idle_s)
            idle_cpu = (_cpu_s(worker.pid) - cpu0) / (time.monotonic() - t0)
            for i in range(probes):
                _probe(db, f"idle-{i:04d}", 0)
                _drained(db, f"idle-{i:04d}", 1)
                time.sleep(random.uniform(0.2, 0.6))
            idle = _latencies_ms(db, "idle-")
            with db.engine.begin() as conn:  # a backlog of 20 ms tasks keeps the fleet busy
                engine.enqueue(
                    conn,
                    [engine.TaskSpec(task_id=f"load-{i:05d}", kind="noop", lane="default") for i in range(probes * 40)],
                )
            helper = _worker(url, "busy-2", tmp)
            _wait_registered(db, "busy-2")
            for i in range(probes):
                _probe(db, f"busy-{i:04d}", 10)
                time.sleep(random.uniform(0.05, 0.15))
            _drained(db, "busy-", probes)
            backlog_left = _pending(db, "load-") / (probes * 40)
            busy = _latencies_ms(db, "busy-")
        finally:
            for proc in (worker, helper):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=60)
            db.dispose()
    return {
        "database": database,
        "idle_p50_ms": statistics.median(idle),
        "idle_p95_ms": _p95(idle),
        "busy_p50_ms": statistics.median(busy),
        "busy_p95_ms": _p95(busy),
        "idle_cpu": idle_cpu,
        "busy_backlog_left": backlog_left,
    }


def _pending(db: Database, prefix: str) -> int:
    with db.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(tasks)
                .where(tasks.c.task_id.like(f"{prefix}%"), tasks.c.status == "pending")
            ).scalar_one()
        )


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 run, 10 probes, 5 s idle")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--probes", type=int, default=30)
    ap.add_argument("--databases", default="sqlite,postgresql,mariadb")
    args = ap.parse_args()
    runs, probes, idle_s = (1, 10, 5.0) if args.quick else (args.runs, args.probes, 20.0)
    rows = []
    for database in args.databases.split(","):
        measured = [measure(database, probes=probes, idle_s=idle_s) for _ in range(runs)]
        row = {"database": database, "runs": runs, "probes": probes}
        for key in ("idle_p50_ms", "idle_p95_ms", "busy_p50_ms", "busy_p95_ms", "idle_cpu", "busy_backlog_left"):
            row[key] = statistics.median(float(m[key]) for m in measured)  # type: ignore[arg-type]
        row["goal_met"] = row["idle_p50_ms"] <= GOAL_P50_MS[database] and row["idle_cpu"] < GOAL_IDLE_CPU
        rows.append(row)
        print(
            f"{database}: idle p50 {row['idle_p50_ms']:.0f} ms p95 {row['idle_p95_ms']:.0f} ms; busy p50 "
            f"{row['busy_p50_ms']:.0f} ms p95 {row['busy_p95_ms']:.0f} ms (backlog left "
            f"{row['busy_backlog_left']:.0%}); idle CPU {row['idle_cpu']:.2%}; "
            f"goal {'met' if row['goal_met'] else 'MISSED'}",
            flush=True,
        )
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "wake.json").write_text(
        json.dumps({"at": datetime.now().isoformat(timespec="seconds"), "results": rows}, indent=2)
    )
    lines = [
        "| database | idle p50 ms | idle p95 ms | busy p50 ms | busy p95 ms | backlog left | idle CPU | goal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['database']} | {r['idle_p50_ms']:.0f} | {r['idle_p95_ms']:.0f} | {r['busy_p50_ms']:.0f} | "
        f"{r['busy_p95_ms']:.0f} | {r['busy_backlog_left']:.0%} | {r['idle_cpu']:.2%} | "
        f"{'met' if r['goal_met'] else 'missed'} |"
        for r in rows
    ]
    (out / "wake.md").write_text("\n".join(lines) + "\n")
    return 0 if all(r["goal_met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
