"""Engine subcommands: init, enqueue, watchdog, status, retry, cancel, lane."""

from __future__ import annotations

import argparse
import time
import uuid

from pipeline_kit import engine
from pipeline_kit.cli.columns import TITLE_CELLS, clip, table
from pipeline_kit.cli.common import json_object, open_db, positive_float, positive_int, print_json
from pipeline_kit.db.migrate import init
from pipeline_kit.engine.status import Overview
from pipeline_kit.errors import BadInput


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("init", help="create or upgrade the schema (idempotent) and the default lanes")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("enqueue", help="add ad-hoc tasks")
    p.add_argument("--kind", required=True)
    p.add_argument("--lane", required=True)
    p.add_argument("--count", type=positive_int, default=1)
    p.add_argument("--params", type=json_object, default=None, help="JSON object given to each task")
    p.add_argument("--priority", type=int, default=0)
    p.add_argument("--max-attempts", type=positive_int, default=None)
    p.add_argument("--key", help="business key (with --count N, keys KEY-1..KEY-N); repeats are no-ops")
    p.add_argument("--after", action="append", default=[], metavar="TASK_ID", help="a dependency (repeatable)")
    p.set_defaults(func=cmd_enqueue)

    p = sub.add_parser("watchdog", help="take back expired leases")
    p.add_argument("--once", action="store_true", help="one pass, then exit")
    p.add_argument("--interval", type=positive_float, default=15.0, help="seconds between passes")
    p.set_defaults(func=cmd_watchdog)

    p = sub.add_parser("status", help="what is queued, running, stuck, blocked and failed, per worker")
    p.add_argument("bookcode", nargs="?")
    p.add_argument("--json", action="store_true")
    p.add_argument("--all", action="store_true", help="also list workers not seen for a day")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("retry", help="give a failed or canceled task a fresh attempt budget")
    p.add_argument("task_id")
    p.set_defaults(func=cmd_retry)

    p = sub.add_parser("cancel", help="stop a task (its dependents become blocked)")
    p.add_argument("task_id")
    p.set_defaults(func=cmd_cancel)

    p = sub.add_parser("lane", help="list, add, pause, resume or limit lanes")
    lane_sub = p.add_subparsers(dest="lane_command", metavar="ACTION", parser_class=type(p))
    lane_sub.required = True
    q = lane_sub.add_parser("list", help="every lane with its limit, pause, expiry and budget settings")
    q.set_defaults(func=cmd_lane_list)
    q = lane_sub.add_parser("add", help="create a lane")
    q.add_argument("name")
    q.add_argument("--max-running", type=positive_int)
    q.add_argument("--on-expire", choices=["retry", "fail"], default="retry")
    q.add_argument("--max-attempts", type=positive_int)
    q.add_argument("--paid", action="store_true", help="stop claiming once the book's budget is spent")
    q.set_defaults(func=cmd_lane_add)
    for action, says in (("pause", "stop claiming from a lane (running tasks finish)"),
                         ("resume", "claim from a paused lane again")):
        q = lane_sub.add_parser(action, help=says)
        q.add_argument("name")
        q.set_defaults(func=cmd_lane_pause, paused=action == "pause")
    q = lane_sub.add_parser("limit", help="set max_running across all machines ('none' lifts it)")
    q.add_argument("name")
    q.add_argument("max_running")
    q.set_defaults(func=cmd_lane_limit)


def cmd_init(args: argparse.Namespace) -> int:
    db = open_db(args, check_schema=False, owner=True)
    before, after = init(db)
    created = engine.seed_default_lanes(db)
    if before is None:
        print(f"created schema version {after} in {db.url}")
    elif before < after:
        print(f"upgraded schema from version {before} to {after} in {db.url}")
    else:
        print(f"schema version {after} is current in {db.url}")
    if created:
        print(f"lanes created: {', '.join(created)}")
    return 0


def cmd_enqueue(args: argparse.Namespace) -> int:
    db = open_db(args, owner=True)
    if args.key:
        keys = [args.key] if args.count == 1 else [f"{args.key}-{i}" for i in range(1, args.count + 1)]
    else:
        stamp = uuid.uuid4().hex[:12]
        keys = [f"{args.kind}-{stamp}-{i}" for i in range(1, args.count + 1)]
    specs = [engine.TaskSpec(task_id=k, kind=args.kind, lane=args.lane, priority=args.priority,
                             params=args.params, max_attempts=args.max_attempts,
                             depends_on=tuple(args.after)) for k in keys]
    with db.engine.begin() as conn:
        result = engine.enqueue(conn, specs)
    print(f"enqueued {result.created} task(s) in lane {args.lane}"
          + (f"; {result.existing} key(s) already present, left as they were" if result.existing else ""))
    return 0


def cmd_watchdog(args: argparse.Namespace) -> int:
    db = open_db(args)
    while True:
        reclaimed = engine.reclaim_expired(db, by="watchdog-cli")
        for r in reclaimed:
            print(f"reclaimed {r.task_id} from {r.lost_by}: now {r.new_status.value}")
        if args.once:
            if not reclaimed:
                print("no expired leases")
            return 0
        time.sleep(args.interval)


def cmd_status(args: argparse.Namespace) -> int:
    db = open_db(args)
    view = engine.overview(db, args.bookcode, all_workers=args.all)
    if args.json:
        print_json(view.to_json())
    else:
        print(render_status(view, bookcode=args.bookcode))
    return 0


