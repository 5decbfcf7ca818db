"""The database clock, as SQL expressions: leases and backoff never read a worker's clock.

`db_now()` is the current UTC time and `db_now_plus(seconds)` that time plus an offset; each
dialect's spelling sits side by side below. All three yield naive UTC timestamps that compare
correctly with the stored `Time` columns.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float, bindparam
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

from pipeline_kit.db.schema import Time


class db_now(FunctionElement[Any]):
    """Current UTC time on the database server."""

    type = Time
    inherit_cache = True


class db_now_plus(FunctionElement[Any]):
    """Current UTC time on the database server plus a number of seconds (may be fractional)."""

    type = Time
    inherit_cache = True


def sql_now(dialect: str) -> str:
    """The current-time SQL of a dialect, for the hand-written claim statements."""
    return _NOW[_family(dialect)]


def sql_now_plus(dialect: str, seconds: str) -> str:
    """The now-plus-seconds SQL of a dialect; `seconds` is SQL text (a bind like :lease_s)."""
    return _PLUS[_family(dialect)].format(secs=seconds)


def _family(dialect: str) -> str:
    return "mysql" if dialect in ("mysql", "mariadb") else dialect


_NOW = {
    # SQLite: text timestamps 'YYYY-MM-DD HH:MM:SS.SSS', compared as strings.
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now')",
    # PostgreSQL: timestamp without time zone, in UTC, the real clock (not transaction start).
    "postgresql": "(clock_timestamp() AT TIME ZONE 'UTC')",
    # MariaDB / MySQL: DATETIME(6).
    "mysql": "UTC_TIMESTAMP(6)",
}
_PLUS = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', {secs}))",
    "postgresql": "((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => {secs}))",
    "mysql": "TIMESTAMPADD(MICROSECOND, CAST(ROUND({secs} * 1000000) AS SIGNED), UTC_TIMESTAMP(6))",
}


def now_plus(seconds: float | ColumnElement[Any]) -> db_now_plus:
    """`db_now_plus` of a Python number (bound) or a SQL expression."""
    if not isinstance(seconds, ColumnElement):
        seconds = bindparam(None, float(seconds), type_=Float)
    return db_now_plus(seconds)


@compiles(db_now)
def _compile_now(element: db_now, compiler: Any, **kw: Any) -> str:
    return sql_now(compiler.dialect.name)


@compiles(db_now_plus)
def _compile_now_plus(element: db_now_plus, compiler: Any, **kw: Any) -> str:
    (arg,) = element.clauses
    return sql_now_plus(compiler.dialect.name, compiler.process(arg, **kw))
