"""Peer job queues' throughput: measured the same day (bench/peers.sh) or quoted from REPORT.md.

The same-day figures may also hold raw_sqlite.py's bare claim-10 loop on SQLite, read as one more
peer (library `raw_sqlite.py`), which the SQLite goal compares the engine with.

Figures only, for comparison: no peer code is part of this project. The machine's speed changes
from day to day by up to 2x, so only figures measured the same day on this machine compare
digit by digit; ../shared/bench-peers/REPORT.md (2026-11-29) is the fallback. Each figure is a
median of backlog drains of no-op jobs, one per library, version, process count and configuration.
"""

from __future__ import annotations

import json
import platform
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pipeline_kit.errors import BadInput

PEER_GOAL_LIBRARIES = ("procrastinate", "pgqueuer", "oban")  # the goal: ahead of each on PostgreSQL
RESULTS_FILE = "libs.jsonl"  # what ../shared/bench-peers/run_all.sh writes into $RESULTS
LOOP_FILE = "raw_sqlite.jsonl"  # what ../shared/bench-peers/raw_sqlite.py writes there (optional)
LOOP = "raw_sqlite.py"  # its bare claim loop is read as one more peer on SQLite
LOOP_BATCH = 10  # ... at claim 10 only: the SQLite goal compares the engine with that loop
SQLITE_LIBRARIES = ("huey", LOOP)  # the other peers run on PostgreSQL
REPORT_DAY = "2026-11-29"


@dataclass(frozen=True)
class Peer:
    """One library's median jobs/s in one configuration at one process count."""

    library: str  # name and version, e.g. "pgqueuer 1.6.0"
    database: str
    processes: int
    config: str
    jobs_per_s: float
    runs: int  # clean runs the median is taken over
    measured: str  # the day, or the span of the runs' timestamps

    @property
    def name(self) -> str:
        return self.library.split()[0]


@dataclass(frozen=True)
class PeerFigures:
    """The peer figures a bench run compares with, and where they come from."""

    source: str
    same_day: bool  # every run measured today on this machine
    peers: tuple[Peer, ...]

    @property
    def when(self) -> str:
        return "measured the same day on this machine" if self.same_day else "measured on another day or machine"


PEERS = (  # REPORT.md: median of 3 runs of 20,000 jobs, the best configuration at each process count
    Peer("procrastinate 3.10.0", "postgresql", 1, "concurrency 16", 722, 3, REPORT_DAY),
    Peer("procrastinate 3.10.0", "postgresql", 2, "concurrency 16", 901, 3, REPORT_DAY),
    Peer("pgqueuer 1.6.0", "postgresql", 1, "default: batch 10, unlimited", 6160, 3, REPORT_DAY),
    Peer("pgqueuer 1.6.0", "postgresql", 2, "default: batch 10, unlimited", 7958, 3, REPORT_DAY),
    Peer("oban 0.7.0", "postgresql", 1, "queue limit 16", 1278, 3, REPORT_DAY),
    Peer("oban 0.7.0", "postgresql", 2, "queue limit 16", 2758, 3, REPORT_DAY),
    Peer("huey 3.5.4", "sqlite", 1, "1 thread worker", 4242, 3, REPORT_DAY),
    Peer("huey 3.5.4", "sqlite", 1, "4 process workers", 4016, 3, REPORT_DAY),
)
REPORT_FIGURES = PeerFigures(f"../shared/bench-peers/REPORT.md, measured {REPORT_DAY}", False, PEERS)

# The raw ceilings REPORT.md measured with its own minimal schema (Python + driver, one
# connection per process), for orientation next to this bench's own raw column.
REPORT_RAW = (
    ("postgresql", "claim 1 + complete 1 (psycopg 3)", {1: 1774, 2: 2739, 4: 3713, 8: 4560}),
    ("postgresql", "claim 10 + one UPDATE ANY(ids) (psycopg 3)", {1: 10044, 2: 14543, 4: 18403, 8: 18903}),
    ("sqlite", "claim 1 + complete (WAL, synchronous=NORMAL)", {1: 19091, 2: 18932, 4: 20250}),
    ("sqlite", "claim 10 + one completion", {1: 120858, 2: 117547, 4: 105447}),
)


@dataclass(frozen=True)
class _Run:
    """One clean throughput run read from libs.jsonl."""

    lib: str
    version: str
    processes: int
    config: str
    jobs_per_s: float
    at: datetime
    host: str


