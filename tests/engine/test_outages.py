"""A paused worker's row and the fleet's votes that a provider is down, on every database."""

from __future__ import annotations

import time

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import events, workers
from pipeline_kit.engine.outages import fleet_down, vote_down, vote_up

ARK = "ark at ark.example.com"


def _row(db: Database) -> sa.RowMapping:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(workers).where(workers.c.worker_id == "w")).mappings().one()


def test_a_paused_row_keeps_its_time_while_the_reason_stays(db: Database) -> None:
    """A worker paused for the same reason beat after beat keeps the time the pause began (the
    status line says 'since HH:MM'); a new reason starts a new time; no reason clears both."""
    engine.register_worker(db, "w", lanes=["default"])
    engine.touch_worker(db, "w", "working", paused=f"{ARK} unreachable")
    first = _row(db)
    assert (first["state"], first["paused_reason"]) == ("paused", f"{ARK} unreachable") and first["paused_since"]
    time.sleep(0.05)
    engine.touch_worker(db, "w", "idle", paused=f"{ARK} unreachable")
    assert _row(db)["paused_since"] == first["paused_since"]
    engine.touch_worker(db, "w", "working", paused="store unreachable during publishing")
    assert _row(db)["paused_since"] > first["paused_since"]
    engine.touch_worker(db, "w", "working")
    row = _row(db)
    assert (row["state"], row["paused_reason"], row["paused_since"]) == ("working", None, None)


def test_votes_pause_a_provider_for_the_fleet_and_lapse_by_themselves(db: Database) -> None:
    """A provider is down for the fleet while `quorum` workers hold a live vote: one alert when
    the quorum is reached (not again on renewals), the first vote's time kept, and the pause gone
    once a vote is withdrawn or lapses."""
    vote_down(db, ARK, "a", "connect timed out", hold_s=60)
    vote_down(db, ARK, "a", "connect timed out", hold_s=60)
    assert fleet_down(db) == {} and list(fleet_down(db, 1)) == [ARK]
    vote_down(db, ARK, "b", "connection refused", hold_s=0.3)
    down = fleet_down(db)[ARK]
    assert down.workers == 2 and down.since == fleet_down(db, 1)[ARK].since
    vote_down(db, ARK, "b", "connection refused", hold_s=0.3)
    time.sleep(0.6)
    assert fleet_down(db) == {}, "b's vote lapsed"
    vote_down(db, ARK, "b", "connection refused", hold_s=60)
    assert list(fleet_down(db)) == [ARK]
    vote_up(db, ARK, "a", away_s=3.0)
    assert fleet_down(db) == {} and list(fleet_down(db, 1)) == [ARK]
    with db.engine.connect() as conn:
        alerts = conn.execute(sa.select(events.c.detail).where(events.c.kind == "alert")).scalars().all()
    assert [a["message"] for a in alerts] == [f"{ARK} paused for the fleet: 2 workers find it down"] * 2
