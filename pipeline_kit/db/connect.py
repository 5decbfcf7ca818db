"""Turn a URL as a user pastes it into a configured SQLAlchemy engine.

`postgresql://` gets psycopg 3, `mysql://` and `mariadb://` get PyMySQL with utf8mb4, and a
bare path or `sqlite:///` gets SQLite in WAL mode whose transactions begin IMMEDIATE (SQLite
ignores FOR UPDATE, so the write lock taken at BEGIN is what makes a claim exclusive).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from pipeline_kit.errors import BadInput, DatabaseUnavailable, NotInitialised

DEFAULT_URL = "sqlite:///data/production.db"
ENV_VAR = "PIPELINE_KIT_DB"

# Seconds between connection attempts before a command gives up (exit 1).
CONNECT_RETRIES = (0.5, 1.0, 2.0)


# One encoder for every value: json.dumps with options builds one per call (a split encodes 25,000 params).
_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
# The C encoder JSONEncoder.encode makes anew for every value, made once with the same options
# (no check for circular values: params and results are plain data). A quarter of the time of a
# split's 33,000 encodings went to making it; None where the json module has no C speedups.
_C_ENCODER = c_make_encoder and c_make_encoder(
    None, _JSON.default, encode_basestring, None, _JSON.key_separator, _JSON.item_separator, True, False, True
)


def json_text(value: Any) -> str:
    """JSON as every database stores it: UTF-8, not \\u-escaped, so an analyst's
    `LIKE '%曹操%'` finds the row; keys sorted, so equal values give equal text."""
    if _C_ENCODER is None:
        return _JSON.encode(value)
    return "".join(_C_ENCODER(value, 0))


@dataclass(frozen=True)
class Database:
    """A live handle: the engine plus which of the three dialects it speaks."""

    engine: Engine
    dialect: str  # "sqlite" | "postgresql" | "mysql"

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def where(self) -> str:
        """Which database this is, for a person: see `describe_url`."""
        return describe_url(self.engine.url)

    def reading(self) -> sa.Connection:
        """A connection for a read-only look, used as a context manager: on SQLite its
        transactions begin `DEFERRED`, taking no write lock, so a screen or a status query never
        queues behind a worker's claim (every other connection begins `IMMEDIATE`); the server
        databases begin as always."""
        return self.engine.connect().execution_options(sqlite_begin="DEFERRED")

    def dispose(self) -> None:
        self.engine.dispose()


def resolve_url(url: str | None = None) -> str:
    """--db URL, else $PIPELINE_KIT_DB, else the SQLite default."""
    return url or os.environ.get(ENV_VAR) or DEFAULT_URL


def normalise_url(raw: str) -> URL:
    """Pick the project's driver for the plain URLs users paste; reject what is not a URL."""
    raw = raw.strip()
    if "://" not in raw:
        raise BadInput(f"not a database URL: {_redact(raw)!r} (try sqlite:///path.db or postgresql://host/db)")
    try:
        url = make_url(raw)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise BadInput(f"not a database URL: {_redact(raw)!r}") from None
    backend = url.get_backend_name()
    if backend in ("postgresql", "mysql", "mariadb") and not url.database:
        # Without a name the driver would silently pick a default database of the server.
        raise BadInput(
            f"the database URL {_redact(raw)!r} names no database: add it after the host, "
            f"e.g. {backend}://user@host/film"
        )
    if backend == "postgresql":
        return url.set(drivername="postgresql+psycopg")
    if backend in ("mysql", "mariadb"):
        query = dict(url.query)
        query.setdefault("charset", "utf8mb4")
        return url.set(drivername="mysql+pymysql", query=query)
    if backend == "sqlite":
        return url.set(drivername="sqlite+pysqlite")
    raise BadInput(f"unsupported database {backend!r}: use sqlite, postgresql or mysql/mariadb")


def describe_url(url: str | URL) -> str:
    """Which database a URL names, for a person: its kind, host, port and database name (the
    file, for SQLite); never the user, password or query options."""
    parsed = normalise_url(url) if isinstance(url, str) else url
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return f"SQLite {parsed.database or ':memory:'}"
    kind = "PostgreSQL" if backend == "postgresql" else "MariaDB/MySQL"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{kind} {parsed.host or 'localhost'}{port}, database {parsed.database or '(default)'}"


def _redact(raw: str) -> str:
    try:
        return make_url(raw).render_as_string(hide_password=True)
    except Exception:
        return raw.split("@")[-1] if "@" in raw else raw


def create(url: str | None = None, *, pool_size: int = 5, existing: bool = False) -> Database:
    """Build an engine for `url` (not yet connected). A SQLite file and its folder are made on
    first use, unless `existing` (read-only verbs create nothing: a missing file is an error)."""
    sa_url = normalise_url(resolve_url(url))
    backend = sa_url.get_backend_name()
    if backend == "sqlite":
        if existing and _sqlite_file(sa_url) and not Path(sa_url.database).exists():
            raise NotInitialised(f"no database at {sa_url.database}: run `pipeline-kit init` first")
        return Database(_sqlite_engine(sa_url), "sqlite")
    if backend == "postgresql":
        engine = sa.create_engine(
            sa_url,
            pool_pre_ping=True,
            pool_size=pool_size,
            json_serializer=json_text,
            isolation_level="READ COMMITTED",
            # A worker stopped inside a transaction must not hold row locks for long.
            connect_args={
                "connect_timeout": 5,
                "options": "-c idle_in_transaction_session_timeout=60000 -c lock_timeout=30000",
            },
        )
        return Database(engine, "postgresql")
    from pymysql.constants import CLIENT  # the mariadb extra's driver, needed only here

    engine = sa.create_engine(
        sa_url,
        pool_pre_ping=True,
        pool_size=pool_size,
        json_serializer=json_text,
        # Each statement sees the latest commits: the lane-limit count after its row lock.
        isolation_level="READ COMMITTED",
        connect_args={
            "connect_timeout": 5,
            "init_command": "SET SESSION innodb_lock_wait_timeout=30",
            # FOUND_ROWS: a row count says which rows matched (SQLAlchemy's default);
            # MULTI_STATEMENTS: the engine's hot path sends a transaction's statements
            # in one request (db/driver.py); every value in them is escaped by PyMySQL.
            "client_flag": CLIENT.FOUND_ROWS | CLIENT.MULTI_STATEMENTS,
        },
    )
    return Database(engine, "mysql")


def _sqlite_file(url: URL) -> bool:
    """Whether a SQLite URL names a file (not an in-memory database)."""
    return bool(url.database) and url.database != ":memory:"


def _sqlite_engine(url: URL) -> Engine:
    if _sqlite_file(url):
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, json_serializer=json_text, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # let SQLAlchemy's begin event issue BEGIN itself
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # IMMEDIATE takes the write lock up front: no deadlock-prone upgrade from a read lock.
        mode = conn.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


def connect(
    url: str | None = None, *, retries: tuple[float, ...] = CONNECT_RETRIES, existing: bool = False
) -> Database:
    """Create the engine and prove the server answers, retrying briefly before giving up."""
    db = create(url, existing=existing)
    for delay in (*retries, None):
        try:
            with db.reading() as conn:  # a probe: it must not queue behind a worker's write
                conn.execute(sa.text("SELECT 1"))
            return db
        except OperationalError as exc:
            if delay is None:
                db.dispose()
                raise DatabaseUnavailable(f"database unreachable at {db.url}: {_first_line(exc)}") from None
            time.sleep(delay)
    raise AssertionError("unreachable")


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
