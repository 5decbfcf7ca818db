"""Wake idle workers when work may have become claimable, instead of making them poll fast.

PostgreSQL: triggers on `tasks` and `lanes` send `NOTIFY pipeline_kit_work, LANE` whenever a task
becomes pending with no dependency left (enqueue, retry, reset, a dependency completed, a reclaim,
a release) and whenever a lane changes (resumed, limit raised). Because the triggers sit on the
table, every writer wakes workers, whatever code path it took, and a transaction that readies a
thousand tasks of one lane sends one notification (PostgreSQL folds duplicates at commit).
An idle worker LISTENs on a connection of its own; the poll stays as the fallback, for tasks
whose `run_after` comes due and for a listening connection that was lost.
SQLite and MariaDB have no such channel: an idle worker polls every `poll_s`.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import dialects
from pipeline_kit.db.connect import Database

CHANNEL = "pipeline_kit_work"
_SLICE_S = 0.25  # how often a listening wait looks at the stop flag

# Created (or replaced) by `init`; idempotent. The function runs with the writer's rights, and
# pg_notify needs no privilege, so a least-privilege worker account fires it too.
TRIGGERS_SQL = (
    f"""CREATE OR REPLACE FUNCTION pipeline_kit_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', NEW.lane);
    RETURN NULL;
END $$""",
    "DROP TRIGGER IF EXISTS tasks_wake_insert ON tasks",
    """CREATE TRIGGER tasks_wake_insert AFTER INSERT ON tasks FOR EACH ROW
WHEN (NEW.status = 'pending' AND NEW.deps_remaining = 0)
EXECUTE FUNCTION pipeline_kit_wake()""",
    "DROP TRIGGER IF EXISTS tasks_wake_update ON tasks",
    """CREATE TRIGGER tasks_wake_update AFTER UPDATE OF status, deps_remaining ON tasks FOR EACH ROW
WHEN (NEW.status = 'pending' AND NEW.deps_remaining = 0
      AND (OLD.status <> 'pending' OR OLD.deps_remaining <> 0))
EXECUTE FUNCTION pipeline_kit_wake()""",
    "DROP TRIGGER IF EXISTS lanes_wake ON lanes",
    """CREATE TRIGGER lanes_wake AFTER UPDATE ON lanes FOR EACH ROW
EXECUTE FUNCTION pipeline_kit_wake()""",
)


def install(conn: sa.Connection) -> None:
    """Create the wake-up triggers (PostgreSQL only; a no-op elsewhere)."""
    if not dialects.of(conn.dialect.name).notifies:
        return
    for sql in TRIGGERS_SQL:
        conn.exec_driver_sql(sql)


class Waiter:
    """How an idle worker waits for work: until a NOTIFY (PostgreSQL), `seconds`, or `stop`."""

    def __init__(self, db: Database, stop: threading.Event) -> None:
        self.db, self.stop = db, stop
        self._conn: Any = None  # the listening driver connection, PostgreSQL only
        self._listening = dialects.of(db.dialect).notifies

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True if woken by a notification."""
        if self._listening and self._conn is None:
            self._listen()
        if self._conn is None:
            self.stop.wait(seconds)
            return False
        deadline = time.monotonic() + seconds
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                heard = any(True for _ in self._conn.notifies(timeout=min(left, _SLICE_S), stop_after=1))
                if heard:  # the generator is closed now: it holds the connection's lock while open
                    self._drain()
                    return True
            except Exception:  # the listening connection died: poll until the next wait re-listens
                self.close()
                self.stop.wait(max(0.0, deadline - time.monotonic()))
                return False
        return False

    def _listen(self) -> None:
        try:
            pooled = self.db.engine.raw_connection()
            conn = pooled.driver_connection
            pooled.detach()  # ours for the worker's life, never handed back to the pool
            conn.autocommit = True
            conn.execute(f"LISTEN {CHANNEL}")
            self._conn = conn
        except Exception:  # the database is away: the worker's poll covers it; try again next wait
            self._conn = None

    def _drain(self) -> None:
        """Swallow notifications that queued up together: one claim answers them all."""
        for _ in self._conn.notifies(timeout=0.01, stop_after=100):  # 0 would mean "no timeout"
            pass

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None
