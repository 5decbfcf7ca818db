"""Worker subcommands: work (one PC's worker) and demo (the whole pipeline on SQLite)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


from pipeline_kit.backends import backend_choices
from pipeline_kit.backends.profile import resolve_backend
from pipeline_kit.backends.routing import KINDS as ROUTED, Router, Routing
from pipeline_kit.cli.common import int_in, open_db, positive_float, positive_int
from pipeline_kit.engine.claim import MAX_BATCH
from pipeline_kit.engine.outages import DEFAULT_QUORUM
from pipeline_kit.engine.registry import check_identity
from pipeline_kit.errors import BadInput
from pipeline_kit.store import check_url
from pipeline_kit.worker import WorkerConfig, run_worker
from pipeline_kit.worker.inflight import MAX_INFLIGHT
from pipeline_kit.worker.outages import Backoff
from pipeline_kit.worker.runtime import DEFAULT_LANES, default_heartbeat, default_worker_id
from pipeline_kit.worker.windows import Window


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("work", help="run a worker on this PC: claim, generate, heartbeat, complete")
    p.add_argument("--worker-id", default=None, help="this worker's id (default HOST-PID)")
    p.add_argument(
        "--lanes", default=",".join(DEFAULT_LANES), help="comma-separated lanes to serve (default: %(default)s)"
    )
    p.add_argument(
        "--backend",
        default=None,
        help=f"one backend for every kind ({backend_choices()}) or a routing per kind, KIND=NAME pairs "
        f"and default=NAME for the rest (kinds: {', '.join(ROUTED)}) (default: sketch, offline drawings, "
        "unless the profile's [backends] names others)",
    )
    p.add_argument(
        "--batch",
        type=int_in(1, MAX_BATCH),
        default=1,
        help=f"tasks claimed per claim, 1 to {MAX_BATCH} (default: %(default)s)",
    )
    p.add_argument(
        "--inflight",
        type=int_in(1, MAX_INFLIGHT),
        default=1,
        help=f"remote jobs (of backends that call a service) held at once, polled together, 1 to "
        f"{MAX_INFLIGHT}; local kinds stay one at a time (default: %(default)s)",
    )
    stop = p.add_mutually_exclusive_group()
    stop.add_argument("--until-empty", action="store_true", help="stop when the lanes have no open work")
    stop.add_argument("--max-tasks", type=positive_int, help="stop after this many tasks")
    stop.add_argument(
        "--max-minutes", type=positive_float, help="stop after this many minutes (the task at hand is finished)"
    )
    p.add_argument("--uid", default=None, help="API identity for rate limits (default $PIPELINE_KIT_UID)")
    p.add_argument("--lease", type=positive_float, default=120.0, help="lease seconds (default: %(default)s)")
    p.add_argument(
        "--heartbeat",
        type=positive_float,
        default=None,
        help="seconds between lease renewals (default: a third of --lease, at most 20)",
    )
    p.add_argument("--hours", default=None, help="work only in these local hours, e.g. 22-07")
    p.add_argument(
        "--watchdog",
        type=positive_float,
        default=15.0,
        help="seconds between this worker's passes reclaiming expired leases",
    )
    p.add_argument(
        "--outputs",
        type=Path,
        default=None,
        help="where this worker makes its files before publishing them to the store (default: inside "
        "the store's folder, or data/outputs for a database or S3 store); the store keeps them",
    )
    p.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="this worker's store (a folder, 'database', s3://BUCKET/PREFIX) over `store set`",
    )
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="fetched inputs of a database or S3 store, by checksum (default: beside --outputs, data/cache)",
    )
    p.add_argument(
        "--provider-backoff",
        type=positive_float,
        default=Backoff.first_s,
        metavar="S",
        help="seconds before probing a provider that turned calls away; doubled after each failed "
        f"probe, up to {Backoff.max_s:g} (default: %(default)s)",
    )
    p.add_argument(
        "--fleet-pause-after",
        type=positive_int,
        default=DEFAULT_QUORUM,
        metavar="N",
        help="workers that must find a provider down before every worker skips its kinds (default: %(default)s)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_work)

    p = sub.add_parser(
        "providers",
        help="which backend makes each kind: its URL, model and key; "
        "--check asks each service (a call that costs nothing)",
    )
    p.add_argument("--backend", default=None, help="a backend or routing (default: as `work` would)")
    p.add_argument("--check", action="store_true", help="also ask each service whether it answers")
    p.set_defaults(func=cmd_providers)

    p = sub.add_parser("demo", help="the whole pipeline on the sample book: 3 workers, sketch backend")
    p.add_argument("--workers", type=positive_int, default=3, help="worker processes (default 3)")
    p.set_defaults(func=cmd_demo)


def worker_config(args: argparse.Namespace) -> WorkerConfig:
    """Validate the work flags into a WorkerConfig (bad values and combinations are BadInput),
    all before anything connects."""
    lanes = tuple(dict.fromkeys(x.strip() for x in args.lanes.split(",") if x.strip()))
    if not lanes:
        raise BadInput("--lanes needs at least one lane")
    heartbeat = args.heartbeat if args.heartbeat is not None else default_heartbeat(args.lease)
    if heartbeat >= args.lease:
        raise BadInput(f"--heartbeat ({heartbeat:g} s) must be shorter than --lease ({args.lease:g} s)")
    if args.hours:
        Window.parse(args.hours)
    worker_id, uid = args.worker_id or default_worker_id(), args.uid or os.environ.get("PIPELINE_KIT_UID")
    check_identity(worker_id, uid)
    return WorkerConfig(
        worker_id=worker_id,
        lanes=lanes,
        backend=resolve_backend(args.backend),
        batch=args.batch,
        inflight=args.inflight,
        until_empty=args.until_empty,
        max_tasks=args.max_tasks,
        max_minutes=args.max_minutes,
        lease_s=args.lease,
        heartbeat_s=heartbeat,
        uid=uid,
        hours=args.hours,
        outputs=args.outputs,
        cache=args.cache,
        store=check_url(args.store) if args.store else None,
        progress=not args.quiet,
        watchdog_every_s=args.watchdog,
        provider_backoff=Backoff(first_s=args.provider_backoff, max_s=max(Backoff.max_s, args.provider_backoff)),
        fleet_quorum=args.fleet_pause_after,
    )


def cmd_work(args: argparse.Namespace) -> int:
    cfg = worker_config(args)
    router = Router(Routing.parse(cfg.backend))
    router.check()  # bad routing is bad input before anything connects
    summary = run_worker(open_db(args), cfg, handle_signals=True, router=router)
    print(summary.line())
    return 0


def cmd_providers(args: argparse.Namespace) -> int:
    from pipeline_kit.backends.providers import provider_lines

    lines = provider_lines(Router(Routing.parse(resolve_backend(args.backend))), check=args.check)
    print("\n".join(lines))
    return 1 if args.check and any("does not answer" in line or "cannot start" in line for line in lines) else 0


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
