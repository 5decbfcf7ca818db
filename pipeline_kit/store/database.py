"""The store in the database itself: PCs that share only the database URL share their outputs.

Blobs go in CHUNK-sized rows (db/blobs.py), all chunks and then the blob row in one transaction:
a blob row means a whole blob, a killed writer leaves nothing. A worker's publish writes
nothing: it checks what is stored and says which blobs its completion keeps, and the
completion's transaction keeps them once it is accepted (stamped if stored, else stored), so an
output costs no write transaction of its own and a fenced completion stores nothing. A blob
found stored is trusted only once it hashes to its checksum (a row planted ahead of a
deterministic output is replaced, not reused). `store gc` (store/gc.py) lists the blobs aged by
stored_at, which a blob found already stored is stamped again with, and deletes one only if its
stamp is still the one listed: a completion that reuses an old orphan is never swept under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit.db import blobs
from pipeline_kit.db.blobs import Upload
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import within
from pipeline_kit.db.schema import store_blobs, store_chunks
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.errors import GenerationError
from pipeline_kit.store import DATABASE_URL, Holder, Stored, side_name
from pipeline_kit.store.blobs import BlobStore
from pipeline_kit.store.cache import file_digest
from pipeline_kit.store.gc import Listed


class DatabaseStore(BlobStore):
    """Blobs in store_blobs / store_chunks of the task database."""

    url = DATABASE_URL
    verify_by_default = True  # reading a blob back is a query: `store gc` checks every one

    def __init__(self, db: Database, cache: Path) -> None:
        super().__init__(cache)
        self.db = db

    def check(self) -> None:
        """The database answers (it was opened): nothing more to check."""

    def publish(
        self, name: str, main: Path, sides: Mapping[str, Path], *, lease: Holder = None, first: bool = False
    ) -> Stored:
        """A worker's (`lease`): what its completion keeps, read from where `settle` moves the
        files (this PC's cache); the owner's (store move): kept now, in one transaction."""
        files = {**dict(sorted(sides.items())), "": main}
        digests = {suffix: file_digest(path) for suffix, path in files.items()}
        for _, sha in digests.values():  # a damaged blob goes, so the completion stores it again
            if self.has(sha, lease) and not self.intact(sha):
                self.drop_damaged(sha)
        size, sha = digests.pop("")
        side_shas = {suffix: digest[1] for suffix, digest in digests.items()}
        target = self._local(name, sha, side_shas)
        kept = {**{s: side_name(target, s) for s in side_shas}, "": target} if lease else files
        uploads = tuple(Upload(h, n, str(kept[s])) for s, (n, h) in {**digests, "": (size, sha)}.items())
        if lease is None:
            with self.db.engine.begin() as conn, within(conn, self.db.dialect) as tx:
                blobs.keep_all(tx, ((None, u) for u in uploads))
            uploads = ()
        return Stored(output_path=name, size=size, sha256=sha, sides=side_shas, uploads=uploads)

    def has(self, sha256: str, lease: Holder = None) -> bool:
        """A read: a write lock only once the blob is kept."""
        with self.db.reading() as conn:
            return (
                conn.execute(sa.select(store_blobs.c.sha256).where(store_blobs.c.sha256 == sha256)).first() is not None
            )

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
