"""The command explains itself: every subcommand, option and positional argument of the whole
argparse tree has a one-line help, each subcommand's own page opens with a description, and the
global options work before and after the command. The tree is walked, not listed, so an option
added later without help fails here."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline_kit.cli import build_parser, main
from pipeline_kit.cli.parser import GLOBAL_OPTIONS


def walk(parser: argparse.ArgumentParser, name: str = "pipeline-kit") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the tree with the command line that reaches it."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from walk(sub, f"{name} {sub_name}")


def _missing_help(name: str, parser: argparse.ArgumentParser) -> Iterator[str]:
    for action in parser._actions:
        label = "/".join(action.option_strings) or action.metavar or action.dest
        if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
            yield f"{name} {label}"
        if isinstance(action, argparse._SubParsersAction):
            helped = {a.dest for a in action._choices_actions if (a.help or "").strip()}
            yield from (f"{name} {sub}" for sub in action.choices if sub not in helped)


def test_every_subcommand_option_and_argument_has_help() -> None:
    """No subcommand, option or positional argument anywhere in the tree lacks a help line."""
    missing = [item for name, parser in walk(build_parser()) for item in _missing_help(name, parser)]
    assert missing == []


def test_help_lines_are_one_line_and_pages_open_with_a_description() -> None:
    """Help strings are single lines, and `COMMAND --help` starts by saying what the command
    does (not only its usage); the top page speaks to a user, not to a developer."""
    multi = [
        f"{name} {'/'.join(a.option_strings) or a.dest}"
        for name, parser in walk(build_parser())
        for a in parser._actions
        if "\n" in (a.help or "")
    ]
    assert multi == []
    bare = [name for name, parser in walk(build_parser()) if not (parser.description or "").strip()]
    assert bare == []
    top = build_parser().format_help()
    assert "nothing else" not in top and "argument parsing" not in top


def test_the_walk_sees_nested_commands() -> None:
    """The walk reaches nested actions (so the tests above check them too)."""
    names = {name for name, _ in walk(build_parser())}
    assert {"pipeline-kit lane add", "pipeline-kit shot edit", "pipeline-kit work", "pipeline-kit ingest"} <= names


@pytest.mark.parametrize("flags", [flags for flags, _ in GLOBAL_OPTIONS])
def test_global_options_are_offered_on_every_command(flags: tuple[str, ...]) -> None:
    """Each global option is accepted by every subcommand, not only before it."""
    lacking = [
        name
        for name, parser in walk(build_parser())
        if not any(set(flags) & set(a.option_strings) for a in parser._actions)
    ]
    assert lacking == []


@pytest.mark.db
def test_db_after_the_command_is_the_db_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`status --db URL` reads that database, like `--db URL status`; a value given after the
    command wins over one given before it, and one given only before it is kept."""
    url = f"sqlite:///{tmp_path / 'after.db'}"
    assert main(["init", "--db", url]) == 0
    assert (tmp_path / "after.db").exists()
    capsys.readouterr()
    assert main(["status", "--db", url, "--json"]) == 0
    assert '"total": 0' in capsys.readouterr().out
    missing = tmp_path / "none.db"
    assert main(["--db", f"sqlite:///{missing}", "status", "--db", url]) == 0
    assert main(["--db", url, "lane", "list"]) == 0
    assert "image" in capsys.readouterr().out
    assert main(["lane", "list", "--db", f"sqlite:///{missing}"]) == 2
    assert f"no database at {missing}" in capsys.readouterr().err and not missing.exists()
