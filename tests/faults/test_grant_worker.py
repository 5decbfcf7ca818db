"""`grant-worker`: a worker PC's database account can do a worker's job and nothing else.

Invariant protected (least privilege): an account made by `grant-worker` can make every write a
worker makes, the fault paths included (stale heartbeats and completions, reclaims, alerts,
blocked dependents, released leases, a spooled completion); it cannot change what a worker never
writes (a task's priority, params, kind or lane; books, chapters, shots, dependencies, lanes),
delete anything or run DDL; an owner's command run as it ends with one line and exit 2, changing
nothing. `--print` shows exactly the SQL it applies and needs no password or connection. TLS
options in the URL reach the driver untouched.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from pipeline_kit import engine, security
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import events, metadata, tasks
from pipeline_kit.engine import Ack, Completion, TaskSpec
from pipeline_kit.engine.outages import fleet_down, vote_down, vote_up
from pipeline_kit.worker import WorkerConfig, run_worker
from pipeline_kit.worker.spool import Spool

from .helpers import enqueue_frames, run_as_account, wait_leases_expired

GPU = "comfyui at gpu-pc:8188"
SERVERS = pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)

# Statements that touch what a worker never writes: each must be refused.
FORBIDDEN = (
    "UPDATE tasks SET priority = 99",
    "UPDATE tasks SET params = NULL",
    "UPDATE tasks SET kind = 'evil'",
    "UPDATE tasks SET lane = 'llm'",
    "UPDATE tasks SET max_attempts = 1000",
    "UPDATE tasks SET generation = 7",
    "UPDATE tasks SET bookcode = 'evil', shot_id = 'evil'",
    "INSERT INTO tasks (task_id, kind, lane, status, priority, attempts, retry_base, generation, "
    "max_attempts, run_after, deps_remaining, cost, created_at) VALUES ('evil', 'noop', 'default', "
    "'pending', 0, 0, 0, 0, 3, '2000-01-01', 0, 0, '2000-01-01')",
    "UPDATE attempts SET task_id = 'evil'",
    "UPDATE attempts SET lease_token = 'evil'",
    "UPDATE events SET kind = 'evil'",
    "UPDATE workers SET worker_id = 'evil'",
    "INSERT INTO books (bookcode, title, lang, review) VALUES ('evil', 'Evil', 'en', FALSE)",
    "UPDATE books SET budget = NULL",
    "UPDATE books SET review = FALSE",
    "INSERT INTO chapters (bookcode, number, title, text, checksum) VALUES ('hlm', 9, 'x', 'x', 'x')",
    "UPDATE chapters SET title = 'evil'",
    "UPDATE shots SET prompt = 'evil'",
    "INSERT INTO task_deps (task_id, depends_on) VALUES ('a', 'b')",
    "UPDATE task_deps SET depends_on = 'evil'",
    "INSERT INTO lanes (lane, paused, on_expire, paid) VALUES ('evil', FALSE, 'retry', FALSE)",
    "UPDATE lanes SET paused = TRUE",
    "UPDATE lanes SET max_running = NULL",
    "UPDATE lanes SET lane = lane",
    "UPDATE pk_meta SET value = '0'",
    *(
        f"DELETE FROM {table}"
        for table in (
            "tasks",
            "attempts",
            "events",
            "workers",
            "lanes",
            "task_deps",
            "books",
            "chapters",
            "shots",
            "pk_meta",
        )
    ),
    "TRUNCATE TABLE events",
    "DROP TABLE tasks",
    "CREATE TABLE evil (x INTEGER)",
    "ALTER TABLE tasks ADD COLUMN evil INTEGER",
    "CREATE INDEX ix_evil ON tasks (kind)",
)


def contents(db: Database) -> dict[str, list[str]]:
    """Every row of every table: a refused command must leave all of it as it was."""
    with db.engine.connect() as conn:
        return {t.name: sorted(repr(tuple(r)) for r in conn.execute(sa.select(t))) for t in metadata.sorted_tables}


def stored_events(db: Database, kind: str) -> list[sa.Row]:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        return list(conn.execute(sa.select(events).where(events.c.kind == kind)))


@SERVERS
def test_worker_account_makes_every_write_of_a_worker(db: Database, worker_url: str, tmp_path: Path) -> None:
    """As the worker account: a worker run (limited lane, dependents counted off, watchdog), then
    each fault path a worker meets: stale heartbeat, completion (with its cost) and failure,
    reclaims that retry and that fail for good (alert, blocked dependent), a permanent failure,
    a released lease, a spooled completion, a director's chat answer kept and read back, and a
    provider found down (the row paused, the vote cast, renewed, read and withdrawn)."""
    worker = create(worker_url)
    try:
        enqueue_frames(db, 2)
        engine.add_lane(db, "strict", on_expire="fail")
        with db.engine.begin() as conn:
            engine.enqueue(
                conn,
                [
                    TaskSpec(task_id="brain-1", kind="llm", lane="llm"),
                    TaskSpec(task_id="dep-a", kind="noop", lane="default"),
                    TaskSpec(task_id="dep-b", kind="noop", lane="default", depends_on=("dep-a",)),
                ],
            )
        summary = run_worker(
            worker,
            WorkerConfig(
                worker_id="pc2",
                lanes=("image", "llm", "default"),
                backend="noop",
                until_empty=True,
                lease_s=10,
                heartbeat_s=0.2,
                outputs=tmp_path / "out",
                spool=tmp_path / "spool",
                progress=False,
                watchdog_every_s=0.1,
            ),
        )
        assert summary.counts["completed"] == 5

        with db.engine.begin() as conn:
            engine.enqueue(
                conn,
                [TaskSpec(task_id=t, kind="noop", lane="default") for t in ("f1", "f2", "f3")]
                + [
                    TaskSpec(task_id="f2-next", kind="noop", lane="default", depends_on=("f2",)),
                    TaskSpec(task_id="s1", kind="noop", lane="strict"),
                    TaskSpec(task_id="s1-next", kind="noop", lane="default", depends_on=("s1",)),
                ],
            )
        leases = {
            lease.task_id: lease for lease in engine.claim(worker, "pc2", ["default", "strict"], limit=5, lease_s=1)
        }
        assert set(leases) == {"f1", "f2", "f3", "s1"}
        f1, f2, f3, s1 = (leases[t] for t in ("f1", "f2", "f3", "s1"))
        assert engine.heartbeat_many(
            worker, "pc2", {f1.task_id: f1.token}, lease_s=1, stages={f1.task_id: "generating"}
        ) == {"f1": Ack.ACCEPTED}
        engine.record_cost(worker, f1.task_id, f1.token, 0.04, model="m")
        engine.record_remote_job(worker, f1.task_id, f1.token, "job-1")
        assert engine.fail(worker, f2.task_id, f2.token, error="bad prompt", retryable=False, worker_id="pc2") == (
            Ack.ACCEPTED,
            engine.Status.FAILED,
        )
        assert engine.release_many(worker, {f3.task_id: f3.token}, worker_id="pc2") == ["f3"]
        wait_leases_expired(db)
        reclaimed = {r.task_id: r.new_status for r in engine.reclaim_expired(worker, by="pc2")}
        assert reclaimed == {"f1": engine.Status.PENDING, "s1": engine.Status.FAILED}

        assert engine.heartbeat(worker, f1.task_id, f1.token, lease_s=5, worker_id="pc2") is Ack.FENCED
        assert (
            engine.complete(worker, Completion(task_id=f1.task_id, token=f1.token, cost=0.04), worker_id="pc2")
            is Ack.FENCED
        )
        assert engine.fail(worker, f1.task_id, f1.token, error="late", worker_id="pc2")[0] is Ack.FENCED
        spool = Spool(tmp_path / "spool", "pc2")
        spool.put(Completion(task_id=f1.task_id, token=f1.token, result={"late": True}))
        assert spool.flush(worker, "pc2") == {"f1": Ack.FENCED}
        engine.touch_worker(worker, "pc2", "working", paused=f"{GPU} unreachable")  # a provider down
        vote_down(worker, GPU, "pc2", "connection refused", hold_s=60, quorum=1, new=True)  # 2 alerts
        vote_down(worker, GPU, "pc2", "connection refused", hold_s=60, quorum=1)  # renewed
        assert list(fleet_down(worker, 1)) == [GPU]
        vote_up(worker, GPU, "pc2", away_s=5.0)
        engine.touch_worker(worker, "pc2", "stopped")
        with db.engine.begin() as conn:
            engine.enqueue(conn, [TaskSpec(task_id="brain-2", kind="llm", lane="llm")])
        (brain,) = engine.claim(worker, "pc2", ["llm"], limit=1, lease_s=30)  # a director's task
        held = (brain.task_id, brain.token)
        engine.remember_answer(worker, "a" * 64, {"answer": "{}", "model": "m", "cost": 0.01}, lease=held)
        engine.remember_answer(worker, "a" * 64, {"answer": "again", "model": "m"}, lease=held)  # kept once
        assert engine.recall_answer(worker, "a" * 64)["answer"] == "{}"

        with db.engine.connect() as conn:
            status = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())
        assert status["dep-b"] == "completed" and status["f2"] == "failed" and status["f2-next"] == "blocked"
        assert status["s1"] == "failed" and status["s1-next"] == "blocked"
        assert status["f1"] == status["f3"] == "pending"
        assert sorted(e.detail["op"] for e in stored_events(db, "stale") if e.task_id == "f1") == [
            "complete",
            "complete",
            "fail",
            "heartbeat",
        ]
        assert len(stored_events(db, "reclaim")) == 2
        assert len(stored_events(db, "alert")) == 2 + 2
        assert len(stored_events(db, "provider_back")) == 1
    finally:
        worker.dispose()


@SERVERS
def test_worker_account_is_refused_what_a_worker_never_writes(
    db_url: str, db: Database, worker_url: str, cli_main: Callable[..., int]
) -> None:
    """Each statement that changes what a worker never writes (a task's priority, params, kind,
    lane; books, chapters, shots, task_deps, lanes), any DELETE and any DDL is refused, and
    nothing stored changes; running grant-worker again takes away broader grants given before."""
    role = make_url(worker_url).username
    on = "`{}`".format(make_url(db_url).database) + ".`{}`" if db.dialect == "mysql" else "{}"
    to = f"'{role}'@'%%'" if db.dialect == "mysql" else role  # %%: the driver formats
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in ("tasks", "books", "lanes"):  # what an older grant or a person may have given
            conn.exec_driver_sql(f"GRANT UPDATE, DELETE ON {on.format(table)} TO {to}")
    assert cli_main(["--db", db_url, "grant-worker", role, "--password-env", "PK_TEST_PW"]) == 0
    enqueue_frames(db, 2)
    before = contents(db)
    assert run_as_account(worker_url, FORBIDDEN) == []
    assert contents(db) == before


BOOK_TEXT = """Chapter 1. The Harbour

