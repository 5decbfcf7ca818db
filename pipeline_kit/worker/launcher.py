"""Restart bounded worker-notebook runs through the night, one executed notebook per run.

    python -m pipeline_kit.worker.launcher --worker-id PC-1 --runs 8 --minutes 60

Each run is `papermill notebooks/worker.ipynb reports/runs/PC-1/<time>.ipynb -r worker_id PC-1
-p max_minutes M`; a failed run is logged and the next one starts after a pause, so one bad
hour does not end the night. Stops early when a run finds the lanes empty.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path

import papermill as pm

from pipeline_kit.worker.inflight import MAX_INFLIGHT
from pipeline_kit.worker.runtime import DEFAULT_LANES

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "worker.ipynb"


def run_night(
    worker_id: str,
    *,
    runs: int,
    minutes: float,
    lanes: str,
    backend: str,
    out: Path,
    inflight: int = 1,
    notebook: Path = NOTEBOOK,
    pause_s: float = 30.0,
) -> int:
    """Run up to `runs` bounded notebook runs; returns how many finished without error."""
    ok = 0
    for n in range(1, runs + 1):
        target = out / worker_id / f"{datetime.now():%Y%m%d-%H%M%S}-run{n}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            pm.execute_notebook(
                str(notebook),
                str(target),
                kernel_name="python3",
                progress_bar=False,
                parameters={
                    "worker_id": worker_id,
                    "lanes": lanes,
                    "backend": backend,
                    "inflight": inflight,
                    "max_minutes": minutes,
                    "until_empty": True,
                },
            )
        except pm.PapermillExecutionError as exc:
            sys.stderr.write(f"run {n} of {worker_id} failed: {exc.ename}: {exc.evalue}; see {target}\n")
            time.sleep(pause_s)
            continue
        ok += 1
        nb = target.read_text()
        if '"stopped_by": "empty"' in nb or "stopped: empty" in nb:
            print(f"{worker_id}: lanes empty after run {n}")
            break
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline_kit.worker.launcher", description=__doc__.splitlines()[0])
    parser.add_argument("--worker-id", required=True)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--lanes", default=",".join(DEFAULT_LANES))
    parser.add_argument("--backend", default="sketch")
    parser.add_argument("--inflight", type=int, default=1, help=f"remote jobs held at once, 1 to {MAX_INFLIGHT}")
    parser.add_argument("--out", type=Path, default=Path("reports/runs"))
    args = parser.parse_args(argv)
    if args.runs < 1 or args.minutes <= 0:
        parser.error("--runs and --minutes must be positive")
    if not 1 <= args.inflight <= MAX_INFLIGHT:
        parser.error(f"--inflight must be from 1 to {MAX_INFLIGHT}")
    run_night(
        args.worker_id,
        runs=args.runs,
        minutes=args.minutes,
        lanes=args.lanes,
        backend=args.backend,
        out=args.out,
        inflight=args.inflight,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
