"""Lanes: named capabilities with a fleet-wide running limit, a pause switch and an expiry rule."""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import lanes
from pipeline_kit.engine.events import alert
from pipeline_kit.errors import BadInput, NotFound

# Seeded by `init`. llm is "one worker, one brain": one model call at a time across the fleet.
DEFAULT_LANES: dict[str, int | None] = {
    "default": None,
    "image": None,
    "video": None,
    "voice": None,
    "llm": 1,
    "assembly": None,
    "music": None,  # a book's music bed: made by `film --music` on the PC with the file, no worker serves it
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Lane:
    lane: str
    max_running: int | None
    paused: bool
    max_attempts: int | None
    on_expire: str
    paid: bool


def seed_default_lanes(db: Database) -> list[str]:
    """Create the default lanes that are missing; returns the ones created."""
    with db.engine.begin() as conn:
        return seed_lanes(conn)


def seed_lanes(conn: sa.Connection) -> list[str]:
    """`seed_default_lanes` in the caller's transaction (`init` runs it under its lock)."""
    have = set(conn.execute(sa.select(lanes.c.lane)).scalars())
    missing = [name for name in DEFAULT_LANES if name not in have]
    for name in missing:
        conn.execute(sa.insert(lanes).values(lane=name, max_running=DEFAULT_LANES[name], paused=False))
    return missing


def list_lanes(db: Database) -> list[Lane]:
    with db.reading() as conn:
        return [_lane(r) for r in conn.execute(sa.select(lanes).order_by(lanes.c.lane)).mappings()]


def add_lane(
    db: Database,
    name: str,
    *,
    max_running: int | None = None,
    on_expire: str = "retry",
    max_attempts: int | None = None,
    paid: bool = False,
) -> Lane:
    """Create a lane (or fail if it exists)."""
    if not _NAME.match(name):
        raise BadInput(f"lane name must be lower-case letters, digits, '_', '.', '-' (1-64): {name!r}")
    _check_settings(max_running, on_expire, max_attempts)
    with db.engine.begin() as conn:
        if conn.execute(sa.select(lanes.c.lane).where(lanes.c.lane == name)).first():
            raise BadInput(f"lane {name!r} exists already")
        conn.execute(
            sa.insert(lanes).values(
                lane=name,
                max_running=max_running,
                paused=False,
                on_expire=on_expire,
                max_attempts=max_attempts,
                paid=paid,
            )
        )
    return get_lane(db, name)


def get_lane(db: Database, name: str) -> Lane:
    with db.reading() as conn:
        row = conn.execute(sa.select(lanes).where(lanes.c.lane == name)).mappings().first()
    if row is None:
        raise NotFound(f"unknown lane {name!r}: add it with `pipeline-kit lane add {name}`")
    return _lane(row)


def update_lane(db: Database, name: str, **changes: object) -> Lane:
    """Pause/resume (paused=), set max_running=, on_expire=, max_attempts= or paid=."""
    get_lane(db, name)
    current = get_lane(db, name)
    _check_settings(
        changes.get("max_running", current.max_running),  # type: ignore[arg-type]
        changes.get("on_expire", current.on_expire),  # type: ignore[arg-type]
        changes.get("max_attempts", current.max_attempts),
    )  # type: ignore[arg-type]
    with db.engine.begin() as conn:
        conn.execute(sa.update(lanes).where(lanes.c.lane == name).values(**changes))
    return get_lane(db, name)


def pause_with_alert(
    db: Database, name: str, message: str, *, task_id: str | None = None, worker_id: str | None = None
) -> None:
    """Pause a lane for the whole fleet and tell a person why, in one transaction (a paid
    provider's account that is out of money: every task would fail the same way)."""
    with db.engine.begin() as conn:
        conn.execute(sa.update(lanes).where(lanes.c.lane == name).values(paused=True))
        alert(conn, task_id, worker_id, f"lane {name} paused: {message}"[:1000])


def require_lanes(db: Database, names: list[str]) -> None:
    """Fail with one line if any name is not a lane (a worker must not silently serve nothing)."""
    known = {lane.lane for lane in list_lanes(db)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise BadInput(f"unknown lane {unknown[0]!r} (known: {', '.join(sorted(known))})")


def _check_settings(max_running: int | None, on_expire: str, max_attempts: int | None) -> None:
    if max_running is not None and not 1 <= max_running <= 10_000:
        raise BadInput(f"max_running must be from 1 to 10000 (or none), got {max_running}")
    if on_expire not in ("retry", "fail"):
        raise BadInput(f"on_expire must be 'retry' or 'fail', got {on_expire!r}")
    if max_attempts is not None and not 1 <= max_attempts <= 1000:
        raise BadInput(f"max_attempts must be from 1 to 1000, got {max_attempts}")


def _lane(row: sa.RowMapping) -> Lane:
    return Lane(
        lane=row["lane"],
        max_running=row["max_running"],
        paused=bool(row["paused"]),
        max_attempts=row["max_attempts"],
        on_expire=row["on_expire"],
        paid=bool(row["paid"]),
    )
