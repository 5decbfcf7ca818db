"""The command's parser classes: usage errors in one line, a help line on every subcommand's own
page, and the global options (`--db`) accepted before the command and after it alike."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

# Global options: (flags, add_argument keywords). Each is offered on the top-level parser and on
# every subcommand, so `pipeline-kit --db URL status` and `pipeline-kit status --db URL` agree.
GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (
        ("--db",),
        {"metavar": "URL", "help": "database URL (else $PIPELINE_KIT_DB, else sqlite:///data/production.db)"},
    ),
)


def add_global_options(parser: argparse.ArgumentParser, *, on_command: bool) -> None:
    """Add the global options; on a subcommand they default to 'not given', so they never
    overwrite a value given before the command."""
    for flags, keywords in GLOBAL_OPTIONS:
        extra = {"default": argparse.SUPPRESS} if on_command else {}
        parser.add_argument(*flags, **keywords, **extra)


class Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subcommands that take the global options too, and whose own `--help` opens with the line
    the command list shows for them."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if "help" in kwargs and "description" not in kwargs:
            kwargs["description"] = kwargs["help"]
        parser = super().add_parser(name, **kwargs)
        add_global_options(parser, on_command=True)
        return parser


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2, and subcommands are `Commands`."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("action", Commands)
        return super().add_subparsers(**kwargs)
