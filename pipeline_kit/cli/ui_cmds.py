"""Screen subcommands: monitor (the admin screen as a web page) and notebooks (the creator's
notebooks as web pages), both served by Voilà through one launcher (ui/serve.py)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pipeline_kit.cli.common import int_in, open_db, positive_float
from pipeline_kit.db.connect import resolve_url
from pipeline_kit.errors import BadInput

if TYPE_CHECKING:
    from pipeline_kit.ui.serve import KernelLimits

_port = int_in(1024, 65535, "a port")
_pages = int_in(1, 64, "a number of pages")
_seconds = int_in(10, 86_400, "a number of seconds")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("monitor", help="serve the admin screen (03_monitor) as a web page on 127.0.0.1")
    _server_options(p)
    p.add_argument("--book", default="", metavar="BOOKCODE", help="show one book only")
    p.add_argument("--refresh", type=positive_float, default=5.0, help="seconds between refreshes")
    p.set_defaults(func=cmd_monitor)

    p = sub.add_parser(
        "notebooks", help="serve the creator's notebooks (01, 02, 03, post-mortem, planning) as web pages on 127.0.0.1"
    )
    _server_options(p)
    p.set_defaults(func=cmd_notebooks)


def _server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--port", type=_port, default=None, help="port to listen on (default 8866, or the next free one after it)"
    )
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument("--max-pages", type=_pages, default=8, help="pages open at once, each with its kernel (default 8)")
    p.add_argument(
        "--cull-after",
        type=_seconds,
        default=300,
        metavar="S",
        help="shut down the kernel of a page closed or left without a connection for S seconds (default 300)",
    )


def _limits(args: argparse.Namespace) -> KernelLimits:
    """The kernel limits asked for; the culler looks a few times within the idle time given."""
    from pipeline_kit.ui.serve import KernelLimits

    return KernelLimits(
        cull_idle_s=args.cull_after, cull_interval_s=min(60, max(1, args.cull_after // 5)), max_kernels=args.max_pages
    )


def cmd_monitor(args: argparse.Namespace) -> int:
    from pipeline_kit.ui.serve import serve_monitor

    if args.refresh < 0.2:
        raise BadInput(f"--refresh must be at least 0.2 s, got {args.refresh:g}")
    open_db(args).dispose()  # a missing or uninitialised database is reported here, not in the page
    return serve_monitor(
        resolve_url(args.db),
        port=args.port,
        open_browser=not args.no_browser,
        bookcode=args.book,
        refresh_s=args.refresh,
        limits=_limits(args),
    )


def cmd_notebooks(args: argparse.Namespace) -> int:
    from pipeline_kit.ui.serve import serve_notebooks

    open_db(args).dispose()
    return serve_notebooks(resolve_url(args.db), port=args.port, open_browser=not args.no_browser, limits=_limits(args))
