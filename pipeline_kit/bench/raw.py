"""The raw-SQL ceilings: the engine's own statements in a bare loop, and a floor with no history.

Both run on the same table and rows, through the same driver module and connection handling as
the engine (db/driver.py: one held DBAPI connection, autocommit for one-statement transactions),
with the same process count and batch; see bench/README.md.

- `RawWorker` (the raw ceiling): exactly the SQL of a claim (db/claims.py, an attempt row opened
  per task) and of a completion (db/finishes.py, the attempt closed, the cost booked,
  dependents counted off), and none of the engine's Python around it: no lane cache or lane
  gate choice, no Lease objects, no grouping of completions, no read-back of refused ids.
- `MinimalWorker`: the claim statement without attempt rows and one guarded UPDATE per batch,
  the least any leased claim/complete loop can do; it shows what the attempt history costs.
"""

from __future__ import annotations

import secrets

from pipeline_kit.bench.errors import BenchFailed
from pipeline_kit.bench.workload import LANE
from pipeline_kit.db import Database, claims, create, finishes
from pipeline_kit.db.driver import transaction
from pipeline_kit.db.sqltime import sql_now

LEASE_S = 300.0


def complete_statement(dialect: str) -> str:
    """One guarded UPDATE for a whole claimed batch: only rows still held by this token change."""
    return (
        f"UPDATE tasks SET status = 'completed', finished_at = {sql_now(dialect)}, lease_expires_at = NULL, "
        "stage = 'done', progress = 1.0 WHERE task_id IN :ids AND lease_token = :token AND status = 'processing'"
    )


class RawWorker:
    """Claim `batch` rows with the engine's claim SQL, finish them with its completion SQL, repeat."""

    history = True  # open and close an attempt row per task, as the engine must

    def __init__(self, url: str, batch: int, index: int = 0) -> None:
        self.url, self.batch, self.worker_id = url, batch, f"raw-{index}"
        self._db: Database | None = None

    def prepare(self) -> None:
        self._db = create(self.url, pool_size=1)
        # The engine claims an unlimited, unpaid lane with the gate that re-checks it is so.
        self._claim = claims.statements(self._db.dialect, self.batch, free=self.history, history=self.history)
        self._single = self._db.dialect == "postgresql"  # one statement each way, as the engine
        with transaction(self._db, single=True) as tx:  # connect now, not inside the timed loop
            tx.values("SELECT 1")

    def run(self) -> int:
        total = 0
        while True:
            token = secrets.token_hex(16)  # as the engine's claim
            ids = self.claim(token)
            if not ids:
                return total
            self.complete(ids, token)
            total += len(ids)

    def claim(self, token: str) -> list[str]:
        """One claim transaction: returns the claimed task_ids (committed)."""
        assert self._db is not None
        values = {"worker_id": self.worker_id, "token": token, "lease_s": LEASE_S, "lanes": [LANE]}
        with transaction(self._db, single=self._single) as tx:
            return [row["task_id"] for row in claims.run_claim(tx, self._claim, values)]

    def complete(self, ids: list[str], token: str) -> None:
        assert self._db is not None
        with transaction(self._db, single=self._single) as tx:
            done = finishes.finish(tx, ids, finishes.Finish(token=token))
        _check(len(done or ()), ids)

    def close(self) -> None:
        if self._db is not None:
            self._db.dispose()


class MinimalWorker(RawWorker):
    """The floor: the bare claim statement (no attempt rows), then one guarded UPDATE per batch."""

    history = False

    def prepare(self) -> None:
        super().prepare()
        assert self._db is not None
        self._complete = complete_statement(self._db.dialect)

    def complete(self, ids: list[str], token: str) -> None:
        assert self._db is not None
        with transaction(self._db, single=True) as tx:
            _check(tx.run(self._complete, {"ids": ids, "token": token}), ids)


def _check(changed: int, ids: list[str]) -> None:
    if changed != len(ids):
        raise BenchFailed(f"raw completion finished {changed} of {len(ids)} tasks it held")
