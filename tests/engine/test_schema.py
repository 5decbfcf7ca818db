"""`init` upgrades an older schema in place, keeps its rows, and refuses a newer one."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.migrate import init, require_schema, schema_version
from pipeline_kit.db.schema import SCHEMA_VERSION, llm_answers, meta, workers
from pipeline_kit.engine.outages import fleet_down, vote_down
from pipeline_kit.errors import NotInitialised, SchemaTooNew


def _set_version(db: Database, version: int) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=str(version)))


def _attempt_indexes(db: Database) -> set[str]:
    return {i["name"] for i in sa.inspect(db.engine).get_indexes("attempts")}


def test_version_1_upgrades_to_current_and_keeps_its_rows(db: Database) -> None:
    """A v1 database (with v1's attempt indexes) is upgraded by init: indexes dropped, rows kept."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [engine.TaskSpec(task_id="kept", kind="noop", lane="default")])
    (lease,) = engine.claim(db, "w", ["default"])
    with db.engine.begin() as conn:
        conn.execute(sa.text("CREATE INDEX ix_attempts_token ON attempts (task_id, lease_token)"))
        conn.execute(sa.text("CREATE INDEX ix_attempts_worker ON attempts (worker_id)"))
    _set_version(db, 1)
    with pytest.raises(NotInitialised, match="version 1.*pipeline-kit init"):
        require_schema(db)

    assert init(db) == (1, SCHEMA_VERSION)
    assert schema_version(db) == SCHEMA_VERSION
    assert not _attempt_indexes(db) & {"ix_attempts_token", "ix_attempts_worker"}
    assert engine.complete(db, engine.Completion(task_id="kept", token=lease.token)) is engine.Ack.ACCEPTED
    assert init(db) == (SCHEMA_VERSION, SCHEMA_VERSION)  # idempotent


def test_a_newer_schema_is_refused(db: Database) -> None:
    _set_version(db, SCHEMA_VERSION + 1)
    try:
        with pytest.raises(SchemaTooNew):
            init(db)
        with pytest.raises(SchemaTooNew):
            require_schema(db)
    finally:
        _set_version(db, SCHEMA_VERSION)  # the server databases are reused by later tests


def test_version_2_gains_the_workers_lease(db: Database) -> None:
    """A v2 database (workers without lease_s) is upgraded by init; its worker rows are kept and
    a worker registered afterwards records the lease it runs with."""
    engine.register_worker(db, "old", lanes=["default"])
    with db.engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE workers DROP COLUMN lease_s"))
    _set_version(db, 2)
    assert init(db) == (2, SCHEMA_VERSION)
    assert "lease_s" in {c["name"] for c in sa.inspect(db.engine).get_columns("workers")}
    engine.register_worker(db, "new", lanes=["default"], lease_s=45)
    with db.engine.connect() as conn:
        rows = dict(conn.execute(sa.select(workers.c.worker_id, workers.c.lease_s)).all())
    assert rows == {"old": None, "new": 45}


def test_version_6_gains_the_answer_cache(db: Database) -> None:
    """A v6 database (no llm_answers table) is upgraded by init: the chat answer cache appears
    empty, and the rows already there are kept."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [engine.TaskSpec(task_id="kept6", kind="noop", lane="default")])
        conn.execute(sa.text("DROP TABLE llm_answers"))
    _set_version(db, 6)
    assert init(db) == (6, SCHEMA_VERSION)
    assert sa.inspect(db.engine).has_table("llm_answers")
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(llm_answers)).scalar() == 0
        assert conn.execute(sa.text("SELECT task_id FROM tasks")).scalars().all() == ["kept6"]


def test_version_8_gains_provider_outages(db: Database) -> None:
    """A v8 database (workers without paused_reason/paused_since, no provider_outages) is upgraded
    by init: its worker rows are kept, a worker can then be shown paused and vote a provider down."""
    engine.register_worker(db, "old", lanes=["default"])
    with db.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE provider_outages"))
        conn.execute(sa.text("ALTER TABLE workers DROP COLUMN paused_reason"))
        conn.execute(sa.text("ALTER TABLE workers DROP COLUMN paused_since"))
    _set_version(db, 8)
    assert init(db) == (8, SCHEMA_VERSION)
    engine.touch_worker(db, "old", "working", paused="comfyui at 10.0.0.5:8188 unreachable")
    vote_down(db, "comfyui at 10.0.0.5:8188", "old", "connection refused", hold_s=60)
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(workers).where(workers.c.worker_id == "old")).mappings().one()
    assert (row["state"], row["paused_reason"]) == ("paused", "comfyui at 10.0.0.5:8188 unreachable")
    assert row["paused_since"] is not None and list(fleet_down(db, 1)) == ["comfyui at 10.0.0.5:8188"]


def _output_index(db: Database) -> str:
    """How the output index is defined, as the database reports it ('' on MariaDB)."""
    queries = {
        "sqlite": "SELECT sql FROM sqlite_master WHERE name = 'ix_tasks_output'",
        "postgresql": "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_tasks_output'",
    }
    if db.dialect not in queries:
        return ""
    with db.engine.connect() as conn:
        return conn.execute(sa.text(queries[db.dialect])).scalar_one()


def test_version_13_indexes_only_tasks_with_an_output(db: Database) -> None:
    """A v13 database (every task in the output index) is upgraded by init: only tasks with an
    output stay indexed where the database has partial indexes, and who owns an output is still
    found by the index."""
    with db.engine.begin() as conn:
        on_table = " ON tasks" if db.dialect == "mysql" else ""
        conn.execute(sa.text(f"DROP INDEX ix_tasks_output{on_table}"))
        length = "(191)" if db.dialect == "mysql" else ""
        conn.execute(sa.text(f"CREATE INDEX ix_tasks_output ON tasks (output_path{length})"))
        engine.enqueue(conn, [engine.TaskSpec(task_id=t, kind="noop", lane="default") for t in ("made", "other")])
    _set_version(db, 13)

    assert init(db) == (13, SCHEMA_VERSION)
    partial = db.dialect in ("sqlite", "postgresql")
    assert ("WHERE" in _output_index(db).upper()) is partial
    leases = engine.claim(db, "w", ["default"], limit=2)
    made = next(x for x in leases if x.task_id == "made")
    done = engine.complete(db, engine.Completion(task_id="made", token=made.token, output_path="outputs/a.png"))
    assert done is engine.Ack.ACCEPTED
    assert engine.output_owner(db, "outputs/a.png", "other") == "made"
    assert engine.output_owner(db, "outputs/b.png", "other") is None
    if db.dialect == "sqlite":  # the partial index still serves `output_path = ?`
        with db.engine.connect() as conn:
            plan = conn.execute(sa.text("EXPLAIN QUERY PLAN SELECT task_id FROM tasks WHERE output_path = 'x'")).all()
        assert "ix_tasks_output" in " ".join(str(r[-1]) for r in plan)
