"""Engine subcommands: init, enqueue, watchdog, status, retry, cancel, lane."""

from __future__ import annotations

import argparse
import time
import uuid

from pipeline_kit import engine
from pipeline_kit.cli.columns import TITLE_CELLS, clip, table
from pipeline_kit.cli.common import json_object, open_db, positive_float, positive_int, print_json
from pipeline_kit.engine.states import Status
from pipeline_kit.engine.status import STALL_AFTER_S, Overview, Pace, shown_state
from pipeline_kit.errors import BadInput
from pipeline_kit.film.profile import parse_profile
from pipeline_kit.plural import plural

RETRIES_NAMED = 10  # task ids a retry's message names before "..."


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("init", help="create or upgrade the schema (idempotent) and the default lanes")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("enqueue", help="add ad-hoc tasks")
    p.add_argument("--kind", required=True, help="the task kind, e.g. first_frame or noop")
    p.add_argument("--lane", required=True, help="the lane the tasks go in (`lane list` shows them)")
    p.add_argument("--count", type=positive_int, default=1, help="how many tasks (default 1)")
    p.add_argument("--params", type=json_object, default=None, help="JSON object given to each task")
    p.add_argument("--priority", type=int, default=0, help="higher is claimed first (default 0)")
    p.add_argument(
        "--max-attempts", type=positive_int, help="attempts before a task fails for good (default: the lane's)"
    )
    p.add_argument("--key", help="business key (with --count N, keys KEY-1..KEY-N); repeats are no-ops")
    p.add_argument("--after", action="append", default=[], metavar="TASK_ID", help="a dependency (repeatable)")
    p.set_defaults(func=cmd_enqueue)

    p = sub.add_parser("watchdog", help="take back expired leases")
    p.add_argument("--once", action="store_true", help="one pass, then exit")
    p.add_argument("--interval", type=positive_float, default=15.0, help="seconds between passes")
    p.set_defaults(func=cmd_watchdog)

    p = sub.add_parser("status", help="what is queued, running, stuck, blocked and failed, per worker, at what pace")
    p.add_argument("bookcode", nargs="?", help="one book (default: every book)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--all", action="store_true", help="also list workers not seen for a day")
    p.add_argument(
        "--stall-minutes",
        type=positive_float,
        default=STALL_AFTER_S / 60,
        metavar="N",
        help="warn when work is open and nothing completed for N minutes (default %(default)g)",
    )
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "retry",
        help="give failed (or canceled) tasks a fresh attempt budget: by task, book, kind, lane or error kind",
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="TASK_ID|BOOKCODE",
        help="tasks to retry as named, or books whose tasks the filters pick (none named: every book's)",
    )
    p.add_argument("--failed", action="store_true", help="pick failed tasks (the default)")
    p.add_argument("--canceled", action="store_true", help="pick canceled tasks (with --failed: both)")
    p.add_argument("--kind", action="append", default=[], help="only tasks of this kind (repeatable)")
    p.add_argument("--lane", action="append", default=[], help="only tasks of this lane (repeatable)")
    p.add_argument(
        "--error-kind",
        action="append",
        default=[],
        metavar="KIND",
        help="only tasks whose last attempt failed with this error kind, e.g. rate_limited (repeatable)",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be retried and change nothing")
    p.set_defaults(func=cmd_retry)

    p = sub.add_parser("cancel", help="stop a task (its dependents become blocked)")
    p.add_argument("task_id", help="the task, as `status` lists it")
    p.set_defaults(func=cmd_cancel)

    p = sub.add_parser("lane", help="list, add, pause, resume or limit lanes")
    lane_sub = p.add_subparsers(dest="lane_command", metavar="ACTION", help="what to do with lanes")
    lane_sub.required = True
    q = lane_sub.add_parser("list", help="every lane with its limit, pause, expiry and budget settings")
    q.set_defaults(func=cmd_lane_list)
    q = lane_sub.add_parser("add", help="create a lane")
    q.add_argument("name", help="the new lane's name")
    q.add_argument("--max-running", type=positive_int, help="tasks of this lane running at once, across all PCs")
    q.add_argument(
        "--on-expire",
        choices=["retry", "fail"],
        default="retry",
        help="what an expired lease does to its task: retry it (default) or fail it",
    )
    q.add_argument("--max-attempts", type=positive_int, help="attempts before a task of this lane fails for good")
    q.add_argument("--paid", action="store_true", help="stop claiming once the book's budget is spent")
    q.set_defaults(func=cmd_lane_add)
    for action, says in (
        ("pause", "stop claiming from a lane (running tasks finish)"),
        ("resume", "claim from a paused lane again"),
    ):
        q = lane_sub.add_parser(action, help=says)
        q.add_argument("name", help="the lane")
        q.set_defaults(func=cmd_lane_pause, paused=action == "pause")
    q = lane_sub.add_parser("limit", help="set max_running across all machines ('none' lifts it)")
    q.add_argument("name", help="the lane")
    q.add_argument("max_running", help="tasks running at once across all PCs, or 'none'")
    q.set_defaults(func=cmd_lane_limit)


def cmd_init(args: argparse.Namespace) -> int:
    db = open_db(args, check_schema=False, owner=True)
    ready = engine.prepare(db)
    before, after, created = ready.before, ready.after, ready.lanes_created
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
    specs = [
        engine.TaskSpec(
            task_id=k,
            kind=args.kind,
            lane=args.lane,
            priority=args.priority,
            params=args.params,
            max_attempts=args.max_attempts,
            depends_on=tuple(args.after),
        )
        for k in keys
    ]
    with db.engine.begin() as conn:
        result = engine.enqueue(conn, specs)
    print(
        f"enqueued {plural(result.created, 'task')} in lane {args.lane}"
        + (f"; {plural(result.existing, 'key')} already present, left as they were" if result.existing else "")
    )
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
    view = engine.overview(db, args.bookcode, all_workers=args.all, stall_after_s=args.stall_minutes * 60)
    if args.json:
        print_json(view.to_json())
    else:
        print(render_status(view, bookcode=args.bookcode))
    return 0


def render_status(view: Overview, *, bookcode: str | None = None) -> str:
    """The human-readable status page; columns line up whatever the script of a name."""
    lines = [f"{bookcode} — {view.books[bookcode]['title'] or '(no title)'}"] if bookcode else []
    if bookcode:
        lines.append(f"film profile: {parse_profile(view.books[bookcode].get('film_profile')).describe()}")
    present = ", ".join(f"{n} {s}" for s, n in view.counts.items() if n)
    lines.append(plural(view.total, "task") + (f": {present}" if present else ""))
    if view.pace:
        lines += _pace_lines(view.pace)
    if view.books and not bookcode:
        lines += ["", *_books_table(view)]
    lines += ["", *_lanes_table(view)]
    if view.workers:
        lines += ["", *_workers_table(view)]
    if view.folded_workers:
        lines.append(
            f"{plural(view.folded_workers, 'worker')} not seen for a day folded away "
            "(`pipeline-kit status --all` lists them)"
        )
    if view.awaiting_review or view.decisions:
        lines += ["", f"waiting for your review: {view.awaiting_review}"]
        lines += [
            f"  {d.at:%Y-%m-%d %H:%M} "
            f"{'approved' if d.decision == 'approve' else 'rejected'} {d.task_id} "
            f"by {d.by or '-'}" + (f": {d.note}" if d.note else "")
            for d in view.decisions
        ]
    if view.spend:
        lines += ["", *_spend_table(view)]
    if view.went_ahead:
        lines += ["", *view.went_ahead]
    if view.providers_down:
        lines += ["", *view.providers_down]
    if view.fell_back:
        lines += ["", *view.fell_back]
    if view.unserved:
        lines += ["", *view.unserved]
    for title, problems in (("stuck", view.stuck), ("blocked", view.blocked), ("failed", view.failed)):
        if problems:
            lines.append(f"\n{title}:")
            for p in problems:
                lines.append(f"  {p.task_id} [{p.lane}] {p.detail}\n    next: {p.next_action}")
    return "\n".join(lines)


def _pace_lines(pace: Pace) -> list[str]:
    """Rates over the last 5 and 60 minutes, the ETA, and a warning when nothing completes."""
    rates = "; ".join(
        f"{r.completed} completed in the last {_span(r.window_s)} ({r.per_minute:g}/min)"
        for r in (pace.last_5m, pace.last_60m)
    )
    lines = [f"pace: {rates}"]
    if pace.open_tasks:
        eta = (
            f"ETA {_span(pace.eta_s)} ({pace.eta_at:%Y-%m-%d %H:%M} by the database clock)"
            if pace.eta_s is not None and pace.eta_at
            else "no ETA: nothing completed in the last hour"
        )
        lines.append(f"{plural(pace.open_tasks, 'task')} open (pending or running): {eta}")
    if pace.stalled and pace.idle_s is not None:
        lines.append(
            f"warning: no task completed for {_span(pace.idle_s)}, with {plural(pace.open_tasks, 'task')} "
            "open: are the workers running? (see the workers below)"
        )
    return lines


def _span(seconds: float) -> str:
    """A duration as a person reads it: 45 s, 2.5 min, 3 h 10 min, 2 d 4 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min".replace(".0 min", " min")
    hours = int(seconds // 3600)
    if hours < 48:
        return f"{hours} h {int(seconds % 3600 // 60)} min"
    return f"{hours // 24} d {hours % 24} h"


def _books_table(view: Overview) -> list[str]:
    """Each book: its title (cut to TITLE_CELLS cells), its film profile and its tasks per status present."""
    present = [s for s, n in view.counts.items() if n]
    rows = [
        (
            code,
            clip(book["title"] or "", TITLE_CELLS),
            parse_profile(book.get("film_profile")).name,
            sum(book["counts"].values()),
            *(book["counts"].get(s, 0) for s in present),
        )
        for code, book in sorted(view.books.items())
    ]
    return table(["book", "title", "film", "tasks", *present], rows, right=range(3, 4 + len(present)))


def _lanes_table(view: Overview) -> list[str]:
    """Each lane: its limit, whether paused, and its tasks per status (every status a column)."""
    rows = [
        (
            name,
            lane.get("max_running") or "-",
            "yes" if lane.get("paused") else "no",
            *(lane["counts"].get(s, 0) for s in view.counts),
        )
        for name, lane in sorted(view.lanes.items())
    ]
    return table(["lane", "limit", "paused", *view.counts], rows, right=range(1, 3 + len(view.counts)))


def _workers_table(view: Overview) -> list[str]:
    """Each worker shown: its liveness, when last seen, its completions a minute over the last 5
    and 60 minutes, and what it runs (stage, heartbeat age)."""
    rows = [
        (
            wid,
            w.get("host"),
            shown_state(w),
            _seconds(w.get("last_seen_age_s")),
            w["counts"].get("completed", 0),
            f"{w['pace']['last_5m']['per_minute']:g}" if "pace" in w else None,
            f"{w['pace']['last_60m']['per_minute']:g}" if "pace" in w else None,
            len(w["current"]),
            "; ".join(f"{c['task_id']} ({c['stage']}, {_seconds(c['heartbeat_age_s'])})" for c in w["current"][:3]),
        )
        for wid, w in sorted(view.workers.items())
    ]
    return table(
        [
            "worker",
            "host",
            "state",
            "last seen",
            "done",
            "/min 5m",
            "/min 60m",
            "running",
            "current (stage, heartbeat age)",
        ],
        rows,
        right=(3, 4, 5, 6, 7),
    )


def _spend_table(view: Overview) -> list[str]:
    """Money spent per provider (paid attempts and their cost), costliest first."""
    rows = [(provider, spent["attempts"], f"{spent['cost']:.2f}") for provider, spent in view.spend.items()]
    return table(["provider", "paid attempts", "spent"], rows, right=(1, 2))


def _seconds(age: float | None) -> str | None:
    return None if age is None else f"{age:.0f} s"


def cmd_retry(args: argparse.Namespace) -> int:
    db = open_db(args, owner=True)
    task_ids, bookcodes = engine.split_targets(db, args.targets)
    statuses = tuple(s for s, on in ((Status.FAILED, args.failed), (Status.CANCELED, args.canceled)) if on)
    selection = engine.RetrySelection(
        task_ids=task_ids,
        by_filter=bool(bookcodes or args.kind or args.lane or args.error_kind or statuses),
        bookcodes=bookcodes,
        statuses=statuses or (Status.FAILED,),
        kinds=tuple(args.kind),
        lanes=tuple(args.lane),
        error_kinds=tuple(args.error_kind),
    )
    if not (selection.task_ids or selection.by_filter):
        raise BadInput("retry needs a task id, a bookcode or a filter (--failed, --kind, --lane, --error-kind)")
    if selection.task_ids and selection.by_filter:
        raise BadInput("retry takes task ids, or books and filters, not both (a filter would reach every book)")
    report = engine.retry(db, selection, by="cli", dry_run=args.dry_run)
    print(_retried(report))
    return 0


def _retried(report: engine.RetryReport) -> str:
    """One line: how many tasks were (or would be) retried, the first few, and what was released."""
    shown = ", ".join(report.retried[:RETRIES_NAMED]) + (", ..." if len(report.retried) > RETRIES_NAMED else "")
    if report.dry_run:
        return f"would retry {plural(len(report.retried), 'task')}" + (f": {shown}" if shown else "") + " (dry run)"
    line = f"{plural(len(report.retried), 'task')} pending again" + (f": {shown}" if shown else "")
    return line + (f"; {plural(len(report.released), 'dependent')} released" if report.released else "")


def cmd_cancel(args: argparse.Namespace) -> int:
    blocked = engine.cancel_task(open_db(args, owner=True), args.task_id, by="cli")
    print(f"{args.task_id} canceled" + (f"; {plural(len(blocked), 'dependent')} blocked" if blocked else ""))
    return 0


def cmd_lane_list(args: argparse.Namespace) -> int:
    for lane in engine.list_lanes(open_db(args)):
        print(
            f"{lane.lane:<14} max_running={lane.max_running or '-'} paused={'yes' if lane.paused else 'no'} "
            f"on_expire={lane.on_expire} max_attempts={lane.max_attempts or '-'} paid={'yes' if lane.paid else 'no'}"
        )
    return 0


def cmd_lane_add(args: argparse.Namespace) -> int:
    lane = engine.add_lane(
        open_db(args, owner=True),
        args.name,
        max_running=args.max_running,
        on_expire=args.on_expire,
        max_attempts=args.max_attempts,
        paid=args.paid,
    )
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
