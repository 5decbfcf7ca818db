"""Store subcommands: `store show|set URL|gc` (the database's output store) and `export`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline_kit.cli.common import open_db
from pipeline_kit.errors import BadInput
from pipeline_kit.store import effective_url, open_store, set_url
from pipeline_kit.store.database import sweep
from pipeline_kit.store.export import export_book


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser("store", help="where outputs go, for every PC of this database")
    verbs = p.add_subparsers(dest="verb", required=True)
    show = verbs.add_parser("show", help="the store in effect and why")
    show.set_defaults(func=cmd_show)
    put = verbs.add_parser("set", help="set the store (owner): a folder every PC mounts, "
                                       "'database', or s3://BUCKET/PREFIX")
    put.add_argument("url")
    put.set_defaults(func=cmd_set)
    gc = verbs.add_parser("gc", help="delete database-store blobs no task names (a killed publish's)")
    gc.add_argument("--grace-hours", type=float, default=24.0,
                    help="spare blobs stored this recently (a publish may be about to name them)")
    gc.set_defaults(func=cmd_gc)

    p = sub.add_parser("export", help="write a book's films, subtitles, sheets, frames and clips "
                                      "from the store into a folder")
    p.add_argument("bookcode")
    p.add_argument("folder", type=Path)
    p.add_argument("--store", default=None, metavar="URL", help="read this store instead")
    p.add_argument("--cache", type=Path, default=Path("data/cache"),
                   help="this PC's cache of fetched outputs")
    p.set_defaults(func=cmd_export)


def cmd_show(args: argparse.Namespace) -> int:
    url, why = effective_url(open_db(args))
    print(f"store: {url or 'data/outputs (this PC)'} ({why})")
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    print(f"store: {set_url(open_db(args), args.url)} (set for this database; every PC uses it)")
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    if not 0 <= args.grace_hours <= 24 * 365:
        raise BadInput(f"--grace-hours must be from 0 to 8760, got {args.grace_hours:g}")
    gone = sweep(open_db(args), grace_s=args.grace_hours * 3600)
    print(f"{len(gone)} unnamed blob(s) deleted")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    db = open_db(args)
    store = open_store(db, override=args.store, cache=args.cache)
    written = export_book(db, store, args.bookcode, args.folder)
    print(f"{len(written)} files written under {args.folder}/")
    return 0
