"""Create or upgrade the schema, idempotently, and record its version in the database.

A database whose recorded version is newer than this code is refused: an older worker must not
write rows a newer schema does not expect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath, PurePosixPath

import sqlalchemy as sa

from pipeline_kit.db import dialects, wake
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import (
    OUTPUT_INDEX,
    SCHEMA_VERSION,
    STORE_KEY,
    attempts,
    books,
    characters,
    llm_answers,
    meta,
    metadata,
    places,
    provider_outages,
    shots,
    task_deps,
    tasks,
    workers,
)
from pipeline_kit.errors import BadInput, DatabaseUnavailable, NotInitialised, SchemaTooNew


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


def _add_place_bible(conn: sa.Connection) -> None:
    """v8: the place bible (`places`, created by create_all), the book's style line (books.style)
    and task_deps.optional, a dependency whose failure lets its dependent go ahead without it (the
    director passes) instead of blocking it; every existing dependency stays required."""
    places.create(conn, checkfirst=True)
    if "style" not in {c["name"] for c in sa.inspect(conn).get_columns("books")}:
        conn.execute(sa.text(f"ALTER TABLE books ADD COLUMN style {books.c.style.type.compile(dialect=conn.dialect)}"))
    if "optional" not in {c["name"] for c in sa.inspect(conn).get_columns("task_deps")}:
        kind = task_deps.c.optional.type.compile(dialect=conn.dialect)
        default = "false" if conn.dialect.name == "postgresql" else "0"
        conn.execute(sa.text(f"ALTER TABLE task_deps ADD COLUMN optional {kind} NOT NULL DEFAULT {default}"))


def _add_provider_outages(conn: sa.Connection) -> None:
    """v10: workers.paused_reason and paused_since (a worker paused on a provider or the store
    says why and since when), and the `provider_outages` table, workers' votes that a provider
    is down (a fleet-wide pause once enough agree)."""
    present = {c["name"] for c in sa.inspect(conn).get_columns("workers")}
    for column in (workers.c.paused_reason, workers.c.paused_since):
        if column.name not in present:
            kind = column.type.compile(dialect=conn.dialect)
            conn.execute(sa.text(f"ALTER TABLE workers ADD COLUMN {column.name} {kind}"))
    provider_outages.create(conn, checkfirst=True)


BESIDE_DATABASE = "."  # the store setting of a SQLite database whose store is the folder of its file


def default_store_root(url: sa.engine.URL) -> str | None:
    """The folder store's root a new SQLite database gets: the absolute folder of its file (the
    data/ folder of data/production.db); None for a server database (its store is itself)."""
    if url.get_backend_name() != "sqlite":
        return None
    file = url.database or ""
    if file in ("", ":memory:") or file.startswith("file:"):
        return str(Path("data").resolve())
    return str(Path(file).expanduser().resolve().parent)


def _fix_store_root(conn: sa.Connection) -> None:
    """Keep a SQLite database's store beside its file, so every process, from any folder, reads
    and writes the same files. The setting is BESIDE_DATABASE, not that folder's absolute path,
    so a project folder moved or copied elsewhere keeps its own outputs (an absolute path would
    lose them, or share the original's); a setting naming the folder beside the file, as older
    versions wrote it, is turned into BESIDE_DATABASE. Run by every `init`."""
    root = default_store_root(conn.engine.url)
    if root is None:
        return
    setting = conn.execute(sa.select(meta.c.value).where(meta.c.key == STORE_KEY)).first()
    if setting is None:
        conn.execute(sa.insert(meta).values(key=STORE_KEY, value=BESIDE_DATABASE))
    elif setting.value == root:
        conn.execute(sa.update(meta).where(meta.c.key == STORE_KEY).values(value=BESIDE_DATABASE))


def store_name(output_path: str, roots: tuple[str, ...]) -> str:
    """The store name (outputs/BOOK/..., films/BOOK/...) of an output_path an older version
    recorded: a path under one of `roots`, a worker-relative data/outputs/..., or a name already."""
    path = PurePath(output_path)
    for root in roots:
        if path.is_relative_to(root) and path.relative_to(root).parts[:1] in (("outputs",), ("films",)):
            return path.relative_to(root).as_posix()
    parts = path.parts
    for i in range(len(parts) - 2, -1, -1):  # the data folder's name, then outputs/ or films/
        if parts[i] == "data" and parts[i + 1] in ("outputs", "films"):
            return PurePosixPath(*parts[i + 1 :]).as_posix()
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in ("outputs", "films"):
            return PurePosixPath(*parts[i:]).as_posix()
    return output_path


def _store_names(conn: sa.Connection) -> None:
    """v9: one store root per database. A SQLite database gets its root (beside its file) fixed
    in pk_meta; task rows that recorded a folder path (absolute, or relative to the worker's
    folder) get their store name; attempts.output_blobs names what each attempt published."""
    if "output_blobs" not in {c["name"] for c in sa.inspect(conn).get_columns("attempts")}:
        kind = attempts.c.output_blobs.type.compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE attempts ADD COLUMN output_blobs {kind}"))
    _fix_store_root(conn)
    setting = conn.execute(sa.select(meta.c.value).where(meta.c.key == STORE_KEY)).scalar()
    roots = tuple(r for r in (setting, default_store_root(conn.engine.url)) if r and PurePath(r).is_absolute())
    rows = conn.execute(sa.select(tasks.c.id, tasks.c.output_path).where(tasks.c.output_path.is_not(None))).all()
    for row in rows:
        name = store_name(row.output_path, roots)
        if name != row.output_path:
            conn.execute(sa.update(tasks).where(tasks.c.id == row.id).values(output_path=name))


def _add_voices(conn: sa.Connection) -> None:
    """v11: a voice per character (characters.voice), the book's narrator voice and whether its
    shots without dialogue are narrated (books.narrator, books.narration); NULL keeps the defaults."""
    for table, column in ((characters, characters.c.voice), (books, books.c.narrator), (books, books.c.narration)):
        if column.name not in {c["name"] for c in sa.inspect(conn).get_columns(table.name)}:
            kind = column.type.compile(dialect=conn.dialect)
            conn.execute(sa.text(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}"))


def _add_film_settings(conn: sa.Connection) -> None:
    """v12: a book's film profile (books.film_profile) and the music bed under its films
    (books.music); NULL keeps the defaults (the clips' own picture, no music)."""
    present = {c["name"] for c in sa.inspect(conn).get_columns("books")}
    for column in (books.c.film_profile, books.c.music):
        if column.name not in present:
            conn.execute(
                sa.text(f"ALTER TABLE books ADD COLUMN {column.name} {column.type.compile(dialect=conn.dialect)}")
            )


def _add_worker_account(conn: sa.Connection) -> None:
    """v13: workers.account, the worker account a row belongs to (NULL: the owner's, or older)."""
    if "account" not in {c["name"] for c in sa.inspect(conn).get_columns("workers")}:
        kind = workers.c.account.type.compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE workers ADD COLUMN account {kind}"))


def _lighter_task_writes(conn: sa.Connection) -> None:
    """v14: tasks.output_path indexed only where a task has an output (PostgreSQL and SQLite; a
    partial index MariaDB has not): a claim, and a completion without an output, write no entry."""
    if conn.dialect.name not in ("postgresql", "sqlite"):
        return
    conn.execute(sa.text(f"DROP INDEX IF EXISTS {OUTPUT_INDEX.name}"))
    OUTPUT_INDEX.create(conn)


# version -> step that brings a database at version-1 up to it (run inside one transaction).
# v3: PostgreSQL's wake-up triggers (db/wake.py); a new database gets them from `init` directly.
# v4: workers.lease_s (liveness). v5: the character bible. v6: tasks.output_path indexed.
# v7: the chat answer cache. v8: the place bible, the style line and optional dependencies.
# v9: one store root per database, task rows holding store names, attempts naming their blobs.
# v10: provider outages. v11: voices (a character's voice, the book's narrator and narration switch).
# v12: the book's film profile and music bed. v13: the worker account a workers row belongs to.
# v14: the output index holds only tasks with an output (fewer index writes per claim and completion).
MIGRATIONS: dict[int, Callable[[sa.Connection], None]] = {
    2: _drop_attempt_indexes,
    3: wake.install,
    4: _add_worker_lease,
    5: _add_character_bible,
    6: _index_outputs,
    7: _add_answer_cache,
    8: _add_place_bible,
    9: _store_names,
    10: _add_provider_outages,
    11: _add_voices,
    12: _add_film_settings,
    13: _add_worker_account,
    14: _lighter_task_writes,
}


def schema_version(db: Database) -> int | None:
    """The version recorded in the database, or None when it has no pipeline_kit schema."""
    with db.reading() as conn:
        return _version(conn, db.url)


def _version(conn: sa.Connection, url: str) -> int | None:
    if not sa.inspect(conn).has_table(meta.name):
        return None
    value = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise BadInput(
            f"the schema version recorded in {url} is {value!r}, not a number: "
            "this database is damaged or was not made by pipeline_kit"
        ) from None


INIT_LOCK = "pipeline_kit init"  # the lock every `init` of one database takes in turn
INIT_LOCK_KEY = 0x706B_696E_6974  # PostgreSQL's advisory lock key for it ("pkinit")
INIT_WAIT_S = 300  # how long an init waits for another one to finish (MariaDB's GET_LOCK timeout)


def init(db: Database, *, then: Callable[[sa.Connection], object] | None = None) -> tuple[int | None, int]:
    """Create missing tables and apply pending migrations; returns (version before, after).
    Safe to race: every init of a database takes one lock first, so a second init waits and
    then finds the schema made. `then` runs under the lock, in the same transaction (the
    default lanes)."""
    with db.engine.connect() as conn, _init_lock(conn), conn.begin():
        before = _version(conn, db.url)
        _refuse_newer(before)
        metadata.create_all(conn, checkfirst=True)
        for version in sorted(v for v in MIGRATIONS if (before or SCHEMA_VERSION) < v <= SCHEMA_VERSION):
            MIGRATIONS[version](conn)
        _fix_store_root(conn)
        if before is None:
            wake.install(conn)
            conn.execute(sa.insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
        elif before != SCHEMA_VERSION:
            conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
        if then is not None:
            then(conn)
    return before, SCHEMA_VERSION


@contextmanager
def _init_lock(conn: sa.Connection) -> Iterator[None]:
    """Hold this database's init lock, on the session, from before the init's transaction
    begins until after it committed (MariaDB's DDL commits as it goes, so a transaction alone
    could not keep two inits apart): the file's `init_lock`, PostgreSQL's advisory lock or
    MariaDB's GET_LOCK. SQLite needs none: the init's transaction begins IMMEDIATE, which holds
    the file's write lock."""
    found = dialects.of(conn.dialect.name).statements
    if "init_lock" not in found:
        yield
        return
    keys = {"lock_key": INIT_LOCK_KEY, "name": f"{INIT_LOCK}:{conn.engine.url.database}"[:64], "wait": INIT_WAIT_S}
    got = conn.execute(sa.text(found["init_lock"].sql()), keys).scalar()
    conn.commit()  # the lock is the session's; the init's own transaction begins after it
    if got != 1:
        raise DatabaseUnavailable(f"another `pipeline-kit init` held this database for {INIT_WAIT_S} s: try again")
    try:
        yield
    finally:
        try:
            conn.execute(sa.text(found["init_unlock"].sql()), keys)
            conn.commit()
        except sa.exc.DBAPIError:
            conn.invalidate()  # a closed session holds no lock


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
