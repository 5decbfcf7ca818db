"""The `pipeline-kit` command: each area registers its subcommands from its own module; handlers
call into the package and print. Exit codes: 0 success, 2 bad input or usage (one line on stderr),
1 runtime failure.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pipeline_kit import __version__
from pipeline_kit.cli import (
    analysis_cmds,
    bench_cmds,
    engine_cmds,
    film_cmds,
    ops_cmds,
    store_cmds,
    text_cmds,
    ui_cmds,
    worker_cmds,
)
from pipeline_kit.cli.common import command_name
from pipeline_kit.cli.parser import Parser, add_global_options
from pipeline_kit.errors import PipelineKitError
from pipeline_kit.security import permission_denied, refusal

AREAS = (engine_cmds, text_cmds, worker_cmds, store_cmds, film_cmds, analysis_cmds, ui_cmds, ops_cmds, bench_cmds)


DESCRIPTION = (
    "Turn a novel into a film with AI on one PC or several: the book becomes storyboard shots, "
    "each shot's frames and clip are tasks in one shared table, and workers on every PC claim them."
)
EPILOG = (
    "Global options such as --db go before or after the command. Exit codes: 0 success, "
    "2 bad input or usage (one line on stderr), 1 a runtime failure such as an unreachable database. "
    "`pipeline-kit COMMAND --help` explains a command."
)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree: every area's subcommands under one parser."""
    parser = Parser(prog="pipeline-kit", description=DESCRIPTION, epilog=EPILOG)
    add_global_options(parser, on_command=False)
    parser.add_argument("--version", action="version", version=f"pipeline-kit {__version__}", help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="what to do (each has its own --help)")
    sub.required = True
    for area in AREAS:
        area.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PipelineKitError as exc:
        sys.stderr.write(f"pipeline-kit: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("pipeline-kit: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a refused privilege (however wrapped) is bad input, not a crash
        reason = permission_denied(exc)
        if reason is None:
            raise
        sys.stderr.write(f"pipeline-kit: {refusal(command_name(args))} ({reason})\n")
        return 2
