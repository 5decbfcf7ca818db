"""Shared fixtures: one contract suite, run on SQLite and on real PostgreSQL and MariaDB servers.

`db` is a freshly initialised, empty database of each dialect in turn. PostgreSQL and MariaDB
get one scratch database per test session (dropped at the end); each test starts from empty
tables. Outside CI a server that is down skips its tests; with CI set it fails them, because a
green run that never touched a real server proves nothing.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database, create
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import meta, metadata
from pipeline_kit.engine.lanes import seed_default_lanes

PG_ADMIN = os.environ.get("PIPELINE_KIT_TEST_PG", "postgresql://root@127.0.0.1:5432/postgres")
MY_ADMIN = os.environ.get("PIPELINE_KIT_TEST_MARIADB", "mysql://root@127.0.0.1:3306/test")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
DIALECTS = ("sqlite", "postgresql", "mariadb")
CORPUS = Path(__file__).resolve().parent / "data" / "corpus"  # public domain; see its SOURCE.md


def _unavailable(what: str, exc: Exception) -> None:
    message = f"{what} unreachable: {str(exc).splitlines()[0]}"
    if IN_CI:
        pytest.fail(f"{message} (CI must run every database test)")
    pytest.skip(message)


# The suite runs in parallel (pytest-xdist) against shared servers. A test marked
# `restarts_servers` holds this lock alone while it stops and starts PostgreSQL or MariaDB; every
# other database test, and the making and dropping of scratch databases, holds it shared.
SERVERS_LOCK = Path(tempfile.gettempdir()) / "pipeline_kit_tests_servers.lock"
_holding: list[bool] = []  # this process's hold, taken once: a nested take would wait on itself


@contextmanager
def _servers_held(exclusive: bool) -> Iterator[None]:
    if _holding:
        yield
        return
    with SERVERS_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        _holding.append(exclusive)
        try:
            yield
        finally:
            _holding.pop()


def _server_database(admin_url: str, dialect: str) -> Iterator[str]:
    """Create a scratch database on the server, yield its URL, drop it afterwards."""
    name = f"pk_test_{uuid.uuid4().hex[:10]}"
    admin = create(admin_url).engine.execution_options(isolation_level="AUTOCOMMIT")
    try:
        with _servers_held(exclusive=False), admin.connect() as conn:
            if dialect == "mariadb":
                conn.execute(sa.text(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"))
            else:
                conn.execute(sa.text(f"CREATE DATABASE {name}"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        _unavailable(dialect, exc)
    url = sa.engine.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    # Keep the plain scheme users paste: the project picks its driver.
    url = url.replace("postgresql+psycopg://", "postgresql://").replace("mysql+pymysql://", "mysql://")
    try:
        yield url
    finally:
        with _servers_held(exclusive=False), admin.connect() as conn:
            if dialect == "postgresql":
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            else:
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    yield from _server_database(PG_ADMIN, "postgresql")


@pytest.fixture(scope="session")
def mariadb_url() -> Iterator[str]:
    yield from _server_database(MY_ADMIN, "mariadb")


@pytest.fixture(params=DIALECTS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an initialised, empty database of each dialect (pass it to subprocesses)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'test.db'}"
    else:
        url = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
    database = create(url)
    try:
        init(database)
        _empty(database)
        seed_default_lanes(database)
    finally:
        database.dispose()
    yield url


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """A connected handle on the `db_url` database."""
    database = create(db_url)
    yield database
    database.dispose()


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Database]:
    """An initialised SQLite database only, for tests where the dialect does not matter."""
    database = create(f"sqlite:///{tmp_path / 'test.db'}")
    init(database)
    seed_default_lanes(database)
    yield database
    database.dispose()


def _empty(database: Database) -> None:
    with database.engine.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            if table.name != "pk_meta":
                conn.execute(table.delete())
        # settings (the output store) start unset; the schema version stays
        conn.execute(meta.delete().where(meta.c.key != "schema_version"))


def first_value(
    db: Database,
    query: sa.Select,
    what: str,
    *,
    timeout: float = 60,  # type: ignore[type-arg]
    every: float = 0.05,
) -> str:
    """Poll `query` until it returns a value (its first column, as text); fail naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with db.engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found:
            return str(found)
        time.sleep(every)
    raise AssertionError(f"never saw {what}")


# A test that uses any of these fixtures (directly or through another fixture) is marked `db`; a
# test that reaches a database some other way (a URL of its own, the CLI's --db) says so with
# @pytest.mark.db. `pytest -m "not db"` runs the database-free tests alone, in seconds.
DB_FIXTURES = frozenset({"db", "db_url", "sqlite_db", "pg_url", "mariadb_url"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)


@pytest.fixture(autouse=True)
def _servers_stay_up_for_others(request: pytest.FixtureRequest) -> Iterator[None]:
    """Parallel test processes never see a server restart they did not make (see SERVERS_LOCK)."""
    if request.node.get_closest_marker("restarts_servers"):
        with _servers_held(exclusive=True):
            yield
    elif request.node.get_closest_marker("db"):
        with _servers_held(exclusive=False):
            yield
    else:
        yield


@pytest.fixture(autouse=True)
def _unmarked_tests_reach_no_database(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked `db` that opens a database in this process fails, so `-m "not db"` means
    what it says: the marker is declared, never guessed."""
    if request.node.get_closest_marker("db") is None:

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("this test opens a database: mark it @pytest.mark.db")

        monkeypatch.setattr(sa, "create_engine", refuse)
