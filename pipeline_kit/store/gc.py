"""`store gc`: for the stores that keep content-addressed blobs (the database, S3), what may go;
for a folder store, the staged files no lease can have accepted.

A blob goes only once it has lain past the grace period and longer than the oldest running
attempt has run (a publish about to name it is never swept: the blobs a task stores or finds
stored are younger than its attempt, and a completion names them on its row and attempt), and
then only if nothing names it (a task row, its side files, or each task's latest completed
attempt: the engine's `named_checksums`) or, checked, it does not hash to its checksum
(unreadable, so the next publish stores it again). The names are read after the blobs
were listed and checked, just before deleting, so a blob named meanwhile is kept. Each kind of
blob store lists its blobs with their age and deletes one only as it was listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline_kit.db.connect import Database
from pipeline_kit.engine.queries import live_tokens, named_checksums, recorded_marks, running_for
from pipeline_kit.store import Store
from pipeline_kit.store.folder import STAGED, FolderStore, mark_of

if TYPE_CHECKING:
    from pipeline_kit.store.blobs import BlobStore

# Added to the oldest running attempt's age: a listing's whole seconds (S3's LastModified), and
# the blob's and the attempt's clocks running apart by a little over a sweep.
CLOCK_SLACK_S = 60.0


@dataclass(frozen=True)
class Listed:
    """One stored blob as a sweep saw it: `age_s` since it was stored or last found stored, by
    the store's own clock; `seen` what the store compares before deleting it (its stored_at,
    its LastModified)."""

    sha256: str
    size: int
    age_s: float
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
    if not isinstance(store, DatabaseStore) and (leftover := DatabaseStore(db, Path())).listed():
        stores.insert(0, leftover)
    return stores


def sweep(
    db: Database, store: BlobStore, *, grace_s: float, dry_run: bool = False, verify: bool | None = None
) -> Sweep:
    """Delete the blobs past `grace_s` that nothing names, and (with `verify`, by default where
    the store says it is cheap) those past it that do not hash to their checksum. A blob stored
    (or found stored) since the oldest running attempt began may be the output its completion
    will name: it stays, unnamed or not. Ages are compared, each by its own clock (the store's
    for the blob, the database's for the attempt), so the clocks need not agree; the attempts
    are read after the listing, so a blob is never older than the attempt that stored it."""
    old = [blob for blob in store.listed() if blob.age_s > grace_s]
    check = store.verify_by_default if verify is None else verify
    damaged = [blob for blob in old if check and not store.intact(blob.sha256)]
    with db.reading() as conn:
        named = named_checksums(conn)
        running = running_for(conn)
    publishing = -1.0 if running is None else running + CLOCK_SLACK_S
    bad = {blob.sha256 for blob in damaged}
    unnamed = [b for b in old if b.sha256 not in named and b.sha256 not in bad and b.age_s > publishing]
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
