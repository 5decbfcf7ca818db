"""The `pipeline-kit` command: argument parsing and exit codes, nothing else.

Each area registers its subcommands from its own module; handlers call into the package and
print. Exit codes: 0 success, 2 bad input or usage (one line on stderr), 1 runtime failure.
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
from pipeline_kit.errors import PipelineKitError
from pipeline_kit.security import permission_denied, refusal

AREAS = (engine_cmds, text_cmds, worker_cmds, store_cmds, film_cmds, analysis_cmds, ui_cmds, ops_cmds, bench_cmds)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pipeline-kit", description=__doc__.splitlines()[0])
    parser.add_argument("--db", metavar="URL", help="database URL (else $PIPELINE_KIT_DB, else sqlite:///data/production.db)")
    parser.add_argument("--version", action="version", version=f"pipeline-kit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
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
