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


def now_plus(seconds: float | ColumnElement[Any]) -> db_now_plus:
    """`db_now_plus` of a Python number (bound) or a SQL expression."""
    if not isinstance(seconds, ColumnElement):
        seconds = bindparam(None, float(seconds), type_=Float)
    return db_now_plus(seconds)


# --- SQLite: text timestamps 'YYYY-MM-DD HH:MM:SS.SSS', compared as strings -----------------
@compiles(db_now, "sqlite")
def _now_sqlite(element: db_now, compiler: Any, **kw: Any) -> str:
    return "strftime('%Y-%m-%d %H:%M:%f', 'now')"


@compiles(db_now_plus, "sqlite")
def _plus_sqlite(element: db_now_plus, compiler: Any, **kw: Any) -> str:
    (arg,) = element.clauses
    secs = compiler.process(arg, **kw)
    return f"strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', {secs}))"


# --- PostgreSQL: timestamp without time zone in UTC ------------------------------------------
@compiles(db_now, "postgresql")
def _now_pg(element: db_now, compiler: Any, **kw: Any) -> str:
    return "(clock_timestamp() AT TIME ZONE 'UTC')"


@compiles(db_now_plus, "postgresql")
def _plus_pg(element: db_now_plus, compiler: Any, **kw: Any) -> str:
    (arg,) = element.clauses
    secs = compiler.process(arg, **kw)
    return f"((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => {secs}))"


# --- MariaDB / MySQL: DATETIME(6) ------------------------------------------------------------
@compiles(db_now, "mysql")
@compiles(db_now, "mariadb")
def _now_my(element: db_now, compiler: Any, **kw: Any) -> str:
    return "UTC_TIMESTAMP(6)"


@compiles(db_now_plus, "mysql")
@compiles(db_now_plus, "mariadb")
def _plus_my(element: db_now_plus, compiler: Any, **kw: Any) -> str:
    (arg,) = element.clauses
    secs = compiler.process(arg, **kw)
    return f"TIMESTAMPADD(MICROSECOND, CAST(ROUND({secs} * 1000000) AS SIGNED), UTC_TIMESTAMP(6))"