Mara walked down to the harbour at dawn. The gulls screamed over the empty quay.

"You are late," Tobias said. "The tide will not wait for us."
"""

# The owner's commands, as a worker account would type them (BOOK, SHOT, ... filled in).
OWNER_COMMANDS = {
    "init": ["init"],
    "enqueue": ["enqueue", "--kind", "noop", "--lane", "default"],
    "cancel": ["cancel", "TASK"],
    "retry": ["retry", "FAILED"],
    "lane add": ["lane", "add", "evil"],
    "lane pause": ["lane", "pause", "image"],
    "lane resume": ["lane", "resume", "image"],
    "lane limit": ["lane", "limit", "image", "1"],
    "ingest": ["ingest", "BOOKFILE", "--title", "Evil"],
    "split": ["split", "BOOK"],
    "shot edit": ["shot", "edit", "SHOT", "--prompt", "evil"],
    "shot rerun": ["shot", "rerun", "SHOT"],
    "grant-worker": ["grant-worker", "pk_w_evil", "--password-env", "PK_TEST_PW"],
}


@SERVERS
def test_owner_commands_as_a_worker_account_give_one_line_and_exit_2(
    db_url: str,
    db: Database,
    worker_url: str,
    tmp_path: Path,
    cli_main: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every owner's command run as the worker account: exit 2, one line on stderr that names
    the command and says to run it as the owner, no traceback, nothing stored changed. The
    worker's own commands (watchdog, status) and the read-only report still work."""
    book_file = tmp_path / "book.txt"
    book_file.write_text(BOOK_TEXT)
    assert cli_main(["--db", db_url, "ingest", str(book_file), "--title", "Harbour", "--lang", "en"]) == 0
    book = capsys.readouterr().out.strip()
    assert cli_main(["--db", db_url, "split", book]) == 0
    with db.engine.connect() as conn:
        shot, task = conn.execute(
            sa.select(tasks.c.shot_id, tasks.c.task_id).where(tasks.c.shot_id.is_not(None)).order_by(tasks.c.id)
        ).first()
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="failed-1", kind="noop", lane="default")])
        conn.execute(sa.update(tasks).where(tasks.c.task_id == "failed-1").values(status="failed"))
    capsys.readouterr()
    fill = {
        "TASK": task,
        "FAILED": "failed-1",
        "BOOKFILE": str(book_file),
        "BOOK": book,
        "SHOT": shot,
        "OUT": str(tmp_path / "report"),
    }
    before = contents(db)
    wrong = {}
    for name, argv in OWNER_COMMANDS.items():
        code = cli_main(["--db", worker_url, *(fill.get(word, word) for word in argv)])
        err = capsys.readouterr().err
        expected = f"pipeline-kit: permission denied: this account is a worker account; run {name} as the owner"
        if code != 2 or err.count("\n") != 1 or not err.startswith(expected):
            wrong[name] = (code, err[-300:])
    assert wrong == {}
    assert contents(db) == before
    assert cli_main(["--db", worker_url, "watchdog", "--once"]) == 0
    assert cli_main(["--db", worker_url, "status", "--json"]) == 0
    assert cli_main(["--db", worker_url, "report", book, "--out", str(tmp_path / "report")]) == 0
    assert contents(db) == before  # reading changed nothing


