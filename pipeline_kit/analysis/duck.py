"""DuckDB over pandas DataFrames, with every extension switched off.

DuckDB would download extensions at run time, which fails offline, so the connection never
installs or autoloads one; frames are registered by name and queried in plain SQL.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "threads": 2,
}


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection that never reaches for an extension."""
    return duckdb.connect(":memory:", config=dict(_CONFIG))


def query(sql: str, params: list[Any] | None = None, **frames: pd.DataFrame) -> pd.DataFrame:
    """Run `sql` (with `?` parameters) seeing each keyword DataFrame as a table of that name."""
    con = connect()
    try:
        for name, frame in frames.items():
            con.register(name, frame)
        return con.execute(sql, params or []).df()
    finally:
        con.close()
