"""The store in the database itself: PCs that share only the database URL share their outputs.

Blobs go in CHUNK-sized rows (well below MariaDB's 16 MiB max_allowed_packet even escaped, and
small enough for PostgreSQL's vacuum), all chunks and then the blob row in one transaction: a
blob row means a whole blob, a killed writer leaves nothing. Two writers of one blob race on the
primary key; the loser finds it stored and is done. `sweep` deletes blobs no task row names,
once they have lain unnamed for a grace period (a blob found already stored is stamped again, so
a publish that reuses an old orphan is never swept under it).
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import store_blobs, store_chunks, tasks
from pipeline_kit.db.sqltime import db_now, now_plus
from pipeline_kit.errors import GenerationError
from pipeline_kit.store import DATABASE_URL
from pipeline_kit.store.blobs import BlobStore

CHUNK = 1 << 20  # 1 MiB


class DatabaseStore(BlobStore):
    """Blobs in store_blobs / store_chunks of the task database."""

    url = DATABASE_URL

    def __init__(self, db: Database, cache: Path) -> None:
        super().__init__(cache)
        self.db = db

    def has(self, sha256: str) -> bool:
        with self.db.engine.begin() as conn:
            return conn.execute(sa.update(store_blobs).where(store_blobs.c.sha256 == sha256)
                                .values(stored_at=db_now())).rowcount > 0

    def put(self, sha256: str, size: int, source: Path) -> None:
        try:
            with self.db.engine.begin() as conn, source.open("rb") as fh:
                seq = 0
                for seq, block in enumerate(iter(lambda: fh.read(CHUNK), b"")):
                    conn.execute(sa.insert(store_chunks).values(sha256=sha256, seq=seq, data=block))
                chunks = seq + 1 if size else 0
                conn.execute(sa.insert(store_blobs).values(sha256=sha256, size=size, chunks=chunks,
                                                           stored_at=db_now()))
        except sa.exc.IntegrityError:  # stored meanwhile by another writer
            if not self.has(sha256):
                raise

    def get(self, sha256: str, target: Path) -> None:
        with self.db.engine.connect() as conn:
            chunks = conn.execute(sa.select(store_blobs.c.chunks)
                                  .where(store_blobs.c.sha256 == sha256)).scalar()
            if chunks is None:
                raise GenerationError(f"blob {sha256[:12]} is not in the database store",
                                      error_kind="missing_input", retryable=True)
            with target.open("wb") as fh:
                for seq in range(chunks):  # one chunk a query: memory stays at one chunk
                    fh.write(conn.execute(sa.select(store_chunks.c.data).where(
                        store_chunks.c.sha256 == sha256, store_chunks.c.seq == seq)).scalar_one())


def sweep(db: Database, *, grace_s: float) -> list[str]:
    """Delete blobs that no task's result names and nobody stored for `grace_s`; their checksums."""
    with db.engine.connect() as conn:
        named: set[str] = set()
        for (result,) in conn.execute(sa.select(tasks.c.result).where(tasks.c.output_path.is_not(None))):
            result = result or {}
            named.update(v for v in [result.get("sha256"), *(result.get("sides") or {}).values()]
                         if isinstance(v, str))
        old = conn.execute(sa.select(store_blobs.c.sha256)
                           .where(store_blobs.c.stored_at < now_plus(-grace_s))).scalars().all()
    gone = [sha for sha in old if sha not in named]
    for sha in gone:
        with db.engine.begin() as conn:  # the row first: a blob without its row is never read
            if conn.execute(sa.delete(store_blobs).where(store_blobs.c.sha256 == sha,
                                                         store_blobs.c.stored_at < now_plus(-grace_s))).rowcount:
                conn.execute(sa.delete(store_chunks).where(store_chunks.c.sha256 == sha))
    return gone
