"""What a benchmark run measures: databases, worker counts, batch sizes, task counts, runs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pipeline_kit.bench.peers import REPORT_FIGURES, PeerFigures, read_measured
from pipeline_kit.engine.claim import MAX_BATCH
from pipeline_kit.errors import BadInput

DATABASES = ("sqlite", "postgresql", "mariadb")
LATENCY_DATABASES = ("sqlite", "postgresql")  # claim latency vs backlog is measured on these
DEFAULT_PG_ADMIN = "postgresql://root@127.0.0.1:5432/postgres"
DEFAULT_MARIADB_ADMIN = "mysql://root@127.0.0.1:3306/test"
MAX_WORKERS = 64
MAX_TASKS = 10_000_000
MAX_RUNS = 20
MIN_LATENCY_ROWS = 1000
CLAIMS_PER_RUN = 2000  # by default a run drains this many claims' worth of tasks
MAX_DEFAULT_TASKS = 20_000  # ... at most: the peers' own runs drain 20,000 jobs


@dataclass(frozen=True)
class BenchConfig:
    """One benchmark invocation, validated."""

    databases: tuple[str, ...] = DATABASES
    workers: tuple[int, ...] = (1, 2, 4, 8)
    batches: tuple[int, ...] = (1, 10)
    tasks: int | None = None  # per run; None: CLAIMS_PER_RUN claims' worth at each batch size
    runs: int = 3
    latency_rows: tuple[int, ...] = (10_000, 1_000_000)
    latency_history: int = 1_000_000  # completed rows kept under 10k pending; 0 skips that case
    latency_claims: int = 2000
    pg_admin: str = DEFAULT_PG_ADMIN
    mariadb_admin: str = DEFAULT_MARIADB_ADMIN
    out: Path = Path("reports/bench")
    quick: bool = False
    run_timeout_s: float = 600.0
    peers: PeerFigures = REPORT_FIGURES  # what the peer goal compares with; --peers DIR: same-day figures

    def tasks_for(self, batch: int) -> int:
        """Tasks per run at `batch`: --tasks if given, else 2,000 claims' worth (2,000 at batch 1,
        20,000 at batch 10), so a run lasts about as long at every batch size instead of a tenth
        of a second at batch 10, where scheduling noise decides the median."""
        return self.tasks if self.tasks is not None else min(CLAIMS_PER_RUN * batch, MAX_DEFAULT_TASKS)


def build_config(
    *,
    quick: bool = False,
    databases: str | None = None,
    workers: str | None = None,
    batches: str | None = None,
    tasks: int | None = None,
    runs: int | None = None,
    latency_rows: str | None = None,
    out: Path | None = None,
    peers: Path | None = None,
) -> BenchConfig:
    """Validate command-line style values into a BenchConfig; anything wrong is BadInput.

    `peers`: a folder with bench/peers.sh's libs.jsonl, read here so a bad one stops the bench at once."""
    base = (
        BenchConfig(
            workers=(1, 2),
            tasks=1000,
            runs=1,
            latency_rows=(10_000, 100_000),
            latency_history=0,
            latency_claims=200,
            quick=True,
        )
        if quick
        else BenchConfig()
    )
    dbs = _names(databases) if databases is not None else base.databases
    for name in dbs:
        if name not in DATABASES:
            raise BadInput(f"--databases: unknown database {name!r} (choose from {', '.join(DATABASES)})")
    task_count = base.tasks if tasks is None else tasks
    if task_count is not None and not 10 <= task_count <= MAX_TASKS:
        raise BadInput(f"--tasks must be from 10 to {MAX_TASKS}, got {task_count}")
    run_count = base.runs if runs is None else runs
    if not 1 <= run_count <= MAX_RUNS:
        raise BadInput(f"--runs must be from 1 to {MAX_RUNS}, got {run_count}")
    return BenchConfig(
        databases=dbs,
        workers=_ints("--workers", workers, base.workers, MAX_WORKERS),
        batches=_ints("--batches", batches, base.batches, MAX_BATCH),
        tasks=task_count,
        runs=run_count,
        latency_rows=()
        if (latency_rows or "").strip() == "0"
        else _ints("--latency-rows", latency_rows, base.latency_rows, MAX_TASKS, low=MIN_LATENCY_ROWS),
        latency_history=base.latency_history,
        latency_claims=base.latency_claims,
        pg_admin=os.environ.get("PIPELINE_KIT_BENCH_PG", DEFAULT_PG_ADMIN),
        mariadb_admin=os.environ.get("PIPELINE_KIT_BENCH_MARIADB", DEFAULT_MARIADB_ADMIN),
        out=out if out is not None else base.out,
        quick=quick,
        peers=REPORT_FIGURES if peers is None else read_measured(peers),
    )


def _names(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    if not names:
        raise BadInput("--databases needs at least one of " + ", ".join(DATABASES))
    return names


def _ints(flag: str, text: str | None, default: tuple[int, ...], high: int, *, low: int = 1) -> tuple[int, ...]:
    """A comma-separated list of whole numbers from `low` to `high`, in the order given."""
    if text is None:
        return default
    values: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        try:
            value = int(part)
        except ValueError:
            raise BadInput(f"{flag}: expected whole numbers like 1,2,4, got {part!r}") from None
        if not low <= value <= high:
            raise BadInput(f"{flag}: each value must be from {low} to {high}, got {value}")
        values.append(value)
    return tuple(dict.fromkeys(values))
