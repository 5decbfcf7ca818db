"""Text subcommands: ingest, split, and shot show/edit/rerun. Handlers only parse and print."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pipeline_kit import kinds, text
from pipeline_kit.db import Database
from pipeline_kit.text import castdb, placesdb, voices
from pipeline_kit.text.lang import check_lang
from pipeline_kit.text.prompts import STYLE
from pipeline_kit.text.records import get_book
from pipeline_kit.text.direct import CONTEXT_TOKENS, LANGUAGES, DirectorSettings, shot_direction
from pipeline_kit.cli.common import open_db, positive_int, print_json
from pipeline_kit.errors import BadInput
from pipeline_kit.plural import plural
from pipeline_kit.worker.runtime import DEFAULT_LANES

SHOT_ID_HELP = "the shot, e.g. BOOKCODE-001-0001 (`status` and the storyboard show them)"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser("ingest", help="store a book (or one chapter) and print its bookcode")
    p.add_argument("file", help="the book (or, with --chapter, one chapter) as a text file")
    p.add_argument("--title", required=True, help="the book's title; it names the bookcode")
    p.add_argument(
        "--lang",
        type=_lang,
        metavar="zh|en",
        help="the book's language, Chinese (zh) or English (en) (default: detected from the text)",
    )
    p.add_argument("--chapter", type=positive_int, metavar="N", help="the file is chapter N: add or replace it")
    p.add_argument("--force", action="store_true", help="re-split a changed chapter that was already split")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("split", help="split the book's unsplit chapters into shots and tasks")
    p.add_argument("bookcode", help="the book, as `ingest` printed it")
    p.add_argument(
        "--model",
        metavar="ollama[:MODEL]",
        help="group sentences with a chat model (checked; the rules decide when it answers badly)",
    )
    p.add_argument(
        "--director",
        nargs="?",
        const="ollama",
        metavar="ollama[:MODEL]|openai:MODEL",
        help="a chat model stages each chapter's shots and describes the cast, as llm-lane tasks "
        "the frames wait for (its prompts replace the rules' ones where it answered)",
    )
    p.add_argument(
        "--style",
        metavar="TEXT",
        help="the book's style line (era, medium, palette) every prompt carries, set before the prompts "
        "are written (`pipeline-kit style` changes it later, re-queuing what was made)",
    )
    p.add_argument(
        "--prompt-lang",
        default="en",
        choices=sorted(LANGUAGES),
        help="language of the director's image and video prompts (default en; captions and "
        "spoken lines keep the book's language)",
    )
    p.add_argument(
        "--director-context",
        type=positive_int,
        default=CONTEXT_TOKENS,
        metavar="TOKENS",
        help=f"the director model's context window; longer chapters go in chunks (default {CONTEXT_TOKENS})",
    )
    p.set_defaults(func=cmd_split)

    p = sub.add_parser(
        "cast",
        help="list the book's character bible, or edit it (re-queues what changes)",
        description="cast BOOKCODE | cast BOOKCODE merge A B | unmerge NAME ALIAS | rename OLD NEW | "
        "describe NAME TEXT | drop NAME | voice NAME VOICE (default: back to the default) | narrator VOICE | "
        "narration on|off",
    )
    p.add_argument("bookcode", help="the book")
    p.add_argument("action", nargs="?", choices=sorted(CAST_ACTIONS), help="an edit (default: list the cast)")
    p.add_argument("names", nargs="*", metavar="ARG", help="the names (and text) the edit takes")
    p.add_argument("--json", action="store_true", help="list as JSON")
    p.set_defaults(func=cmd_cast)

    p = sub.add_parser(
        "places",
        help="list the book's place bible, or edit it (re-queues that place's sheet and shots)",
        description="places BOOKCODE | places BOOKCODE merge A B | rename OLD NEW | describe NAME TEXT | drop NAME",
    )
    p.add_argument("bookcode", help="the book")
    p.add_argument("action", nargs="?", choices=sorted(PLACE_ACTIONS), help="an edit (default: list the places)")
    p.add_argument("names", nargs="*", metavar="ARG", help="the names (and text) the edit takes")
    p.add_argument("--json", action="store_true", help="list as JSON")
    p.set_defaults(func=cmd_places)

    p = sub.add_parser(
        "style",
        help="show or set the book's style line (era, medium, palette) that every prompt carries",
    )
    p.add_argument("bookcode", help="the book")
    p.add_argument("text", nargs="?", help="the new style line (re-queues the shots already made)")
    p.set_defaults(func=cmd_style)

    p = sub.add_parser("shot", help="show, edit or re-run one shot")
    shot_sub = p.add_subparsers(dest="shot_command", metavar="ACTION", help="what to do with the shot")
    shot_sub.required = True
    q = shot_sub.add_parser("show", help="print the shot: text, characters, location, prompts (the director's too)")
    q.add_argument("shot_id", help=SHOT_ID_HELP)
    q.set_defaults(func=cmd_shot_show)
    q = shot_sub.add_parser("edit", help="change the prompt, characters or location; resets the shot's tasks")
    q.add_argument("shot_id", help=SHOT_ID_HELP)
    q.add_argument("--prompt", help="the shot's new frame prompt")
    q.add_argument("--characters", help="comma-separated names (empty for none)")
    q.add_argument("--location", help="where the shot takes place")
    q.set_defaults(func=cmd_shot_edit)
    q = shot_sub.add_parser("rerun", help="reset the shot's tasks (and their dependents) to pending")
    q.add_argument("shot_id", help=SHOT_ID_HELP)
    q.set_defaults(func=cmd_shot_rerun)


def _lang(code: str) -> str:
    """argparse type: a language code `check_lang` accepts, else its one-line refusal."""
    try:
        return check_lang(code)
    except BadInput as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_ingest(args: argparse.Namespace) -> int:
    db = open_db(args, owner=True)
    report = text.ingest_file(db, args.file, args.title, lang=args.lang, chapter=args.chapter, force=args.force)
    for warning in report.warnings:
        sys.stderr.write(f"pipeline-kit: warning: {warning}\n")
    actions = ("added", "updated", "unchanged", "resplit")
    counts = ", ".join(f"{report.count(a)} {a}" for a in actions if report.count(a))
    sys.stderr.write(f"{report.title} ({report.lang}, {report.encoding}): {counts}\n")
    for ch in report.chapters:
        if ch.changes is not None:
            c = ch.changes
            sys.stderr.write(
                f"chapter {ch.number} re-split: {plural(len(c.changed), 'shot')} changed, {len(c.added)} added, "
                f"{len(c.removed)} removed, {plural(len(c.reset_tasks), 'task')} reset\n"
            )
            for shot_id in c.changed:
                sys.stderr.write(f"  changed {shot_id}\n")
    print(report.bookcode)
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    db = open_db(args, owner=True)
    splitter = _model_splitter(args.model) if args.model else None
    director = (
        None
        if args.director is None
        else DirectorSettings.parse(args.director, prompt_lang=args.prompt_lang, context_tokens=args.director_context)
    )
    if args.style is not None and (reset := placesdb.set_style(db, args.bookcode, args.style)):
        sys.stderr.write(f"style set: {plural(len(reset), 'task')} already made reset to pending\n")
    report = text.split_book(db, args.bookcode, splitter=splitter, director=director)
    if splitter is not None and splitter.fallbacks:
        sys.stderr.write(
            f"pipeline-kit: warning: {plural(len(splitter.fallbacks), 'chapter')} fell back to the rules "
            f"(first: {splitter.fallbacks[0]})\n"
        )
    print(
        f"{report.bookcode}: {plural(report.chapters_split, 'chapter')} split "
        f"({report.chapters_already_split} already), "
        f"{plural(report.shots_created, 'shot')}, {plural(report.tasks_created, 'task')} created"
    )
    if director is not None and report.tasks_created:
        lane = kinds.BY_NAME["direct_chapter"].lane
        sys.stderr.write(
            f"the director's tasks wait in lane {lane}, which `pipeline-kit work` serves only when asked "
            f"(--lanes {','.join((*DEFAULT_LANES, lane))}); the frames wait for them, and go ahead with the "
            "rules' prompts where the model cannot be reached\n"
        )
    with db.reading() as conn:
        styled = get_book(conn, args.bookcode).style
    if not styled and report.tasks_created:
        sys.stderr.write(
            f"no style line for {report.bookcode}: its prompts say only '{STYLE}'; give it an era, medium and "
            f'palette once, before work starts: pipeline-kit style {report.bookcode} "…"\n'
        )
    for why in report.films_replanned:
        sys.stderr.write(f"films re-planned, to be made again: {why}\n")
    if report.recast:
        sys.stderr.write(
            f"the bible changed how earlier shots are cast: {plural(len(report.recast), 'task')} to be made again\n"
        )
    return 0


def _model_splitter(spec: str) -> text.ModelSplitter:
    """`ollama` or `ollama:MODEL`: the Ollama backend's chat function behind the model splitter."""
    kind, _, model = spec.partition(":")
    if kind != "ollama":
        raise BadInput(f"--model must be ollama or ollama:MODEL, got {spec!r}")
    from pipeline_kit.backends.ollama import chat  # the CLI joins the layers; text never imports a backend

    return text.ModelSplitter(lambda messages: chat(messages, model=model or None))


