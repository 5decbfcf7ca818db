"""Analysis subcommands: `simulate` (planning) and `report` (post-mortem of a run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline_kit.cli.common import open_db, print_json
from pipeline_kit.errors import BadInput
from pipeline_kit.plural import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser("simulate", help="simulate a run for planning (static vs dynamic)")
    p.add_argument("--tasks", type=int, default=1029, metavar="N", help="tasks to run (default 1029)")
    p.add_argument("--minutes", type=float, default=10.0, metavar="M", help="minutes per task at speed 1 (default 10)")
    p.add_argument("--machines", type=int, default=3, metavar="K", help="machines (default 3), named A, B, C, ...")
    # pandas and matplotlib load only when these commands run: every worker start pays for imports
    p.add_argument(
        "--strategy",
        choices=("dynamic", "static"),
        default="dynamic",
        help="dynamic: machines claim the next task; static: a contiguous share each (default dynamic)",
    )
    p.add_argument("--speeds", metavar="S1,S2,...", help="relative speed per machine, e.g. 1,0.9,1.1")
    p.add_argument(
        "--fail-streak",
        action="append",
        default=[],
        metavar="MACHINE:COUNT",
        help="the machine's first COUNT attempts fail (repeatable), e.g. A:20",
    )
    p.add_argument("--fail-rate", type=float, default=0.0, metavar="P", help="chance any attempt fails")
    p.add_argument(
        "--sleep",
        action="append",
        default=[],
        metavar="MACHINE:FROM-TO",
        help="the machine sleeps from minute FROM to TO (repeatable), e.g. B:600-720",
    )
    p.add_argument(
        "--lease",
        type=float,
        default=None,
        metavar="MIN",
        help="lease minutes before a lost task can be reclaimed (default 15)",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same run")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_simulate)

    p = sub.add_parser("report", help="write a post-mortem (HTML, PNG charts, CSV, Parquet)")
    p.add_argument("bookcode", nargs="?", help="one book (default: the whole database)")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default reports/BOOKCODE or reports/all)")
    p.set_defaults(func=_report)


def _simulate(args: argparse.Namespace) -> int:
    from pipeline_kit.analysis import simulate as sim

    machines = args.machines
    if not 1 <= machines <= sim.MAX_MACHINES:
        raise BadInput(f"--machines must be 1..{sim.MAX_MACHINES}, got {machines}")
    plan = sim.Plan(
        tasks=args.tasks,
        minutes=args.minutes,
        machines=machines,
        strategy=args.strategy,
        speeds=sim.parse_speeds(args.speeds) if args.speeds else (),
        fail_streaks=tuple(sim.parse_streak(s, machines) for s in args.fail_streak),
        fail_rate=args.fail_rate,
        sleeps=tuple(sim.parse_sleep(s, machines) for s in args.sleep),
        lease=sim.DEFAULT_LEASE_MIN if args.lease is None else args.lease,
        seed=args.seed,
    )
    result = sim.simulate(plan).to_dict()
    if args.json:
        print_json(result)
        return 0
    print(f"{result['strategy']}: {plural(plan.tasks, 'task')} x {plan.minutes:g} min on {plural(machines, 'machine')}")
    print(
        f"makespan {result['makespan_minutes']:,.1f} min = {result['makespan_hours']:,.1f} h "
        f"= {result['makespan_days']:,.2f} days; "
        f"{result['machine_minutes']:,.1f} machine-minutes"
    )
    for name, m in result["per_machine"].items():
        print(
            f"  {name}: {m['completed']} completed, {m['failed_attempts']} failed, "
            f"{m['lost_attempts']} lost, busy {m['busy_minutes']:,.1f} min"
        )
    return 0


def _report(args: argparse.Namespace) -> int:
    from pipeline_kit.analysis.report import default_out_dir, write_report

    db = open_db(args)
    try:
        out = args.out or default_out_dir(args.bookcode)
        print(write_report(db, args.bookcode, out))
    finally:
        db.dispose()
    return 0
