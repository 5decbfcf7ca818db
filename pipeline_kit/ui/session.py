"""Open the database a screen works on: always from $PIPELINE_KIT_DB, never from a parameter.

A notebook's kernel runs in notebooks/, so the CLI's relative default (data/production.db)
would silently open a second, empty database there; the screens insist on the variable instead,
and on a schema `pipeline-kit init` made. For the same reason the outputs a screen fetches
through the store are cached in this user's cache folder, not under the kernel's folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qs

import platformdirs

from pipeline_kit.db.connect import ENV_VAR, Database, connect
from pipeline_kit.db.migrate import require_schema
from pipeline_kit.errors import BadInput
from pipeline_kit.store import Store, open_store


def open_database() -> Database:
    """Connect to $PIPELINE_KIT_DB and check its schema; a clear error when it is not set."""
    if not os.environ.get(ENV_VAR):
        raise BadInput(
            f"set {ENV_VAR} to the database URL before starting Jupyter, e.g. "
            f"export {ENV_VAR}=sqlite:///$PWD/data/production.db"
        )
    db = connect()
    require_schema(db)
    return db


def url_parameter(name: str, environ: Mapping[str, str] = os.environ) -> str:
    """The value of `?name=` in the page's address when Voilà serves the notebook (Voilà hands
    the query string to the kernel as the variable QUERY_STRING); "" elsewhere."""
    values = parse_qs(environ.get("QUERY_STRING", "")).get(name)
    return values[-1].strip() if values else ""


def screen_cache() -> Path:
    """This PC's cache for what screens fetch and draw (e.g. ~/.cache/pipeline_kit), per user and
    never where the notebook happens to run (Voilà runs its kernels in notebooks/)."""
    return Path(platformdirs.user_cache_dir("pipeline_kit"))


def screen_store(db: Database, cache: Path | None = None) -> Store:
    """The output store in effect, as a screen reads it: fetched files cached under `cache`
    (default `screen_cache()`), whichever folder the notebook runs in."""
    return open_store(db, cache=(cache or screen_cache()) / "outputs")


def report_folder(out_dir: str, bookcode: str | None) -> Path:
    """Where a notebook's post-mortem writes its films and tables: the folder the user named, else
    this user's cache (reports/BOOKCODE under `screen_cache()`), never the notebook's own folder."""
    if out_dir:
        return Path(out_dir).expanduser()
    return screen_cache() / "reports" / (bookcode or "all")
