"""The store in the database itself: PCs that share only the database URL share their outputs.

Blobs go in CHUNK-sized rows (well below MariaDB's 16 MiB max_allowed_packet even escaped, and
small enough for PostgreSQL's vacuum), all chunks and then the blob row in one transaction: a
blob row means a whole blob, a killed writer leaves nothing. Two writers of one blob race on the
primary key; the loser finds it stored and is done. A blob found stored is trusted only once it
hashes to its checksum (a row planted ahead of a deterministic output is replaced, not reused).
`store gc` (store/gc.py) lists the blobs aged by stored_at, which a blob found already stored is
stamped again with, and deletes one only if its stamp is still the one listed: a publish that
reuses an old orphan is never swept under it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import run_named
from pipeline_kit.db.schema import store_blobs, store_chunks
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.errors import GenerationError, LeaseLost
from pipeline_kit.store import DATABASE_URL, Holder
from pipeline_kit.store.blobs import BlobStore
from pipeline_kit.store.gc import Listed

CHUNK = 1 << 20  # 1 MiB


class DatabaseStore(BlobStore):
    """Blobs in store_blobs / store_chunks of the task database."""

    url = DATABASE_URL
    verify_by_default = True  # reading a blob back is a query: `store gc` checks every one

    def __init__(self, db: Database, cache: Path) -> None:
        super().__init__(cache)
        self.db = db

    def check(self) -> None:
        """The database answers (it was opened): nothing more to check."""

    def has(self, sha256: str, lease: Holder = None) -> bool:
        """A read: a write lock only once the blob is kept (`keep`) or stored (`put`)."""
        with self.db.reading() as conn:
            return (
                conn.execute(sa.select(store_blobs.c.sha256).where(store_blobs.c.sha256 == sha256)).first() is not None
            )

    def keep(self, sha256: str, lease: Holder = None) -> bool:
        if routines.enabled(self.db):  # a worker account: only while it holds a task
            task_id, token = lease or (None, None)
            with _held(lease), self.db.engine.begin() as conn:
                return bool(routines.call(conn, "pk_blob_seen", task_id=task_id, token=token, sha256=sha256)[0][0])
        with self.db.engine.begin() as conn:  # the routine's statement, from the same file
            return run_named(conn, "blob_seen", sha256=sha256) > 0

    def drop_damaged(self, sha256: str) -> None:
        try:
            with self.db.engine.begin() as conn:  # the row first: a blob without its row is never read
                conn.execute(sa.delete(store_blobs).where(store_blobs.c.sha256 == sha256))
                conn.execute(sa.delete(store_chunks).where(store_chunks.c.sha256 == sha256))
        except sa.exc.DBAPIError as exc:  # a worker account may not delete: the owner's gc will
            if exc.connection_invalidated:  # the database went away: the worker pauses and retries
                raise
            raise GenerationError(
                f"blob {sha256[:12]} in the database store does not match its checksum (planted or damaged): "
                "run `pipeline-kit store gc` as the owner, then retry this task",
                error_kind="store_damaged",
                retryable=False,
            ) from None

    def put(self, sha256: str, size: int, source: Path, lease: Holder = None) -> None:
        routine = routines.enabled(self.db)  # a worker account: the routine checks lease and checksum
        held = dict(zip(("task_id", "token"), lease or (None, None)))
        try:
            with _held(lease), self.db.engine.begin() as conn, source.open("rb") as fh:
                seq = 0
                for seq, block in enumerate(iter(lambda: fh.read(CHUNK), b"")):
                    if routine:
                        routines.call(conn, "pk_put_chunk", **held, sha256=sha256, seq=seq, data=block)
                    else:
                        run_named(conn, "chunk", sha256=sha256, seq=seq, data=block)
                chunks = seq + 1 if size else 0
                if routine:
                    routines.call(conn, "pk_put_blob", **held, sha256=sha256, size=size, chunks=chunks)
                else:
                    run_named(conn, "blob", sha256=sha256, size=size, chunks=chunks)
        except sa.exc.IntegrityError:  # stored meanwhile by another writer
            if not self.has(sha256, lease):
                raise

    def get(self, sha256: str, target: Path) -> None:
        with self.db.reading() as conn:
            chunks = conn.execute(sa.select(store_blobs.c.chunks).where(store_blobs.c.sha256 == sha256)).scalar()
            if chunks is None:
                raise GenerationError(
                    f"blob {sha256[:12]} is not in the database store", error_kind="missing_input", retryable=True
                )
            with target.open("wb") as fh:
                for seq in range(chunks):  # one chunk a query: memory stays at one chunk
                    data = conn.execute(
                        sa.select(store_chunks.c.data).where(store_chunks.c.sha256 == sha256, store_chunks.c.seq == seq)
                    ).scalar()
                    if data is None:
                        raise GenerationError(
                            f"blob {sha256[:12]} is not wholly in the database store (chunk {seq} missing)",
                            error_kind="missing_input",
                            retryable=True,
                        )
                    fh.write(data)

    def listed(self) -> list[Listed]:
        """Every blob, aged since it was stored or last found stored (database clock)."""
        with self.db.reading() as conn:
            now = conn.execute(sa.select(db_now())).scalar_one()
            rows = conn.execute(sa.select(store_blobs.c.sha256, store_blobs.c.size, store_blobs.c.stored_at)).all()
        return [Listed(sha, size, (now - at).total_seconds(), at) for sha, size, at in rows]

    def remove(self, blob: Listed) -> bool:
        with self.db.engine.begin() as conn:  # the row first: a blob without its row is never read
            # only as it was listed: a publish since (which stamps or replaces it) keeps it
            if not conn.execute(
                sa.delete(store_blobs).where(store_blobs.c.sha256 == blob.sha256, store_blobs.c.stored_at <= blob.seen)
            ).rowcount:
                return False
            conn.execute(sa.delete(store_chunks).where(store_chunks.c.sha256 == blob.sha256))
        return True


@contextmanager
def _held(lease: Holder) -> Iterator[None]:
    """A worker account's routine refusing a blob write for a lease no longer held means the
    task was taken over: LeaseLost (the worker drops its work as fenced), not a missing grant."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if routines.refused_for_lease(exc):
            raise LeaseLost(f"task {lease[0] if lease else '?'}: lease lost before its output was stored") from None
        raise