CAST_ACTIONS = {
    "merge": ("A", "B"),
    "unmerge": ("NAME", "ALIAS"),
    "rename": ("OLD", "NEW"),
    "describe": ("NAME", "TEXT"),
    "drop": ("NAME",),
    "voice": ("NAME", "VOICE"),
    "narrator": ("VOICE",),
    "narration": ("on|off",),
}
VOICE_ACTIONS = ("voice", "narrator", "narration")
PLACE_ACTIONS = {"merge": ("A", "B"), "rename": ("OLD", "NEW"), "describe": ("NAME", "TEXT"), "drop": ("NAME",)}


def _edit(args: argparse.Namespace, verb: str, wanted: dict[str, tuple[str, ...]], module: Any) -> int:
    """Run an edit action of `cast` or `places` (the function of that name in `module`) and say what it did."""
    if len(args.names) != len(wanted[args.action]):
        raise BadInput(f"{verb} {args.action} takes {' '.join(wanted[args.action])}")
    report = getattr(module, args.action)(open_db(args), args.bookcode, *args.names)
    entry = getattr(report, "character", None) or getattr(report, "place", None)
    what = entry.name if entry else args.names[0]
    print(f"{args.bookcode}: {args.action} {what}; {plural(len(report.reset), 'task')} reset to pending")
    return 0


