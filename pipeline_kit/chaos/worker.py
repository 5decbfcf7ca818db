"""One chaos worker process: the real worker runtime with short timings, started by the runner.

    python -m pipeline_kit.chaos.worker URL WORKER_ID BACKEND LEASE_S HEARTBEAT_S LANE

It imports only the runtime (not the CLI with its analysis stack), so a restarted worker is back
within a second or two; the watchdog runs every second so recovery is bounded by lease + 1 s.
With $PIPELINE_KIT_CHAOS_SKEW_S set, the worker's wall clock (time.time, datetime.now) runs
that many seconds off, like a PC whose clock drifted: leases must not care, because they are
timed by the database clock.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import time
from pathlib import Path


def skew_wall_clock(seconds: float) -> None:
    """Shift this process's wall clock (not its monotonic clock) by `seconds`.

    Debian's libfaketime would be the outside way, but it hangs Python 3.11's sleeps here.
    """
    real_time = time.time

    class _SkewedDatetime(_dt.datetime):
        @classmethod
        def now(cls, tz: _dt.tzinfo | None = None) -> _SkewedDatetime:  # type: ignore[override]
            return super().now(tz) + _dt.timedelta(seconds=seconds)  # type: ignore[return-value]

        @classmethod
        def utcnow(cls) -> _SkewedDatetime:  # type: ignore[override]
            return super().utcnow() + _dt.timedelta(seconds=seconds)  # type: ignore[return-value]

    time.time = lambda: real_time() + seconds
    _dt.datetime = _SkewedDatetime  # type: ignore[misc]


if os.environ.get("PIPELINE_KIT_CHAOS_SKEW_S"):  # before the runtime imports datetime
    skew_wall_clock(float(os.environ["PIPELINE_KIT_CHAOS_SKEW_S"]))

from pipeline_kit.db.connect import create  # noqa: E402
from pipeline_kit.worker.reconnect import Reconnect  # noqa: E402
from pipeline_kit.worker.runtime import WorkerConfig, run_worker  # noqa: E402

WATCHDOG_EVERY_S = 1.0


def main(argv: list[str]) -> int:
    url, worker_id, backend, lease_s, heartbeat_s, lane = argv
    cfg = WorkerConfig(
        worker_id=worker_id,
        lanes=(lane,),
        backend=backend,
        until_empty=True,
        lease_s=float(lease_s),
        heartbeat_s=float(heartbeat_s),
        spool=Path("data/spool"),
        poll_s=0.2,
        watchdog_every_s=WATCHDOG_EVERY_S,
        progress=False,
        reconnect=Reconnect(max_outage_s=120.0),
    )
    summary = run_worker(create(url), cfg, handle_signals=True)
    print(summary.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
