"""Read a run's log (tasks, attempts, events, workers, and the titles of its books) from any
database into pandas.

Reads go through SQLAlchemy in chunks inside one read transaction, so the frames describe
one moment even while workers keep writing (SQLite: a deferred read in WAL; PostgreSQL and
MariaDB: REPEATABLE READ). A run can be frozen to Parquet for the archive and read back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, books, events, tasks, workers

CHUNK_ROWS = 100_000

COLUMNS: dict[str, tuple[str, ...]] = {
    "tasks": (
        "id",
        "task_id",
        "bookcode",
        "shot_id",
        "kind",
        "lane",
        "status",
        "priority",
        "worker_id",
        "attempts",
        "max_attempts",
        "cost",
        "created_at",
        "finished_at",
        "output_path",
    ),
    "attempts": (
        "task_id",
        "attempt_no",
        "worker_id",
        "claimed_at",
        "finished_at",
        "outcome",
        "error_kind",
        "cost",
        "model",
        "output_bytes",
        "provider",
    ),
    "events": ("id", "at", "kind", "task_id", "worker_id", "detail"),
    "workers": ("worker_id", "uid", "host", "version", "lanes", "backend", "started_at", "last_seen_at", "state"),
    "books": ("bookcode", "title"),
}
TIMES: dict[str, tuple[str, ...]] = {
    "tasks": ("created_at", "finished_at"),
    "attempts": ("claimed_at", "finished_at"),
    "events": ("at",),
    "workers": ("started_at", "last_seen_at"),
    "books": (),
}
INTEGERS: dict[str, tuple[str, ...]] = {
    "tasks": ("id", "priority", "attempts", "max_attempts"),
    "attempts": ("attempt_no", "output_bytes"),
    "events": ("id",),
    "workers": (),
    "books": (),
}
FLOATS = ("cost",)
_TABLES = {"tasks": tasks, "attempts": attempts, "events": events, "workers": workers, "books": books}
# Columns read from a JSON field rather than a column: the provider a backend recorded in the
# attempt's settings (engine/spend.py says how spend is put down to providers).
DERIVED = {"provider": attempts.c.settings["provider"].as_string()}
# Fields of events.detail the metrics use, lifted into columns of their own.
DETAIL_FIELDS = ("by", "count", "op")


@dataclass(frozen=True, eq=False)
class RunLog:
    """The frames of one run (or one book's share of it), times as naive UTC, and the titles of
    the books it covers."""

    tasks: pd.DataFrame
    attempts: pd.DataFrame
    events: pd.DataFrame
    workers: pd.DataFrame
    bookcode: str | None = None
    books: pd.DataFrame = field(default_factory=lambda: empty("books"))

    @property
    def title(self) -> str | None:
        """The book's title when the log is one book's and its title is known."""
        if self.bookcode is None:
            return None
        match = self.books.loc[self.books["bookcode"] == self.bookcode, "title"]
        return str(match.iloc[0]) if len(match) else None

    @property
    def as_of(self) -> pd.Timestamp | None:
        """The latest time anywhere in the log: 'now' for running attempts and the ETA."""
        stamps = [
            self.attempts["claimed_at"].max(),
            self.attempts["finished_at"].max(),
            self.tasks["created_at"].max(),
            self.tasks["finished_at"].max(),
            self.events["at"].max(),
        ]
        known = [s for s in stamps if not pd.isna(s)]
        return max(known) if known else None

    def worker_ids(self) -> list[str]:
        """Every worker the log names: registered, attempted, holding a task, or heard from."""
        names: set[str] = set()
        for frame in (self.workers, self.attempts, self.tasks, self.events):
            names.update(str(w) for w in frame["worker_id"].dropna().unique())
        return sorted(names)


def load(db: Database, bookcode: str | None = None, *, chunk_rows: int = CHUNK_ROWS) -> RunLog:
    """Load the whole log, or the part of it that concerns one book."""
    with db.reading() as conn:
        _read_snapshot(conn, db.dialect)
        frames = {name: _read(conn, db.dialect, name, _select(name, bookcode), chunk_rows) for name in COLUMNS}
    return RunLog(bookcode=bookcode, **frames)


def _read_snapshot(conn: sa.Connection, dialect: str) -> None:
    """Make every read below see the same committed state (SQLite's one transaction does by
    itself; its reading connection takes no write lock)."""
    if dialect != "sqlite":
        conn.execution_options(isolation_level="REPEATABLE READ")


def _select(name: str, bookcode: str | None) -> sa.Select[Any]:
    table = _TABLES[name]
    stmt = sa.select(*(DERIVED[c].label(c) if c in DERIVED else table.c[c] for c in COLUMNS[name]))
    if "id" in table.c and name != "workers":
        stmt = stmt.order_by(table.c.id)
    elif name == "books":
        stmt = stmt.order_by(books.c.bookcode)
    if bookcode is None:
        return stmt
    book_tasks = sa.select(tasks.c.task_id).where(tasks.c.bookcode == bookcode)
    book_workers = sa.select(attempts.c.worker_id).where(attempts.c.task_id.in_(book_tasks))
    if name == "tasks":
        return stmt.where(tasks.c.bookcode == bookcode)
    if name == "books":
        return stmt.where(books.c.bookcode == bookcode)
    if name == "attempts":
        return stmt.where(attempts.c.task_id.in_(book_tasks))
    if name == "events":
        return stmt.where(
            sa.or_(
                events.c.task_id.in_(book_tasks),
                sa.and_(events.c.task_id.is_(None), events.c.worker_id.in_(book_workers)),
            )
        )
    return stmt.where(workers.c.worker_id.in_(book_workers))


def _read(conn: sa.Connection, dialect: str, name: str, stmt: sa.Select[Any], chunk_rows: int) -> pd.DataFrame:
    # Fetch SQLite's text times and every JSON detail as raw text and parse them vectorised
    # below, not value by value in SQLAlchemy's result processors.
    raw = set(TIMES[name]) if dialect == "sqlite" else set()
    raw.add("detail")
    stmt = stmt.with_only_columns(
        *(sa.type_coerce(c, sa.String).label(c.name) if c.name in raw else c for c in stmt.selected_columns)
    )
    result = conn.execute(stmt, execution_options={"stream_results": True, "yield_per": chunk_rows})
    chunks = []
    for rows in result.partitions():
        # Column-wise from plain tuples: building a frame from Row objects is several times slower.
        values = list(zip(*rows, strict=True))
        chunks.append(pd.DataFrame(dict(zip(COLUMNS[name], values, strict=True))))
    frame = pd.concat(chunks, ignore_index=True) if chunks else empty(name)
    return normalise(name, frame)


def empty(name: str) -> pd.DataFrame:
    """A zero-row frame with the columns and types of `name`."""
    return normalise(name, pd.DataFrame({c: [] for c in COLUMNS[name]}))


def normalise(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Fix the column types so every dialect (and a Parquet snapshot) yields the same frame."""
    frame = frame.copy()
    for col in COLUMNS[name]:
        if col in TIMES[name]:
            frame[col] = pd.to_datetime(frame[col], format="ISO8601").astype("datetime64[us]")
        elif col in INTEGERS[name]:
            frame[col] = pd.to_numeric(frame[col]).astype("Int64")
        elif col in FLOATS:
            frame[col] = pd.to_numeric(frame[col]).astype("float64")
        elif col == "detail":
            frame[col] = frame[col].map(_detail_text).astype("string")
        else:
            frame[col] = frame[col].astype("string")
    if name == "events":
        parsed = frame["detail"].map(lambda t: json.loads(t) if isinstance(t, str) else {})
        for field in DETAIL_FIELDS:
            values = parsed.map(lambda d, f=field: d.get(f) if isinstance(d, dict) else None)
            if field == "count":
                frame[field] = pd.to_numeric(values, errors="coerce").astype("float64")
            else:
                frame[field] = values.astype("string")
    return frame


def _detail_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def snapshot(log: RunLog, out_dir: Path) -> list[Path]:
    """Freeze the run to Parquet (one file per table) for the archive."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in COLUMNS:
        path = out_dir / f"{name}.parquet"
        getattr(log, name)[list(COLUMNS[name])].to_parquet(path, index=False)
        paths.append(path)
    return paths


def read_snapshot(in_dir: Path, bookcode: str | None = None) -> RunLog:
    """Read a Parquet snapshot back into the same frames `load` returns (a snapshot written
    before books were kept reads back with no titles)."""
    frames = {name: _read_parquet(in_dir, name) for name in COLUMNS}
    return RunLog(bookcode=bookcode, **frames)


def _read_parquet(in_dir: Path, name: str) -> pd.DataFrame:
    path = in_dir / f"{name}.parquet"
    if name == "books" and not path.exists():  # a snapshot from before titles were kept
        return empty(name)
    return normalise(name, pd.read_parquet(path))
