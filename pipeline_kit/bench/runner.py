"""One benchmark invocation from start to finish: every database, throughput, then latency."""

from __future__ import annotations

import os
import platform
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timezone
from functools import partial
from importlib.metadata import version
from typing import Any

import sqlalchemy as sa

from pipeline_kit.bench.config import LATENCY_DATABASES, BenchConfig
from pipeline_kit.bench.engine_bench import enqueue_rows, throughput
from pipeline_kit.bench.goals import judge
from pipeline_kit.bench.latency import WARMUP, measure
from pipeline_kit.bench.results import BenchReport, EnqueueRow, LatencyRow, Sample, ThroughputRow
from pipeline_kit.bench.scratch import redo_if_interrupted, scratch_url
from pipeline_kit.db import create
from pipeline_kit.errors import PipelineKitError

Progress = Callable[[str], None]


def run_bench(config: BenchConfig, progress: Progress = lambda _line: None) -> BenchReport:
    """Measure everything `config` asks for, in scratch databases only."""
    started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    clock = time.monotonic()
    load_before = _load()
    results: list[ThroughputRow] = []
    enqueues: list[EnqueueRow] = []
    latency: list[LatencyRow] = []
    servers: dict[str, str] = {}
    failures: list[str] = []
    for database in config.databases:
        samples: list[Sample] = []
        try:  # a database that fails (server restarted, worker died) does not cost the others
            with scratch_url(database, config) as url:
                servers[database] = _server_version(url)
                for row, got in throughput(database, url, config, progress):
                    results.append(row)
                    samples += got
                if database in LATENCY_DATABASES:
                    latency += _latency(database, url, config, progress)
        except (PipelineKitError, sa.exc.DBAPIError) as exc:
            failures.append(f"{database}: {_first_line(exc)}")
            progress(f"{database} stopped: {_first_line(exc)}")
        if samples:
            enqueues += enqueue_rows(database, samples)
    machine = {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlalchemy": sa.__version__,
        "drivers": _drivers(),
        "servers": servers,
        "load_before": load_before,
        "load_after": _load(),
    }
    return BenchReport(
        started_at=started,
        seconds=time.monotonic() - clock,
        machine=machine,
        config=_config_json(config),
        results=tuple(results),
        enqueue=tuple(enqueues),
        latency=tuple(latency),
        goals=judge(results, latency, config.peers),
        peers=config.peers,
        failures=tuple(failures),
    )


def _latency(database: str, url: str, config: BenchConfig, progress: Progress) -> list[LatencyRow]:
    cases = [(rows, 0) for rows in config.latency_rows]
    if config.latency_history and config.latency_rows:
        cases.append((min(config.latency_rows), config.latency_history))
    rows: list[LatencyRow] = []
    for pending, completed in cases:
        claims = min(config.latency_claims, (pending - 2 * WARMUP) // 2)
        row = redo_if_interrupted(
            partial(measure, database, url, pending=pending, completed=completed, claims=claims),
            url,
            f"{database} latency",
            progress,
        )
        progress(
            f"{database} latency, {pending:,} pending + {completed:,} completed: "
            f"p50 {row.p50_ms:.3f} ms, p95 {row.p95_ms:.3f} ms (raw p50 {row.raw_p50_ms:.3f} ms)"
        )
        rows.append(row)
    return rows


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip()
    return f"{type(orig).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def _server_version(url: str) -> str:
    db = create(url)
    try:
        if db.dialect == "sqlite":
            return f"SQLite {sqlite3.sqlite_version}"
        with db.engine.connect() as conn:
            text = str(conn.execute(sa.text("SELECT version()")).scalar_one())
        return text.split(" on ")[0] if db.dialect == "postgresql" else text
    finally:
        db.dispose()


def _drivers() -> dict[str, str]:
    found: dict[str, str] = {"sqlite3": sqlite3.sqlite_version}
    for name in ("psycopg", "pymysql"):
        try:
            found[name] = version(name)
        except Exception:  # an absent optional driver is simply not listed
            continue
    return found


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _config_json(config: BenchConfig) -> dict[str, Any]:
    data = asdict(config)
    data.pop("pg_admin")
    data.pop("mariadb_admin")
    data.pop("peers")  # the report carries them at its top level
    data["tasks_per_run"] = {str(b): config.tasks_for(b) for b in config.batches}
    data["out"] = str(config.out)
    return data
