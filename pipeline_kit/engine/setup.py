"""Make a database ready for work, as `pipeline-kit init` does: the schema created or upgraded
and the default lanes, both under the init lock, so racing inits all succeed."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline_kit.db.connect import Database, connect
from pipeline_kit.db.migrate import init as migrate
from pipeline_kit.engine.lanes import seed_lanes


@dataclass(frozen=True)
class Ready:
    """What preparing a database did: the schema version before (None: there was none) and
    after, and the default lanes it created."""

    before: int | None
    after: int
    lanes_created: tuple[str, ...]


def prepare(db: Database) -> Ready:
    """Create or upgrade the schema and add the missing default lanes (idempotent)."""
    created: list[str] = []
    before, after = migrate(db, then=lambda conn: created.extend(seed_lanes(conn)))
    return Ready(before, after, tuple(created))


def init(url: str | None = None) -> Database:
    """Open the database at `url` (else $PIPELINE_KIT_DB, else the SQLite default), creating a
    SQLite file that is not there yet, and prepare it: the Python form of `pipeline-kit init`."""
    db = connect(url)
    prepare(db)
    return db
