"""Text subcommands: ingest, split, and shot show/edit/rerun. Handlers only parse and print."""

from __future__ import annotations

import argparse
import sys

from pipeline_kit import text
from pipeline_kit.text import castdb
from pipeline_kit.text.direct import CONTEXT_TOKENS, LANGUAGES, DirectorSettings, shot_direction
from pipeline_kit.cli.common import open_db, positive_int, print_json
from pipeline_kit.errors import BadInput


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this area's subcommands to the parser."""
    p = sub.add_parser("ingest", help="store a book (or one chapter) and print its bookcode")
    p.add_argument("file")
    p.add_argument("--title", required=True)
    p.add_argument("--lang", choices=["zh", "en"], help="default: detected from the text")
    p.add_argument("--chapter", type=positive_int, metavar="N", help="the file is chapter N: add or replace it")
    p.add_argument("--force", action="store_true", help="re-split a changed chapter that was already split")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("split", help="split the book's unsplit chapters into shots and tasks")
    p.add_argument("bookcode")
    p.add_argument("--model", metavar="ollama[:MODEL]",
                   help="group sentences with a chat model (checked; the rules decide when it answers badly)")
    p.add_argument("--director", nargs="?", const="ollama", metavar="ollama[:MODEL]|openai:MODEL",
                   help="a chat model stages each chapter's shots and describes the cast, as llm-lane tasks "
                        "the frames wait for (its prompts replace the rules' ones where it answered)")
    p.add_argument("--prompt-lang", default="en", choices=sorted(LANGUAGES),
                   help="language of the director's image and video prompts (default en; captions and "
                        "spoken lines keep the book's language)")
    p.add_argument("--director-context", type=positive_int, default=CONTEXT_TOKENS, metavar="TOKENS",
                   help=f"the director model's context window; longer chapters go in chunks (default {CONTEXT_TOKENS})")
    p.set_defaults(func=cmd_split)

    p = sub.add_parser("cast", help="list the book's character bible, or edit it (re-queues what changes)",
                       description="cast BOOKCODE | cast BOOKCODE merge A B | rename OLD NEW | "
                                   "describe NAME TEXT | drop NAME")
    p.add_argument("bookcode")
    p.add_argument("action", nargs="?", choices=sorted(CAST_ACTIONS))
    p.add_argument("names", nargs="*", metavar="ARG")
    p.add_argument("--json", action="store_true", help="list as JSON")
    p.set_defaults(func=cmd_cast)

    p = sub.add_parser("shot", help="show, edit or re-run one shot")
    shot_sub = p.add_subparsers(dest="shot_command", metavar="ACTION", parser_class=type(p))
    shot_sub.required = True
    q = shot_sub.add_parser("show", help="print the shot: text, characters, location, prompts (the director's too)")
    q.add_argument("shot_id")
    q.set_defaults(func=cmd_shot_show)
    q = shot_sub.add_parser("edit", help="change the prompt, characters or location; resets the shot's tasks")
    q.add_argument("shot_id")
    q.add_argument("--prompt")
    q.add_argument("--characters", help="comma-separated names (empty for none)")
    q.add_argument("--location")
    q.set_defaults(func=cmd_shot_edit)
    q = shot_sub.add_parser("rerun", help="reset the shot's tasks (and their dependents) to pending")
    q.add_argument("shot_id")
    q.set_defaults(func=cmd_shot_rerun)


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
            sys.stderr.write(f"chapter {ch.number} re-split: {len(c.changed)} shots changed, {len(c.added)} added, "
                             f"{len(c.removed)} removed, {len(c.reset_tasks)} tasks reset\n")
            for shot_id in c.changed:
                sys.stderr.write(f"  changed {shot_id}\n")
    print(report.bookcode)
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    db = open_db(args, owner=True)
    splitter = _model_splitter(args.model) if args.model else None
    director = None if args.director is None else DirectorSettings.parse(
        args.director, prompt_lang=args.prompt_lang, context_tokens=args.director_context)
    report = text.split_book(db, args.bookcode, splitter=splitter, director=director)
    if splitter is not None and splitter.fallbacks:
        sys.stderr.write(f"pipeline-kit: warning: {len(splitter.fallbacks)} chapters fell back to the rules "
                         f"(first: {splitter.fallbacks[0]})\n")
    print(f"{report.bookcode}: {report.chapters_split} chapters split ({report.chapters_already_split} already), "
          f"{report.shots_created} shots, {report.tasks_created} tasks created")
    return 0


def _model_splitter(spec: str) -> text.ModelSplitter:
    """`ollama` or `ollama:MODEL`: the Ollama backend's chat function behind the model splitter."""
    kind, _, model = spec.partition(":")
    if kind != "ollama":
        raise BadInput(f"--model must be ollama or ollama:MODEL, got {spec!r}")
    from pipeline_kit.backends.ollama import chat  # the CLI joins the layers; text never imports a backend

    return text.ModelSplitter(lambda messages: chat(messages, model=model or None))


CAST_ACTIONS = {"merge": ("A", "B"), "rename": ("OLD", "NEW"), "describe": ("NAME", "TEXT"), "drop": ("NAME",)}


def cmd_cast(args: argparse.Namespace) -> int:
    db = open_db(args)
    if args.action is None:
        if args.names:
            raise BadInput(f"unknown cast action {args.names[0]!r}: use {', '.join(sorted(CAST_ACTIONS))}")
        entries = castdb.list_cast(db, args.bookcode)
        if args.json:
            print_json([{**e.character.__dict__, "first_shot": e.first_shot, "last_shot": e.last_shot,
                         "director_looks": e.director_looks} for e in entries])
            return 0
        for e in entries:
            c = e.character
            flags = "".join(f" [{f}]" for f, on in (("locked", c.locked), ("dropped", c.dropped)) if on)
            print(f"{c.name}{flags}\t{c.gender or '-'}\t{c.mentions}\t{e.first_shot or '-'}..{e.last_shot or '-'}"
                  f"\t{', '.join(c.aliases)}\t{e.looks}")
        return 0
    wanted = CAST_ACTIONS[args.action]
    if len(args.names) != len(wanted):
        raise BadInput(f"cast {args.action} takes {' '.join(wanted)}")
    action = {"merge": castdb.merge, "rename": castdb.rename, "describe": castdb.describe, "drop": castdb.drop}
    report = action[args.action](db, args.bookcode, *args.names)
    what = report.character.name if report.character else args.names[0]
    print(f"{args.bookcode}: {args.action} {what}; {len(report.reset)} tasks reset to pending")
    return 0


def cmd_shot_show(args: argparse.Namespace) -> int:
    db = open_db(args)
    shot = text.show_shot(db, args.shot_id)
    print_json({**shot.__dict__, "direction": shot_direction(db, args.shot_id)})
    return 0


def cmd_shot_edit(args: argparse.Namespace) -> int:
    names = None if args.characters is None else args.characters.split(",")
    report = text.edit_shot(open_db(args, owner=True), args.shot_id, prompt=args.prompt,
                            characters=names, location=args.location)
    print(f"{args.shot_id}: edited; {len(report.reset)} tasks reset to pending")
    return 0


def cmd_shot_rerun(args: argparse.Namespace) -> int:
    report = text.rerun_shot(open_db(args, owner=True), args.shot_id)
    print(f"{args.shot_id}: {len(report.reset)} tasks reset to pending")
    return 0
