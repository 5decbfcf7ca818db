"""What each database can do, asked by the engine instead of deciding per dialect itself.

The statements themselves are in claims.py and finishes.py; this says how the engine may run
them: whether a claim (with its attempt rows) or a group's completion is one statement (then the
transaction needs no BEGIN and COMMIT on a server), whether row locks mean anything, and how an
INSERT skips rows whose key another writer stored first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """One database's abilities, as the engine needs them."""

    name: str
    claim_one_statement: bool  # claims.statements has `claim_and_open`: one lane group's claim is one statement
    finish_one_statement: bool  # finishes.statements has `finish`: one group's completion is one statement
    row_locks: bool  # FOR UPDATE [SKIP LOCKED] matters (SQLite's IMMEDIATE transaction is exclusive already)

    def insert_ignoring_duplicates(self, table: str, columns: Sequence[str], computed: Mapping[str, str] = {}) -> str:
        """INSERT (db/driver.py's SQL, a :name per column) that skips rows whose key a concurrent
        writer stored first; `computed`: columns whose value is SQL (the database clock)."""
        names = ", ".join([*columns, *computed])
        values = ", ".join([*(f":{c}" for c in columns), *computed.values()])
        if self.name == "mysql":
            return f"INSERT IGNORE INTO {table} ({names}) VALUES ({values})"
        return f"INSERT INTO {table} ({names}) VALUES ({values}) ON CONFLICT DO NOTHING"


DIALECTS = {
    "sqlite": Dialect("sqlite", claim_one_statement=False, finish_one_statement=False, row_locks=False),
    "postgresql": Dialect("postgresql", claim_one_statement=True, finish_one_statement=True, row_locks=True),
    "mysql": Dialect("mysql", claim_one_statement=False, finish_one_statement=False, row_locks=True),
}
