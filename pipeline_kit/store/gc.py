"""`store gc`: for the stores that keep content-addressed blobs (the database, S3), what may go;
for a folder store, the staged files no lease can have accepted.

A blob goes only once it has lain past the grace period (a publish about to name it is never
swept) and then only if nothing names it (a task row, its side files, a running attempt or each
task's latest completed one: the engine's `named_checksums`) or, checked, it does not hash to its
checksum (unreadable, so the next publish stores it again). The names are read after the blobs
were listed and checked, just before deleting, so a blob named meanwhile is kept. Each kind of
blob store lists its blobs with their age and deletes one only as it was listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline_kit.db.connect import Database
from pipeline_kit.engine.queries import live_tokens, named_checksums, recorded_marks
from pipeline_kit.store import Store
from pipeline_kit.store.folder import STAGED, FolderStore, mark_of

if TYPE_CHECKING:
    from pipeline_kit.store.blobs import BlobStore


@dataclass(frozen=True)
class Listed:
    """One stored blob as a sweep saw it: `old` past the grace period; `seen` what the store
    compares before deleting it (its stored_at, its LastModified)."""

    sha256: str
    size: int
    old: bool
    seen: Any


@dataclass(frozen=True)
class Sweep:
    """What a `store gc` deletes (or, dry, would): checksums, with the bytes they hold."""

    unnamed: dict[str, int]
    damaged: dict[str, int]


def swept_stores(db: Database, store: Store) -> list[BlobStore]:
    """What `store gc` sweeps: the store in effect if it keeps blobs (a folder store keeps each
    output under its task's name, a re-run overwriting it), and the database's own blob tables
    while they hold blobs an earlier database store left."""
    from pipeline_kit.store.blobs import BlobStore
    from pipeline_kit.store.database import DatabaseStore

    stores = [store] if isinstance(store, BlobStore) else []
    if not isinstance(store, DatabaseStore) and (leftover := DatabaseStore(db, Path())).listed(0):
        stores.insert(0, leftover)
    return stores


def sweep(
    db: Database, store: BlobStore, *, grace_s: float, dry_run: bool = False, verify: bool | None = None
) -> Sweep:
    """Delete the blobs past `grace_s` that nothing names, and (with `verify`, by default where
    the store says it is cheap) those past it that do not hash to their checksum."""
    old = [blob for blob in store.listed(grace_s) if blob.old]
    check = store.verify_by_default if verify is None else verify
    damaged = [blob for blob in old if check and not store.intact(blob.sha256)]
    with db.reading() as conn:
        named = named_checksums(conn)
    bad = {blob.sha256 for blob in damaged}
    unnamed = [blob for blob in old if blob.sha256 not in named and blob.sha256 not in bad]
    if not dry_run:
        damaged = [blob for blob in damaged if store.remove(blob)]
        unnamed = [blob for blob in unnamed if store.remove(blob)]
    return Sweep({b.sha256: b.size for b in unnamed}, {b.sha256: b.size for b in damaged})


def stale_staged(db: Database, store: FolderStore, *, dry_run: bool = False) -> list[Path]:
    """Delete (or, dry, list) the staged files of the folder store that no lease can have accepted."""
    listed = [p for p in store.root.rglob(f"*{STAGED}*") if p.is_file()] if store.root.is_dir() else []
    if not listed:
        return []
    marks = {p.name.rsplit(STAGED, 1)[1] for p in listed}
    with db.reading() as conn:
        keep = {mark_of(token) for token in live_tokens(conn)} | recorded_marks(conn, marks)
    stale = sorted(p for p in listed if p.name.rsplit(STAGED, 1)[1] not in keep)
    if not dry_run:
        for path in stale:
            path.unlink(missing_ok=True)
    return stale
