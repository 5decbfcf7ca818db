"""Providers the fleet agrees are down: each worker's vote, kept in the database, expiring by itself.

A worker that finds a provider unreachable votes with `vote_down` (its row lives until its next
probe, plus a margin, so a worker that dies stops voting on its own); a probe that gets through
withdraws the vote with `vote_up`. Once `quorum` workers hold a live vote, `fleet_down` names the
provider and every worker skips the kinds it makes, the ones that never met the outage too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import run_named
from pipeline_kit.db.schema import provider_outages
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.engine.events import alert, record
from pipeline_kit.errors import BadInput

DEFAULT_QUORUM = 2  # workers that must agree before a provider is paused for the whole fleet


@dataclass(frozen=True)
class Outage:
    """A provider the fleet skips: since when (the first live vote), how many agree, and why."""

    provider: str
    since: datetime
    workers: int
    reason: str


def vote_down(
    db: Database,
    provider: str,
    worker_id: str,
    reason: str,
    *,
    hold_s: float,
    quorum: int = DEFAULT_QUORUM,
    task_id: str | None = None,
    new: bool = False,
) -> None:
    """Record (or renew) `worker_id`'s vote that `provider` is down, live for `hold_s` seconds; a
    vote still live keeps the time it began. A `new` pause is an alert (naming the task it
    gave back), and so is the vote that makes `quorum`: the fleet then skips the provider."""
    live = provider_outages.c.until > db_now()
    mine = sa.and_(provider_outages.c.provider == provider, provider_outages.c.worker_id == worker_id)
    with db.engine.begin() as conn:
        was_live = conn.execute(sa.select(sa.func.count()).select_from(provider_outages).where(mine, live)).scalar()
        vote = {"provider": provider, "worker_id": worker_id, "reason": reason[:1000], "hold_s": float(hold_s)}
        if routines.enabled(conn):  # a worker account: its own vote, through the owner's routine
            routines.call(conn, "pk_vote", **vote)
        elif not run_named(conn, "vote_renew", **vote):  # the routine's steps, from the same file
            run_named(conn, "vote_new", **vote)
        if new:
            _paused_alert(conn, provider, worker_id, reason, task_id)
        if not was_live:
            votes = conn.execute(
                sa.select(sa.func.count())
                .select_from(provider_outages)
                .where(provider_outages.c.provider == provider, live)
            ).scalar()
            if votes == quorum:
                alert(conn, None, worker_id, f"{provider} paused for the fleet: {votes} workers find it down"[:1000])


def alert_paused(db: Database, provider: str, worker_id: str, reason: str, *, task_id: str | None = None) -> None:
    """The alert of a worker's new pause that casts no vote (a rate limit on its own identity)."""
    with db.engine.begin() as conn:
        _paused_alert(conn, provider, worker_id, reason, task_id)


def _paused_alert(conn: sa.Connection, provider: str, worker_id: str, reason: str, task_id: str | None) -> None:
    alert(conn, task_id, worker_id, f"{provider} paused for {worker_id}: {reason}"[:1000])


def vote_up(db: Database, provider: str, worker_id: str, *, away_s: float) -> None:
    """Withdraw `worker_id`'s vote: the provider answered it again after `away_s` seconds (the row
    stays, expired; an event says so)."""
    with db.engine.begin() as conn:
        vote = {"provider": provider, "worker_id": worker_id, "reason": None, "hold_s": 0.0}  # lapses now
        if routines.enabled(conn):
            routines.call(conn, "pk_vote", **vote)
        else:
            run_named(conn, "vote_renew", **vote)
        record(conn, "provider_back", {"provider": provider, "away_s": round(away_s, 1)}, worker_id=worker_id)


def fleet_down(db: Database, quorum: int = DEFAULT_QUORUM) -> dict[str, Outage]:
    """The providers at least `quorum` workers hold a live vote against, by provider."""
    if quorum < 1:
        raise BadInput(f"the fleet pause needs at least 1 worker to agree, got {quorum}")
    with db.reading() as conn:
        return down(conn, quorum)


def down(conn: sa.Connection, quorum: int = 1) -> dict[str, Outage]:
    """`fleet_down` in the caller's transaction (status reads every provider with a live vote)."""
    c = provider_outages.c
    query = (
        sa.select(c.provider, sa.func.min(c.since).label("since"), sa.func.count().label("n"), sa.func.max(c.reason))
        .where(c.until > db_now())
        .group_by(c.provider)
        .having(sa.func.count() >= quorum)
        .order_by(c.provider)
    )
    return {r[0]: Outage(r[0], r[1], int(r[2]), r[3] or "") for r in conn.execute(query)}
