"""Film subcommand: `film BOOKCODE` shows what of the film exists, what still blocks it and which films
are out of date (and why), the book's film profile and its music; `--profile` and `--music` set them."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from pipeline_kit import film
from pipeline_kit.cli.columns import TITLE_CELLS, clip, pad
from pipeline_kit.cli.common import open_db, positive_int, print_json
from pipeline_kit.db import Database
from pipeline_kit.errors import BadInput
from pipeline_kit.plural import plural
from pipeline_kit.text.film_tasks import AssemblyPlan

BLOCKERS_SHOWN = 8  # per chapter in the text view; --json lists them all


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser(
        "film", help="per chapter: clips done, shots that block it, film paths, films out of date and why"
    )
    p.add_argument("bookcode", help="the book")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--blockers",
        type=positive_int,
        default=BLOCKERS_SHOWN,
        metavar="N",
        help=f"blocking shots listed per chapter (default {BLOCKERS_SHOWN})",
    )
    p.add_argument(
        "--profile",
        metavar="P",
        help="the films' picture: provider (the clips' own size and frame rate, the default), "
        "animatic (640x360 at 12 fps) or WIDTHxHEIGHT@FPS; films made at another re-open",
    )
    music = p.add_mutually_exclusive_group()
    music.add_argument(
        "--music",
        metavar="FILE",
        type=Path,
        help="a sound file to lay under the book's films, ducked under speech (made into the book's "
        "music bed here, on the PC that has the file, and shared through the store)",
    )
    music.add_argument("--no-music", action="store_true", help="take the music off the book's films")
    p.set_defaults(func=cmd_film)


def cmd_film(args: argparse.Namespace) -> int:
    if args.profile is not None or args.music is not None or args.no_music:
        return _settle(args)
    status = film.film_status(open_db(args), args.bookcode)
    if args.json:
        print_json(dataclasses.asdict(status))
        return 0
    print(f"{status.bookcode} — {status.title}: {status.clips_done}/{status.shots} clips done")
    print(f"  profile: {status.profile}; music: {status.music or 'none'}")
    for ch in status.chapters:
        print(
            f"  chapter {ch.chapter:>3} {pad(clip(ch.title, TITLE_CELLS), TITLE_CELLS)} "
            f"{ch.clips_done:>4}/{ch.shots:<4} clips  film: {ch.state}"
        )
        for why in ch.out_of_date:
            print(f"      out of date: {why}")
        for blocker in ch.blockers[: args.blockers]:
            print(f"      blocked by {blocker.shot_id} (video {blocker.status or 'not planned'})")
        if len(ch.blockers) > args.blockers:
            print(f"      ... and {plural(len(ch.blockers) - args.blockers, 'more shot')}")
    print(f"  book film: {status.state}")
    for why in status.out_of_date:
        print(f"      out of date: {why}")
    return 0


def _settle(args: argparse.Namespace) -> int:
    """`film BOOKCODE --profile P` / `--music FILE` / `--no-music`: store the setting, re-plan the
    films, and make the music bed here (the file is on this PC)."""
    from pipeline_kit.text.film_settings import set_film_profile, set_music

    db = open_db(args, owner=True)
    if args.profile is not None:
        _said(f"film profile: {film_profile(args.profile)}", set_film_profile(db, args.bookcode, args.profile))
    if args.no_music:
        _said("music: none", set_music(db, args.bookcode, None))
    elif args.music is not None:
        source, seconds, sha256 = _music_file(args.music)
        _said(f"music: {source.name} ({seconds:.0f} s)", set_music(db, args.bookcode, sha256, source.name))
        return _make_music(db, args.bookcode, source)
    return 0


def film_profile(text: str) -> str:
    from pipeline_kit.film.profile import parse_profile

    return parse_profile(text).describe()


def _said(what: str, plan: AssemblyPlan) -> None:
    why = "; ".join(dict.fromkeys(plan.why))  # the book's film and its chapters' share a reason
    reopened = f"; {plural(len(plan.reset), 'film')} re-opened: {why}" if plan.reset else ""
    print(what + reopened)


def _music_file(path: Path) -> tuple[Path, float, str]:
    """The user's sound file, checked before anything is stored: (path, seconds, sha256)."""
    from pipeline_kit.backends.music import file_sha256
    from pipeline_kit.film import ffmpeg

    source = path.expanduser().resolve()
    if not source.is_file():
        raise BadInput(f"no music file at {path}")
    try:
        seconds = ffmpeg.audio_seconds(source, timeout_s=60)
    except ValueError as exc:
        raise BadInput(f"{path} is not a sound file ffmpeg can read: {exc}") from None
    return source, seconds, file_sha256(source)


def _make_music(db: Database, bookcode: str, source: Path) -> int:
    """Make the book's music bed in this process (the music lane: no other worker has the file)."""
    from pipeline_kit.backends.music import MusicBed
    from pipeline_kit.film.names import MUSIC_LANE, music_task_id
    from pipeline_kit.worker.runtime import WorkerConfig, default_worker_id, run_worker

    cfg = WorkerConfig(worker_id=f"{default_worker_id()}-music", lanes=(MUSIC_LANE,), until_empty=True, progress=False)
    run_worker(db, cfg, backend=MusicBed(source))
    status = film.film_status(db, bookcode).music or ""
    print(f"music bed of {bookcode} ({music_task_id(bookcode)}): {status}")
    return 0 if status.endswith("(completed)") else 1
