"""Create or upgrade the schema, idempotently, and record its version in the database.

A database whose recorded version is newer than this code is refused: an older worker must not
write rows a newer schema does not expect.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from pipeline_kit.db import wake
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import (OUTPUT_INDEX, SCHEMA_VERSION, characters, llm_answers, meta,
                                    metadata, shots, workers)
from pipeline_kit.errors import BadInput, NotInitialised, SchemaTooNew



def _drop_attempt_indexes(conn: sa.Connection) -> None:
    """v2: attempts lose (task_id, lease_token) and (worker_id): uq_attempts_no already leads with
    task_id, nothing filters by worker, and every index is written again by every claim."""
    present = {i["name"] for i in sa.inspect(conn).get_indexes("attempts")}
    on_table = " ON attempts" if conn.dialect.name in ("mysql", "mariadb") else ""
    for name in ("ix_attempts_token", "ix_attempts_worker"):
        if name in present:
            conn.execute(sa.text(f"DROP INDEX {name}{on_table}"))


def _add_worker_lease(conn: sa.Connection) -> None:
    """v4: workers.lease_s, the lease a worker runs with, so a heartbeat older than it can be
    shown as `not responding` (a database created by this version already has it)."""
    if "lease_s" not in {c["name"] for c in sa.inspect(conn).get_columns("workers")}:
        kind = workers.c.lease_s.type.compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE workers ADD COLUMN lease_s {kind}"))


def _add_character_bible(conn: sa.Connection) -> None:
    """v5: the `characters` table (created by create_all) and shots.inferred (pronoun-inferred names)."""
    characters.create(conn, checkfirst=True)
    if "inferred" not in {c["name"] for c in sa.inspect(conn).get_columns("shots")}:
        column = shots.c.inferred.type.compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE shots ADD COLUMN inferred {column}"))


def _index_outputs(conn: sa.Connection) -> None:
    """v6: tasks.output_path indexed, so publishing can ask cheaply who owns a file."""
    if OUTPUT_INDEX.name not in {i["name"] for i in sa.inspect(conn).get_indexes("tasks")}:
        OUTPUT_INDEX.create(conn)


def _add_answer_cache(conn: sa.Connection) -> None:
    """v7: the `llm_answers` table, chat answers kept by a hash of their input (director tasks)."""
    llm_answers.create(conn, checkfirst=True)


# version -> step that brings a database at version-1 up to it (run inside one transaction).
# v3: PostgreSQL's wake-up triggers (db/wake.py); a new database gets them from `init` directly.
# v4: workers.lease_s (liveness). v5: the character bible. v6: tasks.output_path indexed.
# v7: the chat answer cache.
MIGRATIONS: dict[int, Callable[[sa.Connection], None]] = {2: _drop_attempt_indexes, 3: wake.install,
                                                          4: _add_worker_lease, 5: _add_character_bible,
                                                          6: _index_outputs, 7: _add_answer_cache}


def schema_version(db: Database) -> int | None:
    """The version recorded in the database, or None when it has no pipeline_kit schema."""
    if not sa.inspect(db.engine).has_table(meta.name):
        return None
    with db.engine.connect() as conn:
        value = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise BadInput(f"the schema version recorded in {db.url} is {value!r}, not a number: "
                       "this database is damaged or was not made by pipeline_kit") from None


def init(db: Database) -> tuple[int | None, int]:
    """Create missing tables and apply pending migrations; returns (version before, after)."""
    before = schema_version(db)
    _refuse_newer(before)
    with db.engine.begin() as conn:
        metadata.create_all(conn, checkfirst=True)
        for version in range((before or SCHEMA_VERSION) + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[version](conn)
        if before is None:
            wake.install(conn)
            conn.execute(sa.insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
        elif before != SCHEMA_VERSION:
            conn.execute(
                sa.update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
            )
    return before, SCHEMA_VERSION


def require_schema(db: Database) -> None:
    """Fail with one clear line unless the database holds this version's schema."""
    version = schema_version(db)
    if version is None:
        raise NotInitialised(f"no pipeline_kit schema in {db.url}: run `pipeline-kit init` first")
    _refuse_newer(version)
    if version < SCHEMA_VERSION:
        raise NotInitialised(
            f"database schema is version {version}, this pipeline_kit needs {SCHEMA_VERSION}: "
            "run `pipeline-kit init` to upgrade"
        )


def _refuse_newer(version: int | None) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"database schema is version {version}, newer than this pipeline_kit "
            f"(version {SCHEMA_VERSION}): upgrade pipeline_kit before using it"
        )
