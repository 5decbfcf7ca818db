"""What the bench measured, as frozen rows: one module so JSON and markdown read the same shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline_kit.bench.peers import PeerFigures


@dataclass(frozen=True)
class Sample:
    """One timed run of one mode (engine or raw) in one configuration."""

    mode: str  # "engine" | "raw" | "minimal"
    tasks: int  # drained by the run
    tasks_per_s: float
    enqueue_per_s: float
    cpu_ms_per_task: float  # worker-process CPU per task: load-independent client cost
    exactly_once: bool
    per_worker: tuple[int, ...]


@dataclass(frozen=True)
class ThroughputRow:
    """Claim-to-complete throughput of the engine and of the raw ceilings, side by side."""

    database: str
    workers: int
    batch: int
    tasks: int
    runs: int
    tasks_per_s: float  # median of the engine runs
    tasks_per_s_min: float
    tasks_per_s_max: float
    raw_tasks_per_s: float  # median of the raw runs
    raw_tasks_per_s_min: float
    raw_tasks_per_s_max: float
    ratio: float  # engine median / raw median
    minimal_tasks_per_s: float  # median of the minimal runs (no attempt history)
    minimal_tasks_per_s_min: float
    minimal_tasks_per_s_max: float
    minimal_ratio: float  # engine median / minimal median
    cpu_ms_per_task: float  # engine worker CPU per task, median
    raw_cpu_ms_per_task: float
    exactly_once: bool  # every run of every mode: each task completed exactly once
    fairness: float  # smallest worker share x workers, median over engine runs (1.0 = even)


@dataclass(frozen=True)
class EnqueueRow:
    """Bulk enqueue rate: one engine.enqueue call of all tasks, timed to its commit."""

    database: str
    tasks: int
    runs: int
    tasks_per_s: float
    tasks_per_s_min: float
    tasks_per_s_max: float


@dataclass(frozen=True)
class LatencyRow:
    """Single-client claim latency (claim of 1 + commit) on a given backlog."""

    database: str
    pending: int
    completed: int  # finished tasks kept in the table (history)
    claims: int
    p50_ms: float
    p95_ms: float
    raw_p50_ms: float
    raw_p95_ms: float
    seed_s: float  # time to bulk-insert the backlog by SQL


@dataclass(frozen=True)
class Goal:
    """One stated goal and whether this run met it."""

    goal: str
    met: bool | None  # None: not measured in this run
    detail: str


@dataclass(frozen=True)
class BenchReport:
    started_at: str
    seconds: float
    machine: dict[str, Any]
    config: dict[str, Any]
    results: tuple[ThroughputRow, ...]
    enqueue: tuple[EnqueueRow, ...]
    latency: tuple[LatencyRow, ...]
    goals: tuple[Goal, ...]
    peers: PeerFigures  # the peer figures the goals were judged against, and their source
    failures: tuple[str, ...] = ()  # databases whose measurement stopped early, and why
