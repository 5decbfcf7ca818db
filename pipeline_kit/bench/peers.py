"""Peer job queues as measured on this machine (../shared/bench-peers/REPORT.md, 2026-11-29).

Figures only, quoted for comparison: no peer code is part of this project. Each is the median
of 3 runs of 20,000 no-op jobs (backlog drain) on PostgreSQL 15 (huey: SQLite), with the
library's best configuration at that process count.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "../shared/bench-peers/REPORT.md (measured 2026-11-29 on this machine)"


@dataclass(frozen=True)
class Peer:
    library: str
    database: str
    processes: int
    config: str
    jobs_per_s: float


PEERS = (
    Peer("procrastinate 3.10.0", "postgresql", 1, "concurrency 16", 722),
    Peer("procrastinate 3.10.0", "postgresql", 2, "concurrency 16", 901),
    Peer("pgqueuer 1.6.0", "postgresql", 1, "default: batch 10, unlimited", 6160),
    Peer("pgqueuer 1.6.0", "postgresql", 2, "default: batch 10, unlimited", 7958),
    Peer("oban 0.7.0", "postgresql", 1, "queue limit 16", 1278),
    Peer("oban 0.7.0", "postgresql", 2, "queue limit 16", 2758),
    Peer("huey 3.5.4", "sqlite", 1, "1 thread worker", 4242),
    Peer("huey 3.5.4", "sqlite", 1, "4 process workers", 4016),
)

# The raw ceilings REPORT.md measured with its own minimal schema (Python + driver, one
# connection per process), for orientation next to this bench's own raw column.
REPORT_RAW = (
    ("postgresql", "claim 1 + complete 1 (psycopg 3)", {1: 1774, 2: 2739, 4: 3713, 8: 4560}),
    ("postgresql", "claim 10 + one UPDATE ANY(ids) (psycopg 3)", {1: 10044, 2: 14543, 4: 18403, 8: 18903}),
    ("sqlite", "claim 1 + complete (WAL, synchronous=NORMAL)", {1: 19091, 2: 18932, 4: 20250}),
    ("sqlite", "claim 10 + one completion", {1: 120858, 2: 117547, 4: 105447}),
)

PEER_GOAL_LIBRARIES = ("procrastinate", "pgqueuer", "oban")  # the goal: ahead of each on PostgreSQL
