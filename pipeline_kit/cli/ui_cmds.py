"""Screen subcommands: monitor (the admin screen as a web page, served by Voilà)."""

from __future__ import annotations

import argparse

from pipeline_kit.cli.common import int_in, open_db, positive_float
from pipeline_kit.db.connect import resolve_url
from pipeline_kit.errors import BadInput

_port = int_in(1024, 65535, "a port")



def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("monitor", help="serve the admin screen (03_monitor) as a web page on 127.0.0.1")
    p.add_argument("--port", type=_port, default=8866, help="port to listen on (default 8866)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument("--book", default="", metavar="BOOKCODE", help="show one book only")
    p.add_argument("--refresh", type=positive_float, default=5.0, help="seconds between refreshes")
    p.set_defaults(func=cmd_monitor)


def cmd_monitor(args: argparse.Namespace) -> int:
    from pipeline_kit.ui.serve import serve_monitor

    if args.refresh < 0.2:
        raise BadInput(f"--refresh must be at least 0.2 s, got {args.refresh:g}")
    open_db(args).dispose()  # a missing or uninitialised database is reported here, not in the page
    return serve_monitor(resolve_url(args.db), port=args.port, open_browser=not args.no_browser,
                         bookcode=args.book, refresh_s=args.refresh)
