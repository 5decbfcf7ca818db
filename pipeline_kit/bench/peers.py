"""Peer job queues' throughput: measured the same day (bench/peers.sh) or quoted from REPORT.md.

Figures only, for comparison: no peer code is part of this project. The machine's speed changes
from day to day by up to 2x, so only figures measured the same day on this machine compare
digit by digit; ../shared/bench-peers/REPORT.md (2026-11-29) is the fallback. Each figure is a
median of backlog drains of no-op jobs, one per library, version, process count and configuration.
"""

from __future__ import annotations

import json
import platform
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from pipeline_kit.errors import BadInput

PEER_GOAL_LIBRARIES = ("procrastinate", "pgqueuer", "oban")  # the goal: ahead of each on PostgreSQL
RESULTS_FILE = "libs.jsonl"  # what ../shared/bench-peers/run_all.sh writes into $RESULTS
SQLITE_LIBRARIES = ("huey",)  # the other peers run on PostgreSQL
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
    """The peers measured into `folder`/libs.jsonl, one median per library, version, process count and
    configuration; BadInput if the file is missing, malformed, or has no clean run of a goal library."""
    path = folder / RESULTS_FILE
    runs = _clean_runs(path)
    if not any(r.lib in PEER_GOAL_LIBRARIES for r in runs):
        raise BadInput(
            f"{path}: no clean throughput run of {', '.join(PEER_GOAL_LIBRARIES)} "
            "(status ok, no duplicate, none missing); bench/peers.sh measures them"
        )
    groups: dict[tuple[str, str, int, str], list[_Run]] = {}
    for run in runs:
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
    hosts = sorted({r.host for r in runs})
    same_day = {r.at.date() for r in runs} == {date.today()} and hosts == [platform.node()]
    return PeerFigures(f"{path}, {len(runs)} runs {_span(runs)} on host {', '.join(hosts)}", same_day, peers)


def best(peers: Iterable[Peer]) -> dict[tuple[str, str, int], Peer]:
    """Each library's fastest configuration per (name, database, process count): what the goal compares with."""
    found: dict[tuple[str, str, int], Peer] = {}
    for peer in peers:
        key = (peer.name, peer.database, peer.processes)
        if key not in found or peer.jobs_per_s > found[key].jobs_per_s:
            found[key] = peer
    return found


def _clean_runs(path: Path) -> list[_Run]:
    """The throughput runs in `path` with status ok, no duplicate and none missing; other lines are skipped."""
    if not path.is_file():
        raise BadInput(f"no peer results at {path} (bench/peers.sh writes them)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from None
    runs: list[_Run] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            outcome = (row.get("mode"), row.get("status"), row.get("duplicates"), row.get("missing"))
            if outcome == ("throughput", "ok", 0, 0):
                runs.append(
                    _Run(
                        str(row["lib"]),
                        str(row["version"]),
                        int(row["procs"]),
                        str(row["config"]),
                        float(row["jobs_per_s"]),
                        datetime.fromisoformat(row["ts"]),
                        str(row["host"]),
                    )
                )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BadInput(
                f"{path} line {number} is not a run record of bench-peers ({type(exc).__name__}: {exc})"
            ) from None
    return runs


def _span(runs: Iterable[_Run]) -> str:
    """When the runs ran: '2026-11-30 05:34–05:39', with the second date only if it differs."""
    stamps = sorted(r.at for r in runs)
    first, last = stamps[0], stamps[-1]
    end = f"{last:%H:%M}" if first.date() == last.date() else f"{last:%Y-%m-%d %H:%M}"
    return f"{first:%Y-%m-%d %H:%M}–{end}"
