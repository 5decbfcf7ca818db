"""The raw-SQL ceiling: the engine's own bare claim statement and one guarded completion.

Same table, same rows, same driver and connection handling as the engine (db/driver.py: one
held DBAPI connection, autocommit for one-statement transactions) and the same process count,
but nothing else: no lane lookup, no attempt rows, no events, no fencing read, no cost roll-up,
no dependents. See bench/README.md.
"""

from __future__ import annotations

import uuid

from pipeline_kit.bench.errors import BenchFailed
from pipeline_kit.bench.workload import LANE
from pipeline_kit.db import Database, claims, create
from pipeline_kit.db.driver import transaction
from pipeline_kit.db.sqltime import sql_now

LEASE_S = 300.0


def complete_statement(dialect: str) -> str:
    """One guarded UPDATE for a whole claimed batch: only rows still held by this token change."""
    return (f"UPDATE tasks SET status = 'completed', finished_at = {sql_now(dialect)}, lease_expires_at = NULL, "
            "stage = 'done', progress = 1.0 WHERE task_id IN :ids AND lease_token = :token AND status = 'processing'")


class RawWorker:
    """Claim `batch` rows with the engine's claim SQL, complete them with one UPDATE, repeat."""

    def __init__(self, url: str, batch: int, index: int = 0) -> None:
        self.url, self.batch, self.worker_id = url, batch, f"raw-{index}"
        self._db: Database | None = None

    def prepare(self) -> None:
        self._db = create(self.url, pool_size=1)
        self._complete = complete_statement(self._db.dialect)
        self._claim = claims.statements(self._db.dialect, False)  # the engine's own, no budget filter
        with transaction(self._db, single=True) as tx:  # connect now, not inside the timed loop
            tx.values("SELECT 1")

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
        assert self._db is not None
        values = {"worker_id": self.worker_id, "token": token, "lease_s": LEASE_S, "lanes": [LANE],
                  "limit": self.batch}
        sql = self._claim
        if "claim" in sql:  # SQLite, PostgreSQL: one UPDATE ... RETURNING
            with transaction(self._db, single=True) as tx:
                return [row["task_id"] for row in tx.rows(sql["claim"], values)]
        with transaction(self._db) as tx:  # MariaDB: lock ids, update them, read them back by token
            locked = tx.values(sql["lock"], values)
            if not locked:
                return []
            tx.run(sql["update"], {**values, "ids": locked}, defer=True)  # as the engine: sent with the read-back
            return [row["task_id"] for row in tx.rows(sql["read_back"], {"ids": locked, "token": token})]

    def complete(self, ids: list[str], token: str) -> None:
        assert self._db is not None
        with transaction(self._db, single=True) as tx:
            changed = tx.run(self._complete, {"ids": ids, "token": token})
        if changed != len(ids):
            raise BenchFailed(f"raw completion changed {changed} of {len(ids)} rows it held")

    def close(self) -> None:
        if self._db is not None:
            self._db.dispose()