def cmd_places(args: argparse.Namespace) -> int:
    if args.action is not None:
        return _edit(args, "places", PLACE_ACTIONS, placesdb)
    if args.names:
        raise BadInput(f"unknown places action {args.names[0]!r}: use {', '.join(sorted(PLACE_ACTIONS))}")
    entries = placesdb.list_places(open_db(args), args.bookcode)
    if args.json:
        print_json(
            [
                {**e.place.__dict__, "first_shot": e.first_shot, "last_shot": e.last_shot, "shots": e.shots}
                for e in entries
            ]
        )
        return 0
    for e in entries:
        p = e.place
        flags = _flags(p)
        print(
            f"{p.name}{flags}\t{p.mentions}\t{e.shots} shots\t{e.first_shot or '-'}..{e.last_shot or '-'}"
            f"\t{', '.join(p.aliases)}\t{p.description or '(not described)'}"
        )
    return 0


def _flags(entry: Any) -> str:
    """` [locked]`, ` [dropped]` for a cast or place entry a person fixed or dropped."""
    return "".join(f" [{f}]" for f, on in (("locked", entry.locked), ("dropped", entry.dropped)) if on)


def cmd_style(args: argparse.Namespace) -> int:
    db = open_db(args)
    if args.text is None:
        with db.reading() as conn:
            book = get_book(conn, args.bookcode)
        print(book.style or f"{STYLE} (the default)")
        return 0
    reset = placesdb.set_style(db, args.bookcode, args.text)
    print(f"{args.bookcode}: style set; {plural(len(reset), 'task')} reset to pending")
    return 0


