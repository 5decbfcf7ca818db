"""Film subcommand: `film BOOKCODE` shows what of the film exists and what still blocks it."""

from __future__ import annotations

import argparse
import dataclasses

from pipeline_kit import film
from pipeline_kit.cli.columns import TITLE_CELLS, clip, pad
from pipeline_kit.cli.common import open_db, positive_int, print_json

BLOCKERS_SHOWN = 8  # per chapter in the text view; --json lists them all


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser("film", help="per chapter: clips done, shots that block it, film paths")
    p.add_argument("bookcode")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--blockers", type=positive_int, default=BLOCKERS_SHOWN, metavar="N",
                   help=f"blocking shots listed per chapter (default {BLOCKERS_SHOWN})")
    p.set_defaults(func=cmd_film)


def cmd_film(args: argparse.Namespace) -> int:
    status = film.film_status(open_db(args), args.bookcode)
    if args.json:
        print_json(dataclasses.asdict(status))
        return 0
    print(f"{status.bookcode} — {status.title}: {status.clips_done}/{status.shots} clips done")
    for ch in status.chapters:
        state = ch.film_path or ch.task_status or "not planned (chapter not split)"
        print(f"  chapter {ch.chapter:>3} {pad(clip(ch.title, TITLE_CELLS), TITLE_CELLS)} "
              f"{ch.clips_done:>4}/{ch.shots:<4} clips  film: {state}")
        for blocker in ch.blockers[:args.blockers]:
            print(f"      blocked by {blocker.shot_id} (video {blocker.status or 'not planned'})")
        if len(ch.blockers) > args.blockers:
            print(f"      ... and {len(ch.blockers) - args.blockers} more shots")
    print(f"  book film: {status.film_path or status.task_status or 'not planned'}")
    return 0
