"""The raw-SQL ceiling: the engine's own claim statement and one guarded completion, bare.

Same table, same rows, same driver (the DBAPI connection the engine's factory configures) and
the same process count as the engine run, but nothing else: no lane lookup, no attempt rows, no
events, no fencing read, no SQLAlchemy between the loop and the driver. See bench/README.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from pipeline_kit.bench.errors import BenchFailed
from pipeline_kit.bench.workload import LANE
from pipeline_kit.db import claims, create
from pipeline_kit.db.sqltime import sql_now

LEASE_S = 300.0


def complete_statement(dialect: str) -> Any:
    """One guarded UPDATE for a whole claimed batch: only rows still held by this token change."""
    return sa.text(
        f"UPDATE tasks SET status = 'completed', finished_at = {sql_now(dialect)}, lease_expires_at = NULL, "
        "stage = 'done', progress = 1.0 WHERE task_id IN :ids AND lease_token = :token AND status = 'processing'"
    ).bindparams(sa.bindparam("ids", expanding=True))


class DriverSQL:
    """The driver's SQL text and parameters for a SQLAlchemy statement, compiled once per shape."""

    def __init__(self, dialect: sa.Dialect) -> None:
        self._dialect = dialect
        self._cache: dict[tuple[int, tuple[int, ...]], tuple[str, Sequence[str] | None]] = {}

    def __call__(self, stmt: Any, values: dict[str, Any]) -> tuple[str, Any]:
        flat = _flatten(values)
        key = (id(stmt), tuple(len(v) for v in values.values() if isinstance(v, list)))
        if key not in self._cache:
            state = stmt.compile(dialect=self._dialect).construct_expanded_state(values)
            if set(state.parameters) != set(flat):
                raise BenchFailed(f"unexpected bind names {sorted(state.parameters)} for the raw statement")
            self._cache[key] = (state.statement, state.positiontup)
        sql, order = self._cache[key]
        return sql, flat if order is None else tuple(flat[name] for name in order)


def _flatten(values: dict[str, Any]) -> dict[str, Any]:
    """Expanding lists become name_1, name_2, ... as SQLAlchemy names them."""
    flat: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, list):
            flat.update({f"{name}_{i}": item for i, item in enumerate(value, 1)})
        else:
            flat[name] = value
    return flat


class RawWorker:
    """Claim `batch` rows with the engine's claim SQL, complete them with one UPDATE, repeat."""

    def __init__(self, url: str, batch: int, index: int = 0) -> None:
        self.url, self.batch, self.worker_id = url, batch, f"raw-{index}"
        self._proxy: Any = None

    def prepare(self) -> None:
        self._db = create(self.url, pool_size=1)
        self._proxy = self._db.engine.raw_connection()  # on_connect set-up applied (WAL, timeouts, ...)
        self._conn = self._proxy.driver_connection
        self._sql = DriverSQL(self._db.engine.dialect)
        self._complete = complete_statement(self._db.dialect)
        self._claim_sql = claims.statements(self._db.dialect, False)  # the engine's own, no budget filter

    def run(self) -> int:
        total = 0
        while True:
            token = uuid.uuid4().hex
            ids = self.claim(token)
            if not ids:
                return total
            self.complete(ids, token)
            total += len(ids)

    def claim(self, token: str) -> list[str]:
        """One claim transaction: returns the claimed task_ids (committed)."""
        values = {"worker_id": self.worker_id, "token": token, "lease_s": LEASE_S, "lanes": [LANE],
                  "limit": self.batch}
        cur = self._begin()
        sql = self._claim_sql
        if "claim" in sql:  # SQLite, PostgreSQL: one UPDATE ... RETURNING
            cur.execute(*self._sql(sql["claim"], values))
            ids = [row[1] for row in cur.fetchall()]
        else:  # MariaDB: lock ids, update them, read them back by token
            cur.execute(*self._sql(sql["lock"], {"lanes": [LANE], "limit": self.batch}))
            locked = [row[0] for row in cur.fetchall()]
            ids = []
            if locked:
                update = {k: v for k, v in values.items() if k not in ("lanes", "limit")}
                cur.execute(*self._sql(sql["update"], {**update, "ids": locked}))
                cur.execute(*self._sql(sql["read_back"], {"ids": locked, "token": token}))
                ids = [row[1] for row in cur.fetchall()]
        self._commit(cur)
        return ids

    def complete(self, ids: list[str], token: str) -> None:
        cur = self._begin()
        cur.execute(*self._sql(self._complete, {"ids": ids, "token": token}))
        changed = cur.rowcount
        self._commit(cur)
        if changed != len(ids):
            raise BenchFailed(f"raw completion changed {changed} of {len(ids)} rows it held")

    def close(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
            self._db.dispose()

    def _begin(self) -> Any:
        cur = self._conn.cursor()
        if self._db.dialect == "sqlite":  # as the engine's begin event: take the write lock up front
            cur.execute("BEGIN IMMEDIATE")
        return cur

    def _commit(self, cur: Any) -> None:
        if self._db.dialect == "sqlite":
            cur.execute("COMMIT")
        else:
            self._conn.commit()
        cur.close()