def cmd_cast(args: argparse.Namespace) -> int:
    db = open_db(args)
    if args.action is None:
        if args.names:
            raise BadInput(f"unknown cast action {args.names[0]!r}: use {', '.join(sorted(CAST_ACTIONS))}")
        entries = castdb.list_cast(db, args.bookcode)
        if args.json:
            print_json(
                [
                    {
                        **e.character.__dict__,
                        "first_shot": e.first_shot,
                        "last_shot": e.last_shot,
                        "director_looks": e.director_looks,
                        "voice": e.voice,
                    }
                    for e in entries
                ]
            )
            return 0
        for e in entries:
            c = e.character
            flags = _flags(c)
            print(
                f"{c.name}{flags}\t{c.gender or '-'}\t{c.mentions}\t{e.first_shot or '-'}..{e.last_shot or '-'}"
                f"\t{', '.join(c.aliases)}\t{e.looks}\tvoice: {e.voice or 'default'}"
            )
        with db.reading() as conn:
            told = voices.book_voices(conn, args.bookcode)
        print(f"narrator\tvoice: {told.narrator or 'default'}\tnarration {'on' if told.narration else 'off'}")
        return 0
    if args.action in VOICE_ACTIONS:
        return _voice_edit(args, db)
    return _edit(args, "cast", CAST_ACTIONS, castdb)


def _voice_edit(args: argparse.Namespace, db: Database) -> int:
    """`cast BOOKCODE voice NAME VOICE`, `narrator VOICE`, `narration on|off`: who speaks the book."""
    if len(args.names) != len(CAST_ACTIONS[args.action]):
        raise BadInput(f"cast {args.action} takes {' '.join(CAST_ACTIONS[args.action])}")
    if args.action == "voice":
        name, voice = args.names
        reset = voices.set_voice(db, args.bookcode, name, None if voice == "default" else voice)
        said = f"{name} speaks with {'the default voice' if voice == 'default' else voice}"
    elif args.action == "narrator":
        reset = voices.set_narrator(db, args.bookcode, args.names[0])
        said = f"the narrator speaks with {args.names[0]}"
    else:
        if args.names[0] not in ("on", "off"):
            raise BadInput(f"cast narration takes on or off, not {args.names[0]!r}")
        reset = voices.set_narrator(db, args.bookcode, None, narration=args.names[0] == "on")
        said = f"narration {args.names[0]}"
    print(f"{args.bookcode}: {said}; {plural(len(reset), 'task')} reset to pending")
    return 0


def cmd_shot_show(args: argparse.Namespace) -> int:
    db = open_db(args)
    shot = text.show_shot(db, args.shot_id)
    print_json({**shot.__dict__, "direction": shot_direction(db, args.shot_id)})
    return 0


def cmd_shot_edit(args: argparse.Namespace) -> int:
    names = None if args.characters is None else args.characters.split(",")
    report = text.edit_shot(
        open_db(args, owner=True), args.shot_id, prompt=args.prompt, characters=names, location=args.location
    )
    print(f"{args.shot_id}: edited; {plural(len(report.reset), 'task')} reset to pending")
    return 0


def cmd_shot_rerun(args: argparse.Namespace) -> int:
    report = text.rerun_shot(open_db(args, owner=True), args.shot_id)
    print(f"{args.shot_id}: {plural(len(report.reset), 'task')} reset to pending")
    return 0
