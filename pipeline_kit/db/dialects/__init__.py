"""What each database does differently, behind the one interface the engine asks (`Dialect`).

Each database has its own module (sqlite.py, postgresql.py, mariadb.py) saying only what differs:
how a transaction begins, its clock, how a list is bound, what it can do in one statement, and
its SQL file (db/sql/), where every statement is written whole. `of(name)` finds one by
SQLAlchemy's dialect name ("mysql" for MariaDB).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline_kit.db.statements import Statement, load


@dataclass(frozen=True)
class Dialect:
    """One database, as the engine needs to know it."""

    name: str  # SQLAlchemy's dialect name
    sql_file: str  # in db/sql/
    begin: str  # what starts a transaction
    always_begins: bool  # even a lone statement runs inside `begin` (else it is atomic on its own)
    now: str  # the database clock as SQL: UTC, comparable with the stored Time columns
    now_plus: str  # the clock plus {secs} seconds (SQL text: a bind or an expression)
    in_list: tuple[str, str] | None  # `IN :n` and `NOT IN :n` as the driver takes a list; None: one mark per item
    list_type: type  # what the driver takes a bound list as
    returning: bool  # UPDATE ... RETURNING
    claim_one_statement: bool  # a lane group's claim and its attempt rows are one statement
    finish_one_statement: bool  # a group's completion is one statement
    row_locks: bool  # FOR UPDATE [SKIP LOCKED] matters (SQLite's IMMEDIATE transaction is exclusive already)
    notifies: bool  # triggers can wake idle workers at once (LISTEN/NOTIFY; db/wake.py)
    batches: bool  # statements whose result nobody waits for can ride with the next one (one round trip)
    insert_ignore: str  # an INSERT's head that skips rows whose key another writer stored first ...
    insert_ignore_tail: str  # ... and its tail

    @property
    def statements(self) -> Mapping[str, Statement]:
        """Every named statement of this database's SQL file."""
        return load(self.sql_file)

    def sql(self, name: str, *, limit: int | None = None, **options: bool) -> str:
        """One named statement's text (see Statement.sql)."""
        return _text(self.sql_file, name, limit, tuple(options.items()))

    def now_plus_sql(self, seconds: str) -> str:
        return self.now_plus.format(secs=seconds)

    def insert_ignoring_duplicates(self, table: str, columns: Sequence[str], computed: Mapping[str, str] = {}) -> str:
        """INSERT (db/driver.py's SQL, a :name per column) that skips rows whose key a concurrent
        writer stored first; `computed`: columns whose value is SQL (the database clock)."""
        names = ", ".join([*columns, *computed])
        values = ", ".join([*(f":{c}" for c in columns), *computed.values()])
        return f"{self.insert_ignore} {table} ({names}) VALUES ({values}){self.insert_ignore_tail}"


@functools.cache
def _text(sql_file: str, name: str, limit: int | None, options: tuple[tuple[str, bool], ...]) -> str:
    """A statement's text, kept by plain keys: the hot path asks for a few on every claim and
    completion, and hashing the Statement itself (every line of it) cost 1.5 us a time."""
    return load(sql_file)[name].sql(limit=limit, **dict(options))


def of(name: str) -> Dialect:
    """The database SQLAlchemy names `name` (MariaDB answers to both of its names)."""
    return _BY_NAME[name]


# The modules below define their Dialect with the class above.
from pipeline_kit.db.dialects import mariadb, postgresql, sqlite  # noqa: E402

_BY_NAME = {d.name: d for d in (sqlite.DIALECT, postgresql.DIALECT, mariadb.DIALECT)} | {"mariadb": mariadb.DIALECT}
