"""One chaos worker process: the real worker runtime with short timings, started by the runner.

    python -m pipeline_kit.chaos.worker URL WORKER_ID BACKEND LEASE_S HEARTBEAT_S LANE

It imports only the runtime (not the CLI with its analysis stack), so a restarted worker is back
within a second or two; the watchdog runs every second so recovery is bounded by lease + 1 s.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline_kit.db.connect import create
from pipeline_kit.worker.reconnect import Reconnect
from pipeline_kit.worker.runtime import WorkerConfig, run_worker

WATCHDOG_EVERY_S = 1.0


def main(argv: list[str]) -> int:
    url, worker_id, backend, lease_s, heartbeat_s, lane = argv
    cfg = WorkerConfig(worker_id=worker_id, lanes=(lane,), backend=backend, until_empty=True,
                       lease_s=float(lease_s), heartbeat_s=float(heartbeat_s), outputs=Path("data/outputs"),
                       spool=Path("data/spool"), poll_s=0.2, watchdog_every_s=WATCHDOG_EVERY_S,
                       progress=False, reconnect=Reconnect(max_outage_s=120.0))
    summary = run_worker(create(url), cfg, handle_signals=True)
    print(summary.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