def read_measured(folder: Path) -> PeerFigures:
    """The peers measured into `folder`/libs.jsonl (and raw_sqlite.py's claim-10 loop from
    `folder`/raw_sqlite.jsonl if there), one median per library, version, process count and configuration;
    BadInput if a file is malformed, or libs.jsonl is missing or has no clean run of a goal library."""
    path = folder / RESULTS_FILE
    if not path.is_file():
        raise BadInput(f"no peer results at {path} (bench/peers.sh writes them)")
    runs = _clean_runs(path, _lib_run)
    if not any(r.lib in PEER_GOAL_LIBRARIES for r in runs):
        raise BadInput(
            f"{path}: no clean throughput run of {', '.join(PEER_GOAL_LIBRARIES)} "
            "(status ok, no duplicate, none missing); bench/peers.sh measures them"
        )
    loop_path = folder / LOOP_FILE
    loops = _clean_runs(loop_path, _loop_run) if loop_path.is_file() else []
    groups: dict[tuple[str, str, int, str], list[_Run]] = {}
    for run in runs + loops:
        groups.setdefault((run.lib, run.version, run.processes, run.config), []).append(run)
    peers = tuple(
        Peer(
            f"{lib} {version}",
            "sqlite" if lib in SQLITE_LIBRARIES else "postgresql",
            processes,
            config,
            statistics.median(r.jobs_per_s for r in group),
            len(group),
            _span(group),
        )
        for (lib, version, processes, config), group in groups.items()
    )
    hosts = sorted({r.host for r in runs + loops})
    same_day = {r.at.date() for r in runs + loops} == {date.today()} and hosts == [platform.node()]
    source = f"{path}, {len(runs)} runs {_span(runs)}"
    if loops:
        source += f"; {loop_path}, {len(loops)} runs {_span(loops)}"
    return PeerFigures(f"{source} on host {', '.join(hosts)}", same_day, peers)


def best(peers: Iterable[Peer]) -> dict[tuple[str, str, int], Peer]:
    """Each library's fastest configuration per (name, database, process count): what the goal compares with."""
    found: dict[tuple[str, str, int], Peer] = {}
    for peer in peers:
        key = (peer.name, peer.database, peer.processes)
        if key not in found or peer.jobs_per_s > found[key].jobs_per_s:
            found[key] = peer
    return found


def _clean_runs(path: Path, parse: Callable[[dict[str, Any]], _Run | None]) -> list[_Run]:
    """The runs in `path` that `parse` finds clean (it returns None for the others); BadInput if a line
    is not a run record."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from None
    runs: list[_Run] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            run = parse(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BadInput(
                f"{path} line {number} is not a run record of bench-peers ({type(exc).__name__}: {exc})"
            ) from None
        if run is not None:
            runs.append(run)
    return runs


def _lib_run(row: dict[str, Any]) -> _Run | None:
    """A throughput run of lib_bench.py (or pipeline_kit.bench.graphile) if its status is ok, none is
    missing and no job ran twice (`duplicates` null: not counted, as graphile-worker's script)."""
    outcome = (row.get("mode"), row.get("status"), row.get("missing"))
    if outcome != ("throughput", "ok", 0) or row.get("duplicates") not in (0, None):
        return None
    return _Run(
        str(row["lib"]),
        str(row["version"]),
        int(row["procs"]),
        str(row["config"]),
        float(row["jobs_per_s"]),
        datetime.fromisoformat(row["ts"]),
        str(row["host"]),
    )


def _loop_run(row: dict[str, Any]) -> _Run | None:
    """A run of raw_sqlite.py's claim-10 loop if it verified every job completed once, on the partial
    index (its INDEXED BY; without it the loop measures the planner trap, not the ceiling)."""
    if int(row["k"]) != LOOP_BATCH or row["verified"] is not True or row.get("indexed_by") is False:
        return None
    return _Run(
        LOOP,
        f"SQLite {row['sqlite_version']}",
        int(row["procs"]),
        f"claim {LOOP_BATCH}, busy {row['mode']}",
        float(row["jobs_per_s"]),
        datetime.fromisoformat(row["ts"]),
        str(row["host"]),
    )


def _span(runs: Iterable[_Run]) -> str:
    """When the runs ran: '2026-11-30 05:34–05:39', with the second date only if it differs."""
    stamps = sorted(r.at for r in runs)
    first, last = stamps[0], stamps[-1]
    end = f"{last:%H:%M}" if first.date() == last.date() else f"{last:%Y-%m-%d %H:%M}"
    return f"{first:%Y-%m-%d %H:%M}–{end}"