def test_grant_worker_on_sqlite_says_it_has_no_roles(
    sqlite_db: Database, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite has no accounts: grant-worker says so in one line, exit 2."""
    assert cli_main(["--db", str(sqlite_db.engine.url), "grant-worker", "pk_w_x", "--print"]) == 2
    assert "SQLite has no roles" in capsys.readouterr().err


@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_print_shows_what_is_applied_and_needs_no_password(
    db_url: str, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--print needs no password (MariaDB included: it shows '<password>' and says so), connects
    to nothing, creates nothing, and prints exactly the statements grant-worker applies."""
    name = f"pk_w_{uuid.uuid4().hex[:8]}"
    monkeypatch.delenv("PK_TEST_PW", raising=False)
    offline = db_url.replace("127.0.0.1", "192.0.2.1")  # TEST-NET: nothing answers there
    assert cli_main(["--db", offline, "grant-worker", name, "--print"]) == 0
    printed = capsys.readouterr()
    mariadb = db_url.startswith("mysql")
    grants = [line for line in printed.out.splitlines() if line.startswith("GRANT")]
    assert "SECURITY DEFINER" in printed.out and any(line.startswith("GRANT EXECUTE") for line in grants)
    assert (
        ("IDENTIFIED BY '<password>'" in printed.out and "'<password>'" in printed.err)
        if mariadb
        else "PASSWORD" not in printed.out
    )
    assert not [g for g in grants if any(w in g for w in ("INSERT", "UPDATE", "DELETE", "ALL"))], grants

    monkeypatch.setenv("PK_TEST_PW", "pw'1")
    assert cli_main(["--db", offline, "grant-worker", name, "--print", "--password-env", "PK_TEST_PW"]) == 0
    printed = capsys.readouterr().out
    assert "pw'1" not in printed and "pw''1" not in printed
    applied: list[str] = []
    monkeypatch.setattr(security, "apply", lambda _db, statements: applied.extend(statements))
    assert cli_main(["--db", db_url, "grant-worker", name, "--password-env", "PK_TEST_PW"]) == 0
    secret = "'pw''1'"
    assert "\n".join(f"{sql};" for sql in applied) == printed.strip().replace("'<password>'", secret)
    admin = create(db_url)
    try:
        with admin.engine.connect() as conn:
            query = (
                "SELECT count(*) FROM pg_roles WHERE rolname = :n"
                if not mariadb
                else "SELECT count(*) FROM mysql.user WHERE user = :n"
            )
            assert conn.execute(sa.text(query), {"n": name}).scalar() == 0
    finally:
        admin.dispose()


@pytest.mark.db
def test_tls_options_reach_the_driver() -> None:
    """sslmode/sslrootcert (PostgreSQL) and ssl_ca (MariaDB) in the URL are passed through."""
    pg = create("postgresql://pc2@db.example/pk?sslmode=verify-full&sslrootcert=/etc/pk/ca.pem")
    assert dict(pg.engine.url.query) == {"sslmode": "verify-full", "sslrootcert": "/etc/pk/ca.pem"}
    _, kwargs = pg.engine.dialect.create_connect_args(pg.engine.url)
    assert kwargs["sslmode"] == "verify-full" and kwargs["sslrootcert"] == "/etc/pk/ca.pem"
    my = create("mysql://pc2@db.example/pk?ssl_ca=/etc/pk/ca.pem&ssl_verify_identity=true")
    _, kwargs = my.engine.dialect.create_connect_args(my.engine.url)
    assert kwargs["ssl"]["ca"] == "/etc/pk/ca.pem"


@SERVERS
@pytest.mark.parametrize("lost", ["revoked", "dropped"])
def test_a_worker_account_missing_a_grant_is_told_to_refresh_it(
    db_url: str,
    db: Database,
    worker_url: str,
    cli_main: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    lost: str,
) -> None:
    """A worker account that lost a privilege or a routine a worker needs (an older or
    hand-edited grant, a worker newer than its routines) stops `work` with one line naming
    grant-worker, exit 2, not a traceback."""
    role = make_url(worker_url).username
    if db.dialect == "mysql":
        target = f"PROCEDURE `{make_url(db_url).database}`.`pk_register_worker`"
    else:
        target = "FUNCTION pk_register_worker(text, text, text, text, text, text, float8)"
    to = f"'{role}'@'%%'" if db.dialect == "mysql" else role  # %%: the driver formats
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(f"REVOKE EXECUTE ON {target} FROM {to}" if lost == "revoked" else f"DROP {target}")
    code = cli_main(
        [
            "--db",
            worker_url,
            "work",
            "--worker-id",
            "pc9",
            "--lanes",
            "default",
            "--backend",
            "noop",
            "--until-empty",
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(
        "pipeline-kit: permission denied: this account cannot work; run grant-worker for it again as the owner"
    ), err


def test_a_worker_account_reads_and_writes_no_table() -> None:
    """A worker account is granted SELECT only, on tables and columns that exist, never of a
    lease token: every write it makes goes through the owner's lease-checked routines, which
    ask for a token it can only have from its own claim."""
    tables = {t.name: t for t in metadata.sorted_tables}
    for table, privileges in security.GRANTS.items():
        for privilege in privileges:
            assert privilege == "SELECT" or privilege.startswith("SELECT ("), privilege
            columns = privilege.removeprefix("SELECT").strip(" ()").split(", ") if "(" in privilege else []
            assert set(columns) <= set(tables[table].c.keys()) and "lease_token" not in columns
        if "lease_token" in tables[table].c:
            assert privileges != ("SELECT",), table


@SERVERS
def test_the_owner_inits_an_empty_server_database(
    db_url: str, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """The owner check lets the owner through, also where there is no schema yet: `init` of an
    empty PostgreSQL or MariaDB database creates it (exit 0)."""
    name = f"pk_test_empty_{uuid.uuid4().hex[:8]}"
    admin = create(db_url).engine.execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        url = make_url(db_url).set(database=name).render_as_string(hide_password=False)
        assert cli_main(["--db", url, "init"]) == 0, capsys.readouterr().err
        assert cli_main(["--db", url, "lane", "pause", "image"]) == 0, capsys.readouterr().err
    finally:
        with admin.connect() as conn:
            force = " WITH (FORCE)" if admin.dialect.name == "postgresql" else ""
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}{force}")
        admin.dispose()


# Routines as an earlier version made them: pk_finish before it named the output's blobs, and
# pk_note_attempt while it still took them.
_OLD_OVERLOADS = (
    (
        "pk_finish",
        "p_ids text[], p_token text, p_result json, p_path text, p_cost float8, p_bytes bigint, "
        "p_model text, p_settings json",
        "SETOF varchar",
        "SELECT NULL::varchar WHERE FALSE",
    ),
    (
        "pk_note_attempt",
        "p_task_id text, p_token text, p_cost float8, p_model text, p_remote_job_id text, "
        "p_output_blobs text, p_keep_cost boolean",
        "void",
        "SELECT",
    ),
)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_an_upgrade_leaves_only_the_current_routines(
    db_url: str, db: Database, worker_url: str, cli_main: Callable[..., int], tmp_path: Path
) -> None:
    """PostgreSQL names a function by its parameters, so routines an older version made with
    other ones stay beside the new ones (a worker could still call an old pk_finish that names no
    blobs): grant-worker again leaves one function per routine, the current one, and the account
    still works through them."""
    from pipeline_kit.db import routines

    role = make_url(worker_url).username
    with db.engine.begin() as conn:
        for name, params, returns, body in _OLD_OVERLOADS:
            conn.exec_driver_sql(
                f"CREATE FUNCTION {name}({params}) RETURNS {returns} LANGUAGE sql SECURITY DEFINER AS $$ {body} $$"
            )
            conn.exec_driver_sql(f"GRANT EXECUTE ON FUNCTION {name}({params}) TO {role}")
    assert cli_main(["--db", db_url, "grant-worker", role, "--password-env", "PK_TEST_PW"]) == 0
    with db.engine.connect() as conn:
        found = (
            conn.exec_driver_sql(
                "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = 'public' AND p.proname LIKE 'pk\\_%%'"
            )
            .scalars()
            .all()
        )
        current = (
            conn.execute(
                sa.text("SELECT s FROM unnest(CAST(:s AS text[])) AS s WHERE to_regprocedure(s) IS NULL"),
                {"s": [routines.signature(r) for r in routines.routines("postgresql")]},
            )
            .scalars()
            .all()
        )
    assert sorted(found) == sorted({"pk_block", *(r.name for r in routines.routines("postgresql"))}), found
    assert current == []  # each one left is the current one
    worker = create(worker_url)
    try:
        with db.engine.begin() as conn:
            engine.enqueue(conn, [TaskSpec(task_id=f"up-{i}", kind="noop", lane="default") for i in range(3)])
        summary = run_worker(
            worker,
            WorkerConfig(
                worker_id="pc-up",
                lanes=("default",),
                backend="noop",
                until_empty=True,
                progress=False,
                outputs=tmp_path / "out",
                spool=tmp_path / "spool",
            ),
        )
    finally:
        worker.dispose()
    assert summary.counts["completed"] == 3, summary.line()
