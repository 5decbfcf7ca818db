"""The output store every PC reaches: a folder, the database itself, or S3-compatible storage.

Chosen per database (`pipeline-kit store set URL`, kept in pk_meta so every PC agrees), else
per dialect: a SQLite database's folder store is fixed by `init` as the folder of the database
file (kept as "beside the database", so a project folder moved or copied keeps its own);
PostgreSQL and MariaDB keep outputs in the database; a worker may override it (`work --store
URL`). A task's output is published under a PC-independent name (`outputs/BOOK/SHOT/KIND.ext`,
`films/BOOK/film.mp4`) and the task row's completion records that name (`output_path`, never a
process's path) and its checksums (`result.sha256`, `result.sides`); only that record, written
under the lease token, makes a stored file an output. A folder store, which keeps files by name,
stages a worker's output under its lease's mark and gives it its name only once the completion
was accepted (`conclude`), so a late worker never replaces the output of the one that took its
task over; the completion records the mark (`result.staged`), and a reader finishes a reveal a
crash cut short. Readers fetch through the store (a folder store: ROOT/NAME; others into a local
cache keyed by checksum), so every process finds every output, from any folder, and a PC never
reads another PC's disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import urlparse

import sqlalchemy as sa

from pipeline_kit.db.blobs import Upload
from pipeline_kit.db.connect import Database
from pipeline_kit.db.migrate import BESIDE_DATABASE, default_store_root
from pipeline_kit.db.schema import STORE_KEY, meta
from pipeline_kit.errors import BadInput, GenerationError

DATABASE_URL = "database"


@dataclass(frozen=True)
class Stored:
    """What publishing gave: the output_path to record, and the checksums of main and side files."""

    output_path: str
    size: int
    sha256: str
    sides: dict[str, str] = field(default_factory=dict)  # ".srt" -> sha256
    staged: str | None = None  # a folder store: the lease's mark its files wait under until `conclude`
    stale: tuple[str, ...] = ()  # marks of other leases' staged files seen beside them (stale once ours is accepted)
    uploads: tuple[Upload, ...] = ()  # the database store: blobs the completion keeps in its transaction

    @classmethod
    def recorded(cls, output_path: str, result: Mapping[str, Any]) -> Stored:
        """What a completion's `result` says was published under `output_path`."""
        mark = result.get("staged")
        return cls(
            output_path=output_path,
            size=int(result.get("bytes") or 0),
            sha256=str(result.get("sha256") or ""),
            sides=dict(result.get("sides") or {}),
            staged=mark if isinstance(mark, str) else None,
        )


Holder = tuple[str, str] | None  # the (task_id, lease token) a worker publishes under
Kept = tuple[Path, Mapping[str, Path]] | None  # where a fenced output's files go back to: main, sides by suffix


class Store(Protocol):
    """One kind of store. Side files (".srt", ".contact.png") travel with their main file."""

    url: str
    root: Path | None  # the folder holding the store's files on this PC (a folder store), else None

    def publish(
        self, name: str, main: Path, sides: Mapping[str, Path], *, lease: Holder = None, first: bool = False
    ) -> Stored:
        """Store `main` (and its side files) under `name`; safe to repeat. `lease` (task_id,
        token): the task a worker publishes for (a worker account's database store asks it; a
        folder store stages the files under the lease's mark until `conclude`); `first`: the
        task's first lease ever, so nothing of another lease can be staged under `name`."""

    def settle(self, stored: Stored, main: Path, sides: Mapping[str, Path]) -> None:
        """Published: keep what is still local where later fetches find it."""

    def conclude(self, stored: Stored, *, accepted: bool, keep: Kept = None) -> None:
        """The completion recording `stored` was answered: accepted (or already, by this lease),
        the output takes its name; fenced, what was staged for it goes, back to `keep` (the
        worker's ready file and its side files) where given and free. Safe to repeat."""

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        """A local path holding a completed task's output (`output_path` is its store name), its
        side files beside it."""

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        """A local path holding one side file of a completed task's output (None if it has none),
        without fetching the main file."""

    def check(self) -> None:
        """BadInput, in one line, unless this store can be written and read back now (its folder,
        endpoint and credentials work)."""


