"""The driver's own connection, for the engine's hot path (claim, complete) and the bench's raw loop.

SQLAlchemy builds, compiles and wraps every statement; for a claim that the database answers in
a tenth of a millisecond that costs more than the claim. Here SQL is written once, with :name
parameters and `IN :name` lists, and rendered once per dialect (see `render`). Each thread keeps
one connection per engine, checked out of the engine's pool once (so its connect set-up
applies: WAL and busy timeout, session timeouts, isolation) and kept in autocommit: a
one-statement transaction is one round trip; longer ones say BEGIN themselves. Errors leave as
SQLAlchemy's DBAPIError family, a lost connection marked invalidated, exactly as if SQLAlchemy
had run the statement, so callers (and the worker's reconnect loop) see one kind of error.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from pipeline_kit.db import dialects
from pipeline_kit.db.connect import Database

_LIST_MARK = re.compile(r"\b(NOT )?IN :(\w+)")
_NAME = re.compile(r"(?<![:\w]):(\w+)")
IDLE_PING_S = 30.0  # a held connection idle longer is checked before use, as the pool does on checkout


@functools.cache
def render(dialect: str, sql: str, lengths: tuple[tuple[str, int], ...] = ()) -> str:
    """`sql` as the dialect's driver takes it: lists expanded (SQLite: by `lengths`, the item
    count of each list parameter), :name as %(name)s for the pyformat drivers."""
    in_list = dialects.of(dialect).in_list
    if in_list is None:
        counts = dict(lengths)

        def expand(m: re.Match[str]) -> str:
            names = ", ".join(f":{m.group(2)}_{i}" for i in range(counts[m.group(2)]))
            return f"{m.group(1) or ''}IN ({names})"

        return _LIST_MARK.sub(expand, sql)
    sql = _LIST_MARK.sub(lambda m: in_list[bool(m.group(1))].format(n=m.group(2)), sql)
    return _NAME.sub(r"%(\1)s", sql.replace("%", "%%"))


def prepare(dialect: str, sql: str, params: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """The driver's SQL text and parameters for one execution (it runs for every statement of
    the hot path, so it avoids work when no parameter is a list)."""
    lists = [k for k, v in params.items() if v.__class__ in _SEQUENCES]
    if not lists:
        return render(dialect, sql), params
    flat = dict(params)
    found = dialects.of(dialect)
    if found.in_list is None:
        lengths = []
        for name in lists:
            items = flat.pop(name)
            lengths.append((name, len(items)))
            flat.update(zip(_item_names(name, len(items)), items))
        return render(dialect, sql, tuple(lengths)), flat
    flat.update((k, found.list_type(flat[k])) for k in lists)
    return render(dialect, sql), flat


_SEQUENCES = (list, tuple)


@functools.cache
def _item_names(name: str, count: int) -> tuple[str, ...]:
    return tuple(f"{name}_{i}" for i in range(count))


def json_value(value: Any) -> Any:
    """A JSON column as read back: text on SQLite and MariaDB, already decoded on PostgreSQL."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def time_value(value: Any) -> datetime | None:
    """A timestamp as read back: text on SQLite ('YYYY-MM-DD HH:MM:SS.fff'), datetime elsewhere."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


_NONE: Mapping[str, Any] = {}


class Tx:
    """A cursor inside one transaction, taking the SQL of this module's dialect-neutral form.

    `single`: the transaction was opened for one statement only (see `transaction`); a second
    one raises, since on PostgreSQL and MariaDB it would run outside the first one's transaction.
    On MariaDB, statements whose result nobody waits for (BEGIN, `run(defer=True)`) are held and
    sent in one round trip with the next statement or the COMMIT (the connection allows several
    statements per request); elsewhere every statement runs at once.
    """

    def __init__(self, dialect: str, cursor: Any, *, single: bool = False) -> None:
        self.dialect, self._cur, self._left = dialect, cursor, 1 if single else -1
        self._batches = dialects.of(dialect).batches
        self._pending: list[str] = []

    def rows(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a statement that returns rows; each row as a dict by column name."""
        self._execute(sql, params)
        names = [d[0] for d in self._cur.description]
        return [dict(zip(names, row)) for row in self._cur.fetchall()]

    def values(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        """The first column of every returned row."""
        self._execute(sql, params)
        return [row[0] for row in self._cur.fetchall()]

    def run(self, sql: str, params: Mapping[str, Any] | None = None, *, defer: bool = False) -> int | None:
        """Run a statement that returns nothing; the number of rows it changed. `defer`: the
        caller needs no count, so MariaDB may send it with the next statement (None returned)."""
        if defer and self._batches:
            self._count()
            self._pending.append(self._cur.mogrify(*prepare(self.dialect, sql, params or _NONE)))
            return None
        self._execute(sql, params)
        return int(self._cur.rowcount)

    def many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run one statement for each of `rows` with the driver's executemany (no list parameters):
        a bulk insert without SQLAlchemy's processing of every row."""
        self._count()
        self.flush()
        self._cur.executemany(render(self.dialect, sql), rows)

    def flush(self, last: str | None = None) -> None:
        """Send what is held (and `last`, plain SQL such as COMMIT) now; read every result."""
        batch = [*self._pending, last] if last else self._pending
        self._pending = []
        if batch:
            self._cur.execute(";".join(batch) if self._batches else batch[0])
            while self._batches and self._cur.nextset():
                pass

    def _hold(self, sql: str) -> None:
        """Plain SQL (BEGIN) that MariaDB may send with the next statement; elsewhere run now."""
        if self._batches:
            self._pending.append(sql)
        else:
            self._cur.execute(sql)

    def _count(self) -> None:
        if self._left == 0:
            raise RuntimeError("a second statement in a transaction opened for a single one")
        self._left -= 1

    def _execute(self, sql: str, params: Mapping[str, Any] | None) -> None:
        self._count()
        text, args = prepare(self.dialect, sql, params or _NONE)
        if not self._pending:
            self._cur.execute(text, args)
            return
        held, self._pending = self._pending, []
        self._cur.execute(";".join([*held, self._cur.mogrify(text, args)]))
        for _ in held:  # the held statements' results come first
            self._cur.nextset()


@contextmanager
def transaction(db: Database, *, single: bool = False) -> Iterator[Tx]:
    """One transaction on this thread's connection, committed when the block ends.

    `single`: the block runs exactly one statement, which the server makes atomic on its own, so
    PostgreSQL and MariaDB skip BEGIN and COMMIT (two round trips); SQLite still begins IMMEDIATE.
    """
    held = _connection(db)
    dialect = dialects.of(db.dialect)
    explicit = not single or dialect.always_begins
    cur = held.dbapi.cursor()
    tx = Tx(db.dialect, cur, single=single)
    try:
        if explicit:
            tx._hold(dialect.begin)
        yield tx
        tx.flush("COMMIT" if explicit else None)
    except BaseException as exc:
        lost = _abort(db, held, cur, explicit, exc)
        if isinstance(exc, held.error):
            raise sa.exc.DBAPIError.instance(
                None, None, exc, held.error, connection_invalidated=lost, dialect=db.engine.dialect
            ) from exc
        raise
    finally:
        with suppress(held.error):  # a lost connection's cursor is already gone
            cur.close()


@contextmanager
def within(conn: sa.Connection, dialect: str) -> Iterator[Tx]:
    """This module's SQL inside a transaction SQLAlchemy already holds (for the rarer paths that
    mix both); everything held back is sent before the block ends. A driver error leaves as
    SQLAlchemy's, the connection invalidated if it was lost, as if SQLAlchemy had run it."""
    raw = conn.connection.driver_connection
    error = conn.dialect.loaded_dbapi.Error
    cursor = raw.cursor()
    try:
        tx = Tx(dialect, cursor)
        yield tx
        tx.flush()
    except error as exc:
        lost = conn.dialect.is_disconnect(exc, raw, cursor)
        if lost:
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(
            None, None, exc, error, connection_invalidated=lost, dialect=conn.dialect
        ) from exc
    finally:
        with suppress(error):  # a lost connection's cursor is already gone
            cursor.close()


def run_named(conn: sa.Connection, name: str, **params: Any) -> int:
    """Run one named statement of the connection's database (db/sql/) in the transaction
    SQLAlchemy holds: the owner's path of a write a worker account makes through its routine.
    The rows it changed."""
    dialect = conn.dialect.name
    with within(conn, dialect) as tx:
        return int(tx.run(dialects.of(dialect).sql(name), params) or 0)


def rows_named(conn: sa.Connection, name: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of one named statement (see `run_named`), as dicts by column name."""
    dialect = conn.dialect.name
    with within(conn, dialect) as tx:
        return tx.rows(dialects.of(dialect).sql(name, limit=params.pop("limit", None)), params)


@dataclass
class _Held:
    """A pooled connection checked out for good by one thread (returned only when dropped)."""

    pid: int
    proxy: Any  # the pool's wrapper; closing it hands the connection back
    dbapi: Any
    error: type[Exception]  # the driver's base Error class
    used_at: float = 0.0  # monotonic time of the last checkout by its thread

    def alive(self) -> bool:
        """Answer a trivial query: what the pool's pre-ping does, for a connection kept out of it."""
        try:
            cur = self.dbapi.cursor()
            cur.execute("SELECT 1")
            cur.fetchall()
            cur.close()
            return True
        except self.error:
            return False


_REGISTRY: weakref.WeakKeyDictionary[sa.Engine, dict[int, _Held]] = weakref.WeakKeyDictionary()
_INHERITED: list[_Held] = []  # a forked parent's connections: never used, never closed (not ours)
_LOCK = threading.Lock()


def _connection(db: Database) -> _Held:
    per_thread = _REGISTRY.get(db.engine)
    held = per_thread.get(threading.get_ident()) if per_thread else None
    now = time.monotonic()
    if held is not None and held.pid == os.getpid():
        if now - held.used_at < IDLE_PING_S or held.alive():
            held.used_at = now
            return held
        held.proxy.invalidate()  # the server dropped it while idle (MariaDB's wait_timeout, a restart)
    with _LOCK:
        if held is not None and held.pid != os.getpid():
            _INHERITED.append(held)
        if db.engine not in _REGISTRY:
            _REGISTRY[db.engine] = {}
            event.listen(db.engine, "engine_disposed", _drop_all)
        proxy = db.engine.raw_connection()  # pre-pings once, applies the connect set-up
        dbapi = proxy.driver_connection
        if db.dialect == "postgresql":
            dbapi.rollback()
            dbapi.autocommit = True
        elif db.dialect == "mysql":
            dbapi.autocommit(True)
        held = _Held(os.getpid(), proxy, dbapi, db.engine.dialect.loaded_dbapi.Error, now)
        _REGISTRY[db.engine][threading.get_ident()] = held
        return held


def _abort(db: Database, held: _Held, cur: Any, explicit: bool, exc: BaseException) -> bool:
    """Roll back after an error; drop the connection if it is gone. True if it was lost."""
    lost = isinstance(exc, held.error) and db.engine.dialect.is_disconnect(exc, held.dbapi, cur)
    if not lost and explicit:
        try:
            cur.execute("ROLLBACK")
        except held.error:
            lost = True
    if lost:
        with _LOCK:
            _REGISTRY.get(db.engine, {}).pop(threading.get_ident(), None)
        held.proxy.invalidate()
    return lost


def _drop_all(engine: sa.Engine) -> None:
    """On engine.dispose(): close every connection held for it (dispose leaves checked-out ones open)."""
    with _LOCK:
        held = list(_REGISTRY.get(engine, {}).values())
        _REGISTRY.get(engine, {}).clear()
    for h in held:
        if h.pid == os.getpid():
            h.proxy.invalidate()
        else:
            _INHERITED.append(h)
