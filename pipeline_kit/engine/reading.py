"""A connection for reads: the one place that says how a read-only look at the database begins.

SQLite's connections begin `IMMEDIATE` (db/connect.py), taking the write lock up front, which
is right for claims and writes; a read begun that way would queue a screen or a status query
behind every worker's claim. A reading connection begins `DEFERRED` on SQLite and changes
nothing on the server databases.
"""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit.db.connect import Database


def reading(db: Database) -> sa.Connection:
    """A connection whose transactions take no write lock (SQLite: `BEGIN DEFERRED`); use it as
    a context manager."""
    return db.engine.connect().execution_options(sqlite_begin="DEFERRED")