def side_name(path: Path, suffix: str) -> Path:
    """Where a side file of `path` lives: its suffix replaced (film.mp4 -> film.srt)."""
    return path.with_name(path.name[: len(path.name) - len(path.suffix)] + suffix)


def checked_name(name: str) -> PurePosixPath:
    """A store name as a relative path inside the store, or GenerationError (missing_input) for
    one that is absolute or climbs out of it (a row an older version or a tamperer wrote)."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or "\\" in name or ":" in path.parts[0]:
        raise GenerationError(
            f"{name!r} is not a store name (outputs/..., films/...)", error_kind="missing_input", retryable=False
        )
    return path


def stored_url(db: Database) -> str | None:
    """The store URL recorded for this database (set by the owner, or by `init` for SQLite: the
    absolute folder of the database file, wherever that file is now)."""
    with db.reading() as conn:
        url = conn.execute(sa.select(meta.c.value).where(meta.c.key == STORE_KEY)).scalar()
    return default_store_root(db.engine.url) if url == BESIDE_DATABASE else url


def set_url(db: Database, url: str) -> str:
    """Record `url` as the database's store (checked first); returns it as stored."""
    url = check_url(url)
    with db.engine.begin() as conn:
        if conn.execute(sa.update(meta).where(meta.c.key == STORE_KEY).values(value=url)).rowcount == 0:
            conn.execute(sa.insert(meta).values(key=STORE_KEY, value=url))
    return url


def check_url(url: str) -> str:
    """A store URL in its kept form, or BadInput saying which forms there are."""
    url = url.strip()
    try:
        parsed = urlparse(url)
    except ValueError as exc:  # http://[::1 and the like
        raise BadInput(f"not a store URL: {url!r} ({exc})") from None
    if url in (DATABASE_URL, "db"):
        return DATABASE_URL
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise BadInput(f"an S3 store needs a bucket: s3://BUCKET[/PREFIX], got {url!r}")
        return url.rstrip("/")
    if parsed.scheme == "file":
        url = parsed.path
    elif parsed.scheme and len(parsed.scheme) > 1:  # c:\\ is a drive, not a scheme
        raise BadInput(
            f"unknown store {url!r}: use a folder (/mnt/film, file:///mnt/film), 'database', or s3://BUCKET/PREFIX"
        )
    if not url or len(url) > 255:
        raise BadInput("a store folder must be a path of 1 to 255 characters")
    return str(Path(url).expanduser().resolve())


def effective_url(db: Database, override: str | None = None) -> tuple[str, str]:
    """(URL, why): the worker's override, else the database's setting, else the dialect's
    default (for SQLite the absolute folder of the database file; the database elsewhere)."""
    if override:
        return check_url(override), "set for this worker"
    url = stored_url(db)
    default = default_store_root(db.engine.url)
    if url:
        return (
            url,
            "fixed by `init`: the folder beside the SQLite database" if url == default else "set for this database",
        )
    if default is not None:
        return default, "default for SQLite: the folder beside the database"
    return DATABASE_URL, f"default for {db.dialect}: kept in the database"


def open_store(db: Database, *, override: str | None = None, cache: Path = Path("data/cache")) -> Store:
    """The store in effect (`cache`: where a remote store's fetched files are kept on this PC)."""
    return store_at(db, effective_url(db, override)[0], cache)


def store_at(db: Database, url: str, cache: Path) -> Store:
    """The store a (checked) URL names."""
    if url == DATABASE_URL:
        from pipeline_kit.store.database import DatabaseStore

        return DatabaseStore(db, cache)
    if url.startswith("s3://"):
        from pipeline_kit.store.s3 import S3Store

        return S3Store(url, cache)
    from pipeline_kit.store.folder import FolderStore

    return FolderStore(Path(url))


__all__ = [
    "DATABASE_URL",
    "Store",
    "Stored",
    "check_url",
    "checked_name",
    "effective_url",
    "open_store",
    "set_url",
    "store_at",
    "side_name",
    "stored_url",
]
