"""`grant-worker`: a worker PC's database role can do a worker's job and nothing else.

Invariant protected (least privilege): a worker account can claim, heartbeat, complete and fail
tasks, but cannot run DDL, delete tasks or write books, chapters or shots; TLS options in the
URL reach the driver untouched.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from pipeline_kit import engine
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.worker import WorkerConfig, run_worker

from .helpers import enqueue_frames, row_counts

PASSWORD = "s3cr'et%\\x"
FORBIDDEN = (
    "DROP TABLE tasks",
    "CREATE TABLE evil (x INTEGER)",
    "INSERT INTO books (bookcode, title, lang, review) VALUES ('evil', 'Evil', 'en', FALSE)",
    "UPDATE shots SET prompt = 'evil'",
    "UPDATE chapters SET title = 'evil'",
    "DELETE FROM tasks",
)


@pytest.fixture
def role(db_url: str) -> Iterator[str]:
    """A unique role name, dropped again afterwards (roles outlive the scratch database)."""
    name = f"pk_w_{uuid.uuid4().hex[:8]}"
    yield name
    admin = create(db_url)
    try:
        with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            if admin.dialect == "postgresql":
                conn.exec_driver_sql(f"DROP OWNED BY {name}")
                conn.exec_driver_sql(f"DROP ROLE IF EXISTS {name}")
            elif admin.dialect == "mysql":
                conn.exec_driver_sql(f"DROP USER IF EXISTS '{name}'@'%%'")
    except sa.exc.DBAPIError:
        pass  # the role was never created (SQLite, or the grant failed)
    finally:
        admin.dispose()


def _as_role(db_url: str, role: str) -> Database:
    url = make_url(db_url).set(username=role, password=PASSWORD)
    return create(url.render_as_string(hide_password=False))


def test_worker_role_does_a_workers_job_and_nothing_else(
        db_url: str, role: str, tmp_path: Path, cli_main: Callable[..., int],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The role runs a worker (claim, heartbeat, complete, fail, watchdog) and is refused DDL and other writes."""
    monkeypatch.setenv("PK_TEST_PW", PASSWORD)
    code = cli_main(["--db", db_url, "grant-worker", role, "--password-env", "PK_TEST_PW"])
    if db_url.startswith("sqlite"):
        assert code == 2 and "SQLite has no roles" in capsys.readouterr().err
        return
    assert code == 0, capsys.readouterr().err
    admin = create(db_url)
    worker_db = _as_role(db_url, role)
    try:
        enqueue_frames(admin, 3)
        with admin.engine.begin() as conn:  # a limited lane: its claim takes the lane's row lock
            engine.enqueue(conn, [engine.TaskSpec(task_id="brain-1", kind="llm", lane="llm"),
                                  engine.TaskSpec(task_id="to-fail", kind="noop", lane="default")])
        summary = run_worker(worker_db, WorkerConfig(
            worker_id="pc2", lanes=("image", "llm"), backend="noop", until_empty=True, lease_s=10,
            heartbeat_s=2, outputs=tmp_path / "out", spool=tmp_path / "spool", progress=False,
            store=str(tmp_path),  # a folder: the database store's tables are not granted (yet)
            watchdog_every_s=0.1))
        assert summary.counts["completed"] == 4
        lease, = engine.claim(worker_db, "pc2", ["default"], lease_s=10)
        assert engine.heartbeat(worker_db, lease.task_id, lease.token, lease_s=10) is engine.Ack.ACCEPTED
        assert engine.fail(worker_db, lease.task_id, lease.token, error="boom")[0] is engine.Ack.ACCEPTED
        engine.reclaim_expired(worker_db, by="pc2")

        before = row_counts(admin)
        for sql in FORBIDDEN:
            with pytest.raises(sa.exc.DBAPIError, match="(?i)denied|permission|must be owner"):
                with worker_db.engine.begin() as conn:
                    conn.exec_driver_sql(sql)
        assert row_counts(admin) == before
        with admin.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(tasks)
                                .where(tasks.c.status == "completed")).scalar_one() == 4
    finally:
        worker_db.dispose()
        admin.dispose()


def test_print_shows_sql_and_creates_nothing(pg_url: str, cli_main: Callable[..., int],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--print writes the statements (no password without --password-env), connects to nothing, creates nothing."""
    name = f"pk_w_{uuid.uuid4().hex[:8]}"
    assert cli_main(["--db", pg_url, "grant-worker", name, "--print"]) == 0
    out = capsys.readouterr().out
    assert f"GRANT SELECT, UPDATE ON tasks TO {name};" in out and "PASSWORD" not in out
    admin = create(pg_url)
    try:
        with admin.engine.connect() as conn:
            assert conn.exec_driver_sql(f"SELECT count(*) FROM pg_roles WHERE rolname = '{name}'").scalar() == 0
    finally:
        admin.dispose()


def test_tls_options_reach_the_driver() -> None:
    """sslmode/sslrootcert (PostgreSQL) and ssl_ca (MariaDB) in the URL are passed through."""
    pg = create("postgresql://pc2@db.example/pk?sslmode=verify-full&sslrootcert=/etc/pk/ca.pem")
    assert dict(pg.engine.url.query) == {"sslmode": "verify-full", "sslrootcert": "/etc/pk/ca.pem"}
    _, kwargs = pg.engine.dialect.create_connect_args(pg.engine.url)
    assert kwargs["sslmode"] == "verify-full" and kwargs["sslrootcert"] == "/etc/pk/ca.pem"
    my = create("mysql://pc2@db.example/pk?ssl_ca=/etc/pk/ca.pem&ssl_verify_identity=true")
    _, kwargs = my.engine.dialect.create_connect_args(my.engine.url)
    assert kwargs["ssl"]["ca"] == "/etc/pk/ca.pem"
