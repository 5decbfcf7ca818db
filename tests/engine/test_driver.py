"""The hot path's driver connection (db/driver.py) behaves like a SQLAlchemy connection would.

Invariants: a failed transaction leaves nothing behind and the connection usable; a connection
the server dropped surfaces as an invalidated DBAPIError (what the worker's reconnect loop
retries) and the next call gets a fresh one; dispose() hands every held connection back.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database, create, driver
from pipeline_kit.db.schema import tasks


def _put(db: Database, *ids: str) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [engine.TaskSpec(task_id=t, kind="noop", lane="default") for t in ids])


def _count(db: Database) -> int:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(tasks)).scalar_one()


def test_a_failed_statement_rolls_back_the_whole_transaction(db: Database) -> None:
    _put(db, "a")
    with pytest.raises(sa.exc.DBAPIError):
        with driver.transaction(db) as tx:
            tx.run("UPDATE tasks SET priority = 7 WHERE task_id = :t", {"t": "a"})
            tx.run("UPDATE no_such_table SET x = 1")
    with driver.transaction(db, single=True) as tx:  # same connection, still usable
        assert tx.values("SELECT priority FROM tasks WHERE task_id IN :ids", {"ids": ["a"]}) == [0]


def test_a_single_statement_transaction_refuses_a_second(db: Database) -> None:
    _put(db, "a")
    with pytest.raises(RuntimeError, match="second statement"):
        with driver.transaction(db, single=True) as tx:
            tx.run("UPDATE tasks SET priority = 1 WHERE task_id = :t", {"t": "a"})
            tx.run("UPDATE tasks SET priority = 2 WHERE task_id = :t", {"t": "a"})


_KILL = {
    "postgresql": ("SELECT pg_backend_pid()", "SELECT pg_terminate_backend({})"),
    "mysql": ("SELECT CONNECTION_ID()", "KILL {}"),
}


def test_a_dropped_connection_is_invalidated_and_replaced(db: Database) -> None:
    """The server ends the held connection: the next claim raises an invalidated DBAPIError,
    the one after succeeds on a new connection, and nothing was claimed by the failed one."""
    if db.dialect == "sqlite":
        pytest.skip("an embedded database has no server to drop the connection")
    _put(db, "a", "b")
    with driver.transaction(db, single=True) as tx:
        (pid,) = tx.values(_KILL[db.dialect][0])
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(_KILL[db.dialect][1].format(pid))
    with pytest.raises(sa.exc.DBAPIError) as caught:
        engine.claim(db, "w", ["default"], limit=1)
    assert caught.value.connection_invalidated
    (lease,) = engine.claim(db, "w", ["default"], limit=1)
    assert lease.task_id == "a" and lease.attempt_no == 1
    assert engine.complete(db, engine.Completion(task_id="a", token=lease.token)) is engine.Ack.ACCEPTED


def test_a_named_statement_inside_sqlalchemy_fails_as_sqlalchemy_would(db: Database) -> None:
    """A named statement run in a SQLAlchemy transaction (the owner's path of a lease write) that
    meets a dropped connection raises SQLAlchemy's invalidated DBAPIError, what the worker's
    reconnect loop retries, and the next write on a fresh connection goes through; a refused one
    raises SQLAlchemy's IntegrityError, as SQLAlchemy's own statements do."""
    if db.dialect == "sqlite":
        pytest.skip("an embedded database has no server to drop the connection")
    _put(db, "a")
    (lease,) = engine.claim(db, "w", ["default"], limit=1)
    with pytest.raises(sa.exc.DBAPIError) as caught:
        with db.engine.begin() as conn:
            (pid,) = conn.exec_driver_sql(_KILL[db.dialect][0]).scalars()
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as killer:
                killer.exec_driver_sql(_KILL[db.dialect][1].format(pid))
            driver.run_named(conn, "heartbeat", task_id="a", token=lease.token, stage=None, progress=None, lease_s=5.0)
    assert caught.value.connection_invalidated
    assert engine.heartbeat(db, "a", lease.token, lease_s=5.0) is engine.Ack.ACCEPTED
    with pytest.raises(sa.exc.IntegrityError):
        with db.engine.begin() as conn:
            worker = dict(worker_id="w2", uid=None, host=None, version=None, lanes=None, backend=None, lease_s=5.0)
            driver.run_named(conn, "worker_insert", **worker)
            driver.run_named(conn, "worker_insert", **worker)  # its key taken


def test_a_connection_dropped_while_idle_is_replaced_before_use(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the idle limit the held connection is pinged first: a dead one costs no error."""
    if db.dialect == "sqlite":
        pytest.skip("an embedded database has no server to drop the connection")
    _put(db, "a")
    with driver.transaction(db, single=True) as tx:
        (pid,) = tx.values(_KILL[db.dialect][0])
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(_KILL[db.dialect][1].format(pid))
    monkeypatch.setattr(driver, "IDLE_PING_S", 0.0)
    (lease,) = engine.claim(db, "w", ["default"], limit=1)
    assert lease.task_id == "a"


def test_dispose_hands_back_the_held_connections(db_url: str) -> None:
    db = create(db_url, pool_size=1)
    with driver.transaction(db, single=True) as tx:
        tx.values("SELECT 1")
    held = driver._connection(db)
    db.dispose()
    assert held.proxy.dbapi_connection is None  # closed, not left checked out
    assert _count(db) == 0  # and the engine still works afterwards
    db.dispose()


def test_postgresql_plans_the_hot_statements_once_not_per_claim(db: Database) -> None:
    """psycopg prepares a statement after 5 runs; PostgreSQL must then reuse one generic plan for
    the claim and the completion. A bound LIMIT made it plan every claim afresh (a fifth of the
    server's CPU): the claim's text carries its limit so the generic plan is as cheap as custom."""
    if db.dialect != "postgresql":
        pytest.skip("server-side prepared statements and plan caching are PostgreSQL's")
    _put(db, *(f"t{i:05d}" for i in range(5000)))  # enough rows that an unknown LIMIT looks dear
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE tasks")
    for _ in range(20):
        (lease, _other) = engine.claim(db, "w", ["default"], limit=2)
        engine.complete_many(
            db, [engine.Completion(task_id=x.task_id, token=x.token) for x in (lease, _other)], worker_id="w"
        )
    with driver.transaction(db, single=True) as tx:
        plans = tx.rows("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
    hot = {p["statement"].split()[1]: p for p in plans if p["statement"].startswith("WITH ")}
    assert set(hot) == {"claimed", "done"}, plans
    for name, p in hot.items():
        assert p["custom_plans"] <= 5 and p["generic_plans"] >= 10, (name, p)
