"""The output store every PC reaches: a folder, the database itself, or S3-compatible storage.

Chosen per database (`pipeline-kit store set URL`, kept in pk_meta so every PC agrees), else
per dialect (a folder for SQLite, the database for PostgreSQL and MariaDB), and overridable per
worker (`work --store URL`). A task's output is published under a PC-independent name
(`outputs/BOOK/SHOT/KIND.ext`, `films/BOOK/film.mp4`); the task row's completion records where
it went (`output_path`) and its checksums (`result.sha256`, `result.sides`), and only that record,
written under the lease token, makes a stored file an output. Readers fetch through the store
into a local cache keyed by checksum, so a PC never reads another PC's disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import meta
from pipeline_kit.errors import BadInput

SETTING = "store"  # pk_meta key holding the database's store URL
DATABASE_URL = "database"


@dataclass(frozen=True)
class Stored:
    """What publishing gave: the output_path to record, and the checksums of main and side files."""

    output_path: str
    size: int
    sha256: str
    sides: dict[str, str] = field(default_factory=dict)  # ".srt" -> sha256


class Store(Protocol):
    """One kind of store. Side files (".srt", ".contact.png") travel with their main file."""

    url: str

    def output_path(self, name: str) -> str:
        """The output_path a file published under `name` is recorded with."""

    def name_of(self, output_path: str) -> str:
        """The PC-independent name of a recorded output_path (what `export` writes it as)."""

    def publish(self, name: str, main: Path, sides: Mapping[str, Path]) -> Stored:
        """Store `main` (and its side files) under `name`; safe to repeat."""

    def settle(self, stored: Stored, main: Path, sides: Mapping[str, Path]) -> None:
        """The completion was sent: keep what is still local where later fetches find it."""

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        """A local path holding a completed task's output, its side files beside it."""

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        """A local path holding one side file of a completed task's output (None if it has none),
        without fetching the main file."""


def side_name(path: Path, suffix: str) -> Path:
    """Where a side file of `path` lives: its suffix replaced (film.mp4 -> film.srt)."""
    return path.with_name(path.name[: len(path.name) - len(path.suffix)] + suffix)


def stored_url(db: Database) -> str | None:
    """The store URL the owner set for this database, if any."""
    with db.engine.connect() as conn:
        return conn.execute(sa.select(meta.c.value).where(meta.c.key == SETTING)).scalar()


def set_url(db: Database, url: str) -> str:
    """Record `url` as the database's store (checked first); returns it as stored."""
    url = check_url(url)
    with db.engine.begin() as conn:
        if conn.execute(sa.update(meta).where(meta.c.key == SETTING).values(value=url)).rowcount == 0:
            conn.execute(sa.insert(meta).values(key=SETTING, value=url))
    return url


def check_url(url: str) -> str:
    """A store URL in its kept form, or BadInput saying which forms there are."""
    url = url.strip()
    parsed = urlparse(url)
    if url in (DATABASE_URL, "db"):
        return DATABASE_URL
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise BadInput(f"an S3 store needs a bucket: s3://BUCKET[/PREFIX], got {url!r}")
        return url.rstrip("/")
    if parsed.scheme == "file":
        url = parsed.path
    elif parsed.scheme and len(parsed.scheme) > 1:  # c:\\ is a drive, not a scheme
        raise BadInput(f"unknown store {url!r}: use a folder (/mnt/film, file:///mnt/film), "
                       "'database', or s3://BUCKET/PREFIX")
    if not url or len(url) > 255:
        raise BadInput("a store folder must be a path of 1 to 255 characters")
    return str(Path(url).expanduser().resolve())


def effective_url(db: Database, override: str | None = None) -> tuple[str | None, str]:
    """(URL, why): the worker's override, else the database's setting, else the dialect's
    default (None: this PC's outputs folder, for SQLite; the database elsewhere)."""
    if override:
        return check_url(override), "set for this worker"
    url = stored_url(db)
    if url:
        return url, "set for this database"
    if db.dialect == "sqlite":
        return None, "default for SQLite: this PC's outputs folder"
    return DATABASE_URL, f"default for {db.dialect}: kept in the database"


def open_store(db: Database, *, override: str | None = None, outputs: Path = Path("data/outputs"),
               cache: Path = Path("data/cache")) -> Store:
    """The store in effect for this PC: `outputs` is the folder when the store is this PC's own."""
    url, _ = effective_url(db, override)
    if url is None:
        from pipeline_kit.store.folder import FolderStore
        return FolderStore(outputs, url=str(outputs), must_exist=False)
    if url == DATABASE_URL:
        from pipeline_kit.store.database import DatabaseStore
        return DatabaseStore(db, cache)
    if url.startswith("s3://"):
        from pipeline_kit.store.s3 import S3Store
        return S3Store(url, cache)
    from pipeline_kit.store.folder import FolderStore
    return FolderStore(Path(url) / "outputs", url=url, must_exist=True)


__all__ = ["DATABASE_URL", "Store", "Stored", "check_url", "effective_url", "open_store", "set_url",
           "side_name", "stored_url"]
