"""Store subcommands: `store show|set URL|gc` (the database's output store) and `export`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline_kit.cli.common import open_db
from pipeline_kit.errors import BadInput, PipelineKitError
from pipeline_kit.store import DATABASE_URL, check_url, effective_url, open_store, set_url, store_at
from pipeline_kit.store.folder import FolderStore
from pipeline_kit.store.gc import stale_staged, sweep, swept_stores
from pipeline_kit.film.timelines import write_timelines
from pipeline_kit.store.export import checked_name, export_book
from pipeline_kit.store.move import copy_outputs, recorded_outputs
from pipeline_kit.plural import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser("store", help="where outputs go, for every PC of this database")
    verbs = p.add_subparsers(dest="verb", required=True, help="what to do with the store")
    show = verbs.add_parser("show", help="the store in effect and why")
    show.set_defaults(func=cmd_show)
    put = verbs.add_parser(
        "set", help="set the store (owner): a folder every PC mounts, 'database', or s3://BUCKET/PREFIX"
    )
    put.add_argument("url", help="a folder path, 'database', or s3://BUCKET/PREFIX")
    moved = put.add_mutually_exclusive_group()
    moved.add_argument(
        "--copy", action="store_true", help="copy every recorded output into the new store first, checksum-checked"
    )
    moved.add_argument(
        "--force", action="store_true", help="set it although outputs live in the old store (they stay there)"
    )
    put.add_argument(
        "--cache", type=Path, default=Path("data/cache"), help="this PC's cache for files fetched while copying"
    )
    put.set_defaults(func=cmd_set)
    gc = verbs.add_parser(
        "gc",
        help="delete the store's blobs nothing names (a killed publish's) and blobs that fail their checksum "
        "(database and S3 stores; a folder store keeps outputs by name and has none, only the files a killed "
        "or fenced worker staged, which no lease can have accepted)",
    )
    gc.add_argument(
        "--grace-hours",
        type=float,
        default=24.0,
        help="spare blobs stored this recently (a publish may be about to name them)",
    )
    gc.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")
    gc.add_argument(
        "--verify",
        action="store_true",
        help="check every blob past the grace period against its checksum (S3: downloads each; "
        "the database store always checks)",
    )
    gc.set_defaults(func=cmd_gc)

    p = sub.add_parser(
        "export",
        help="write a book's films, subtitles, sheets, frames, clips and voices from the store into a folder, "
        "with an OpenTimelineIO timeline (.otio) beside each film",
    )
    p.add_argument("bookcode", help="the book")
    p.add_argument("folder", type=Path, help="where the files go (made if missing)")
    p.add_argument("--store", default=None, metavar="URL", help="read this store instead")
    p.add_argument("--cache", type=Path, default=Path("data/cache"), help="this PC's cache of fetched outputs")
    into = p.add_mutually_exclusive_group()
    into.add_argument(
        "--update", action="store_true", help="the folder holds an earlier export: write only the files that changed"
    )
    into.add_argument("--force", action="store_true", help="write into a folder that holds files, overwriting them")
    p.set_defaults(func=cmd_export)


def cmd_show(args: argparse.Namespace) -> int:
    url, why = effective_url(open_db(args))
    print(f"store: {url} ({why})")
    if Path(url).is_absolute() and not Path(url).is_dir():  # a folder store whose folder is gone
        sys.stderr.write(
            f"pipeline-kit: warning: the store folder {url} is not there: mount it, or, if the outputs "
            "were moved, `pipeline-kit store set FOLDER --force` names where they are now\n"
        )
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    db = open_db(args)
    url = check_url(args.url)
    old_url = effective_url(db)[0]
    if url == old_url:
        print(f"store: {url} (already this database's store)")
        return 0
    new = store_at(db, url, args.cache)
    new.check()  # the folder, endpoint and keys work, before anything is saved
    outputs = len(recorded_outputs(db))
    if outputs and not (args.copy or args.force):
        raise BadInput(
            f"{plural(outputs, 'output')} {'lives' if outputs == 1 else 'live'} in the current store {old_url}: "
            "--copy copies them into the new one (checksum-checked), --force sets it anyway (they stay behind)"
        )
    if outputs and args.copy:
        copied, failed = copy_outputs(db, store_at(db, old_url, args.cache), new)
        for name, why in failed:
            sys.stderr.write(f"not copied: {name}: {why}\n")
        if failed:
            raise PipelineKitError(
                f"{plural(len(failed), 'output')} could not be copied (listed above); the store stays {old_url}"
            )
        print(f"{plural(copied, 'output')} copied into {url}, each checked against its checksum")
    print(f"store: {set_url(db, url)} (set for this database; every PC uses it)")
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    if not 0 <= args.grace_hours <= 24 * 365:
        raise BadInput(f"--grace-hours must be from 0 to 8760, got {args.grace_hours:g}")
    db = open_db(args)
    store = open_store(db)
    verb = "would be deleted" if args.dry_run else "deleted"
    if isinstance(store, FolderStore):
        staged = stale_staged(db, store, dry_run=args.dry_run)
        for path in staged:
            print(f"stale staged file {path} {verb}")
        print(
            f"store gc: the folder store {store.url} keeps each output under its task's name (a re-run "
            "overwrites it), not as blobs by checksum: it has nothing to sweep"
            + (f" but {plural(len(staged), 'stale staged file')} ({verb})" if staged else "")
        )
    for swept_store in swept_stores(db, store):
        swept = sweep(
            db, swept_store, grace_s=args.grace_hours * 3600, dry_run=args.dry_run, verify=args.verify or None
        )
        for what, blobs in (("unnamed", swept.unnamed), ("damaged", swept.damaged)):
            for sha, size in sorted(blobs.items()):
                print(f"{what} blob {sha} ({size} bytes) {verb}")
        print(
            f"{plural(len(swept.unnamed), 'unnamed blob')} and {plural(len(swept.damaged), 'damaged blob')} {verb} "
            f"from {'the database' if swept_store.url == DATABASE_URL else swept_store.url}"
            + (" (dry run: nothing deleted)" if args.dry_run else "")
        )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    db = open_db(args)
    store = open_store(db, override=args.store, cache=args.cache)
    mode = "update" if args.update else "force" if args.force else "new"
    done = export_book(db, store, args.bookcode, args.folder, mode=mode)
    for name, why in done.failed:
        sys.stderr.write(f"not written: {name}: {why}\n")
    timelines = write_timelines(db, args.bookcode, lambda name: args.folder.joinpath(*checked_name(name).parts))
    unchanged = f" ({plural(len(done.unchanged), 'file')} already up to date)" if mode == "update" else ""
    written = plural(len(done.written), "file") + (f" and {plural(len(timelines), 'timeline')}" if timelines else "")
    print(f"{written} written under {args.folder}/{unchanged}")
    if done.failed:
        sys.stderr.write(f"pipeline-kit: {plural(len(done.failed), 'output')} could not be exported (listed above)\n")
        return 1
    return 0