def render_status(view: Overview, *, bookcode: str | None = None) -> str:
    """The human-readable status page; columns line up whatever the script of a name."""
    lines = [f"{bookcode} — {view.books[bookcode]['title'] or '(no title)'}"] if bookcode else []
    lines.append(f"{view.total} tasks: " + ", ".join(f"{n} {s}" for s, n in view.counts.items() if n))
    if view.books and not bookcode:
        lines += ["", *_books_table(view)]
    lines += ["", *_lanes_table(view)]
    if view.workers:
        lines += ["", *_workers_table(view)]
    if view.folded_workers:
        lines.append(f"{view.folded_workers} worker(s) not seen for a day folded away "
                     "(`pipeline-kit status --all` lists them)")
    if view.awaiting_review or view.decisions:
        lines += ["", f"waiting for your review: {view.awaiting_review}"]
        lines += [f"  {d.at:%Y-%m-%d %H:%M} "
                  f"{'approved' if d.decision == 'approve' else 'rejected'} {d.task_id} "
                  f"by {d.by or '-'}" + (f": {d.note}" if d.note else "") for d in view.decisions]
    if view.spend:
        lines += ["", *_spend_table(view)]
    for title, problems in (("stuck", view.stuck), ("blocked", view.blocked), ("failed", view.failed)):
        if problems:
            lines.append(f"\n{title}:")
            for p in problems:
                lines.append(f"  {p.task_id} [{p.lane}] {p.detail}\n    next: {p.next_action}")
    return "\n".join(lines)


def _books_table(view: Overview) -> list[str]:
    """Each book: its title (cut to TITLE_CELLS cells) and its tasks per status present."""
    present = [s for s, n in view.counts.items() if n]
    rows = [(code, clip(book["title"] or "", TITLE_CELLS), sum(book["counts"].values()),
             *(book["counts"].get(s, 0) for s in present))
            for code, book in sorted(view.books.items())]
    return table(["book", "title", "tasks", *present], rows, right=range(2, 3 + len(present)))


def _lanes_table(view: Overview) -> list[str]:
    """Each lane: its limit, whether paused, and its tasks per status (every status a column)."""
    rows = [(name, lane.get("max_running") or "-", "yes" if lane.get("paused") else "no",
             *(lane["counts"].get(s, 0) for s in view.counts))
            for name, lane in sorted(view.lanes.items())]
    return table(["lane", "limit", "paused", *view.counts], rows,
                 right=range(1, 3 + len(view.counts)))


def _workers_table(view: Overview) -> list[str]:
    """Each worker shown: its liveness, when last seen, and what it runs (stage, heartbeat age)."""
    rows = [(wid, w.get("host"), w.get("liveness") or w.get("state"),
             _seconds(w.get("last_seen_age_s")), w["counts"].get("completed", 0), len(w["current"]),
             "; ".join(f"{c['task_id']} ({c['stage']}, {_seconds(c['heartbeat_age_s'])})"
                       for c in w["current"][:3]))
            for wid, w in sorted(view.workers.items())]
    return table(["worker", "host", "state", "last seen", "done", "running",
                  "current (stage, heartbeat age)"], rows, right=(3, 4, 5))


def _spend_table(view: Overview) -> list[str]:
    """Money spent per provider (paid attempts and their cost), costliest first."""
    rows = [(provider, spent["attempts"], f"{spent['cost']:.2f}")
            for provider, spent in view.spend.items()]
    return table(["provider", "paid attempts", "spent"], rows, right=(1, 2))


def _seconds(age: float | None) -> str | None:
    return None if age is None else f"{age:.0f} s"


def cmd_retry(args: argparse.Namespace) -> int:
    released = engine.retry_task(open_db(args, owner=True), args.task_id, by="cli")
    print(f"{args.task_id} is pending again" + (f"; released {len(released)} dependent(s)" if released else ""))
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    blocked = engine.cancel_task(open_db(args, owner=True), args.task_id, by="cli")
    print(f"{args.task_id} canceled" + (f"; {len(blocked)} dependent(s) blocked" if blocked else ""))
    return 0


def cmd_lane_list(args: argparse.Namespace) -> int:
    for lane in engine.list_lanes(open_db(args)):
        print(f"{lane.lane:<14} max_running={lane.max_running or '-'} paused={'yes' if lane.paused else 'no'} "
              f"on_expire={lane.on_expire} max_attempts={lane.max_attempts or '-'} paid={'yes' if lane.paid else 'no'}")
    return 0


def cmd_lane_add(args: argparse.Namespace) -> int:
    lane = engine.add_lane(open_db(args, owner=True), args.name, max_running=args.max_running,
                           on_expire=args.on_expire, max_attempts=args.max_attempts, paid=args.paid)
    print(f"lane {lane.lane} added")
    return 0


def cmd_lane_pause(args: argparse.Namespace) -> int:
    engine.update_lane(open_db(args, owner=True), args.name, paused=args.paused)
    print(f"lane {args.name} {'paused' if args.paused else 'resumed'}")
    return 0


def cmd_lane_limit(args: argparse.Namespace) -> int:
    text = args.max_running.strip().lower()
    if text in ("none", "off", "unlimited"):
        value = None
    elif text.isdigit():
        value = int(text)
    else:
        raise BadInput(f"max_running must be a number from 1 to 10000 or 'none', got {args.max_running!r}")
    engine.update_lane(open_db(args, owner=True), args.name, max_running=value)
    print(f"lane {args.name} max_running={value if value is not None else 'none'}")
    return 0
