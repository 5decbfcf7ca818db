"""Scratch databases the bench creates and drops itself: it never opens the user's database.

PostgreSQL and MariaDB get a fresh `pk_bench_<random>` database on the admin server, dropped
on exit; SQLite gets a file in a new temporary directory, removed on exit.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa

from pipeline_kit.bench.config import BenchConfig
from pipeline_kit.bench.errors import BenchFailed
from pipeline_kit.db import Database, connect, create
from pipeline_kit.db.migrate import init, schema_version
from pipeline_kit.engine.lanes import seed_default_lanes
from pipeline_kit.errors import DatabaseUnavailable

T = TypeVar("T")
REDO_ATTEMPTS = 3  # a measurement cut short by a server restart is redone, at most twice
SERVER_WAIT = (1.0,) * 90  # seconds between reconnection attempts after an interruption

# Tables a run writes, emptied between runs (children before parents).
RUN_TABLES = ("task_deps", "attempts", "events", "workers", "tasks")


@contextmanager
def scratch_url(database: str, config: BenchConfig) -> Iterator[str]:
    """Yield the URL of a new database of that kind (sqlite, postgresql, mariadb); drop it after."""
    if database == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="pk_bench_"))
        try:
            yield f"sqlite:///{folder / 'bench.db'}"
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    admin_url = config.pg_admin if database == "postgresql" else config.mariadb_admin
    name = f"pk_bench_{uuid.uuid4().hex[:10]}"
    admin = create(admin_url).engine.execution_options(isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            suffix = " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" if database == "mariadb" else ""
            conn.execute(sa.text(f"CREATE DATABASE {name}{suffix}"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        first = str(exc.orig or exc).strip().splitlines()[0]
        raise DatabaseUnavailable(f"{database} benchmark server unreachable: {first}") from None
    url = sa.engine.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        _drop(admin, name, database)


def _drop(admin: sa.Engine, name: str, database: str) -> None:
    """Drop the scratch database; if the server is gone, say what was left behind (never mask an error)."""
    try:
        with admin.connect() as conn:
            force = " WITH (FORCE)" if database == "postgresql" else ""
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}{force}"))
    except sa.exc.DBAPIError as exc:
        first = str(exc.orig or exc).strip().splitlines()[0]
        warnings.warn(f"could not drop scratch database {name} on {database}: {first}", stacklevel=2)
    finally:
        admin.dispose()


def reset(url: str) -> None:
    """Leave the scratch database with the current schema, the default lanes and no tasks."""
    if url.startswith("sqlite"):
        path = Path(sa.engine.make_url(url).database or "")
        for extra in ("", "-wal", "-shm"):
            Path(f"{path}{extra}").unlink(missing_ok=True)
    db = create(url)
    try:
        if schema_version(db) is None:
            init(db)
        elif db.dialect == "postgresql":
            with db.engine.begin() as conn:
                conn.execute(sa.text(f"TRUNCATE {', '.join(RUN_TABLES)} RESTART IDENTITY"))
        else:
            with db.engine.begin() as conn:
                conn.execute(sa.text("SET FOREIGN_KEY_CHECKS = 0"))
                for table in RUN_TABLES:
                    conn.execute(sa.text(f"TRUNCATE TABLE {table}"))
                conn.execute(sa.text("SET FOREIGN_KEY_CHECKS = 1"))
        seed_default_lanes(db)
    finally:
        db.dispose()


def settle(db: Database) -> None:
    """Refresh planner statistics and flush dirty pages, so every run starts alike.

    SQLite's ANALYZE is taken deliberately while every row is pending: the planner trap the
    engine's INDEXED BY claim must survive. An empty attempts table is left unanalyzed, as in a
    fresh database: statistics saying "empty" would send PostgreSQL's per-task attempt lookups to
    sequential scans for the whole run, a state autovacuum ends within a minute in real use.
    """
    if db.dialect == "sqlite":
        raw = db.engine.raw_connection()
        try:
            raw.driver_connection.execute("ANALYZE")
            raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            raw.close()
        return
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        history = conn.execute(sa.text("SELECT 1 FROM attempts LIMIT 1")).first() is not None
        if db.dialect == "postgresql":
            conn.execute(sa.text("VACUUM ANALYZE tasks"))
            if history:
                conn.execute(sa.text("VACUUM ANALYZE attempts"))
            try:
                conn.execute(sa.text("CHECKPOINT"))
            except sa.exc.DBAPIError:
                pass  # needs superuser or pg_checkpoint; the runs are only a little noisier without
        else:
            conn.execute(sa.text("ANALYZE TABLE tasks, attempts" if history else "ANALYZE TABLE tasks"))


def redo_if_interrupted(measure: Callable[[], T], url: str, what: str, progress: Callable[[str], None]) -> T:
    """Run one measurement; if the server went away under it, wait for the server and redo it.

    Only a broken connection is redone: a measurement that finishes is kept whatever it found
    (an exactly-once violation is a result, never retried away).
    """
    for attempt in range(1, REDO_ATTEMPTS + 1):
        try:
            return measure()
        except (BenchFailed, sa.exc.DBAPIError) as exc:
            if attempt == REDO_ATTEMPTS or not _connection_lost(exc):
                raise
            progress(f"{what}: interrupted ({str(exc).strip().splitlines()[0][:120]}); redoing it")
            connect(url, retries=SERVER_WAIT).dispose()
    raise AssertionError("unreachable")


def _connection_lost(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(
        sign in text
        for sign in (
            "closed the connection",
            "lost connection",
            "shutting down",
            "terminating connection",
            "connection failed",
            "connection refused",
            "can't connect",
            "server has gone away",
        )
    )
