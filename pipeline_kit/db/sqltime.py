"""The database clock, as SQL expressions: leases and backoff never read a worker's clock.

`db_now()` is the current UTC time and `db_now_plus(seconds)` that time plus an offset, for
SQLAlchemy statements; each database spells them in its module (db/dialects/). All three yield
naive UTC timestamps that compare correctly with the stored `Time` columns.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float, bindparam
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

from pipeline_kit.db import dialects
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
    """The current-time SQL of a dialect (db/dialects/), for hand-written statements."""
    return dialects.of(dialect).now


def sql_now_plus(dialect: str, seconds: str) -> str:
    """The now-plus-seconds SQL of a dialect; `seconds` is SQL text (a bind like :lease_s)."""
    return dialects.of(dialect).now_plus_sql(seconds)


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
