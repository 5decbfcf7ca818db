"""Worker subcommands: work (one PC's worker) and demo (the whole pipeline on SQLite)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pipeline_kit.cli.common import open_db, positive_float, positive_int
from pipeline_kit.errors import BadInput
from pipeline_kit.store import check_url
from pipeline_kit.worker import WorkerConfig, run_worker
from pipeline_kit.worker.runtime import default_worker_id


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("work", help="run a worker on this PC: claim, generate, heartbeat, complete")
    p.add_argument("--worker-id", default=None, help="this worker's id (default HOST-PID)")
    p.add_argument("--lanes", default="image,video,assembly", help="comma-separated lanes to serve")
    p.add_argument("--backend", default="sketch", help="sketch | noop | sleep:SECONDS | openai | comfyui | ollama")
    p.add_argument("--batch", type=positive_int, default=1, help="tasks claimed per claim")
    stop = p.add_mutually_exclusive_group()
    stop.add_argument("--until-empty", action="store_true", help="stop when the lanes have no open work")
    stop.add_argument("--max-tasks", type=positive_int)
    stop.add_argument("--max-minutes", type=positive_float)
    p.add_argument("--uid", default=None, help="API identity for rate limits (default $PIPELINE_KIT_UID)")
    p.add_argument("--lease", type=positive_float, default=120.0, help="lease seconds")
    p.add_argument("--heartbeat", type=positive_float, default=20.0, help="seconds between lease renewals")
    p.add_argument("--hours", default=None, help="work only in these local hours, e.g. 22-07")
    p.add_argument("--watchdog", type=positive_float, default=15.0,
                   help="seconds between this worker's passes reclaiming expired leases")
    p.add_argument("--outputs", type=Path, default=Path("data/outputs"),
                   help="where outputs are made, and kept when the store is this PC's folder (SQLite)")
    p.add_argument("--store", default=None, metavar="URL",
                   help="this worker's store (a folder, 'database', s3://BUCKET/PREFIX) over `store set`")
    p.add_argument("--cache", type=Path, default=None,
                   help="fetched inputs, by checksum (default: beside --outputs, data/cache)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_work)

    p = sub.add_parser("demo", help="the whole pipeline on the sample book: 3 workers, sketch backend")
    p.add_argument("--workers", type=positive_int, default=3)
    p.set_defaults(func=cmd_demo)


def worker_config(args: argparse.Namespace) -> WorkerConfig:
    """Validate the work flags into a WorkerConfig (bad combinations are BadInput)."""
    lanes = tuple(dict.fromkeys(x.strip() for x in args.lanes.split(",") if x.strip()))
    if not lanes:
        raise BadInput("--lanes needs at least one lane")
    if args.heartbeat >= args.lease:
        raise BadInput(f"--heartbeat ({args.heartbeat:g} s) must be shorter than --lease ({args.lease:g} s)")
    return WorkerConfig(
        worker_id=args.worker_id or default_worker_id(), lanes=lanes, backend=args.backend, batch=args.batch,
        until_empty=args.until_empty, max_tasks=args.max_tasks, max_minutes=args.max_minutes,
        lease_s=args.lease, heartbeat_s=args.heartbeat, uid=args.uid or os.environ.get("PIPELINE_KIT_UID"),
        hours=args.hours, outputs=args.outputs, cache=args.cache,
        store=check_url(args.store) if args.store else None,
        progress=not args.quiet, watchdog_every_s=args.watchdog,
    )


def cmd_work(args: argparse.Namespace) -> int:
    cfg = worker_config(args)
    from pipeline_kit.backends import get_backend
    get_backend(cfg.backend)  # an unknown backend is bad input before anything connects
    summary = run_worker(open_db(args), cfg, handle_signals=True)
    print(summary.line())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from pipeline_kit.db.connect import connect
    from pipeline_kit.demo import run_demo

    result = run_demo(connect(args.db), workers=args.workers)
    print(f"done in {result.seconds:.0f} s: " + ", ".join(f"{n} {s}" for s, n in result.counts.items()))
    print(f"frames and clips: {result.outputs}/")
    if result.film:
        print(f"film: {result.film}")
    if result.report:
        print(f"report: {result.report}")
    return 0 if set(result.counts) == {"completed"} else 1
