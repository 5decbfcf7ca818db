"""Operations subcommands: chaos (a bounded fault-injection run) and grant-worker (least privilege)."""

from __future__ import annotations

import argparse
import os
import sys

from pipeline_kit.cli.common import int_in, open_db, positive_int, print_json
from pipeline_kit.errors import BadInput

_count = int_in(0, 100_000)  # kills, restarts: zero is allowed


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "chaos", help="run workers under random kills, stops, restarts and cut connections, then check the invariants"
    )
    p.add_argument("--database", metavar="URL", help="an empty scratch database (default: a temporary SQLite file)")
    p.add_argument(
        "--profile",
        choices=["smoke", "ci", "release"],
        default="ci",
        help="how long and how hard: smoke (seconds), ci (minutes), release (the long soak)",
    )
    p.add_argument("--tasks", type=positive_int, help="tasks to run (default: the profile's)")
    p.add_argument("--workers", type=positive_int, help="worker processes (default: the profile's)")
    p.add_argument("--kills", type=_count, help="workers killed during the run (default: the profile's)")
    p.add_argument("--restarts", type=_count, help="database restarts (local PostgreSQL/MariaDB only)")
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same faults")
    p.add_argument(
        "--worker-account",
        action="store_true",
        help="workers log in as a worker account made as grant-worker makes it (PostgreSQL/MariaDB)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_chaos)

    p = sub.add_parser(
        "grant-worker", help="create a database role that can only claim, heartbeat, complete and fail tasks"
    )
    p.add_argument("role", help="the account to create or refresh, e.g. pk_pc2")
    p.add_argument("--password-env", metavar="VAR", help="read the role's password from this variable")
    p.add_argument("--print", action="store_true", help="print the SQL instead of running it")
    p.set_defaults(func=cmd_grant_worker)


def cmd_chaos(args: argparse.Namespace) -> int:
    from pipeline_kit.chaos.profiles import PROFILES
    from pipeline_kit.chaos.runner import Settings, run_chaos

    profile = PROFILES[args.profile].with_overrides(
        tasks=args.tasks, workers=args.workers, kills=args.kills, restarts=args.restarts
    )
    report = run_chaos(
        Settings(profile=profile, database=args.database or args.db, seed=args.seed, worker_account=args.worker_account)
    )
    if args.json:
        print_json(report.to_json())
    else:
        print(report.render())
    return 0 if report.ok else 1


def cmd_grant_worker(args: argparse.Namespace) -> int:
    from pipeline_kit.db.connect import normalise_url, resolve_url
    from pipeline_kit.security import PLACEHOLDER, apply, grant_statements

    password = None
    if args.password_env and not args.print:
        password = os.environ.get(args.password_env)
        if not password:
            raise BadInput(f"--password-env {args.password_env}: that variable is empty or not set")
    url = normalise_url(resolve_url(args.db))
    dialect = url.get_backend_name()
    if args.print:  # no connection, no secret: an administrator reviews it, runs it elsewhere
        shown = PLACEHOLDER if args.password_env or dialect in ("mysql", "mariadb") else None
        statements = grant_statements(dialect, args.role, shown, database=url.database)
        print("\n".join(f"{sql};" for sql in statements))
        if shown:
            sys.stderr.write(
                f"the password is shown as '{PLACEHOLDER}'; without --print, "
                "grant-worker applies these statements with the password from "
                "--password-env\n"
            )
        return 0
    statements = grant_statements(dialect, args.role, password, database=url.database)
    db = open_db(args)
    apply(db, statements)
    sys.stderr.write(f"role {args.role} can now claim, heartbeat, complete and fail tasks in {db.url}\n")
    return 0
