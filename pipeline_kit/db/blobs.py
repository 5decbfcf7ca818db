"""The database store's blobs, kept inside the transaction that names them.

A worker's output goes in with its completion: the completion's transaction accepts the task,
names the blobs on its attempt, and then keeps each blob, stamping it if it is stored already
(so a `store gc` that listed it as an old orphan leaves it) and else storing it, all chunks and
then its row. So a task costs no write transaction of its own for its output, a fenced
completion stores nothing, and an accepted one never names a blob that is not there. Blobs go in
checksum order (two completions keeping the same two blobs never wait on each other in a cycle);
a chunk or row another writer stored first is left as it is. A worker account keeps a blob
through its routines, which ask that its completion, just accepted, names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline_kit.db import dialects, routines
from pipeline_kit.db.driver import Tx

CHUNK = 1 << 20  # 1 MiB: well below MariaDB's 16 MiB max_allowed_packet even escaped


@dataclass(frozen=True)
class Upload:
    """A blob to keep: its checksum, size, and the local file holding it."""

    sha256: str
    size: int
    path: str


Owned = tuple[str, str] | None  # the (task_id, token) whose accepted completion names the blob; None: the owner's


def keep_all(tx: Tx, uploads: Iterable[tuple[Owned, Upload]], *, routine: bool = False) -> None:
    """Keep every blob of `uploads` (once each), in checksum order. `routine`: a worker account,
    through the routines (each blob's owner must name it)."""
    once = {upload.sha256: (owner, upload) for owner, upload in uploads}
    for sha in sorted(once):
        owner, upload = once[sha]
        keep(tx, upload, owner, routine=routine)


def keep(tx: Tx, upload: Upload, owner: Owned = None, *, routine: bool = False) -> None:
    """Stamp the blob if it is stored, else store it from its file."""
    held = dict(zip(("task_id", "token"), owner or (None, None)))
    sha = upload.sha256
    if routine:
        if _call(tx, "pk_blob_seen", **held, sha256=sha)[0]:
            return
    elif tx.run(_sql(tx, "blob_seen"), {"sha256": sha}):
        return
    seq = -1
    with Path(upload.path).open("rb") as fh:
        for seq, block in enumerate(iter(lambda: fh.read(CHUNK), b"")):
            if routine:
                _call(tx, "pk_put_chunk", **held, sha256=sha, seq=seq, data=block)
            else:
                tx.run(_sql(tx, "chunk"), {"sha256": sha, "seq": seq, "data": block})
    row = {"sha256": sha, "size": upload.size, "chunks": seq + 1}
    if routine:
        _call(tx, "pk_put_blob", **held, **row)
    else:
        tx.run(_sql(tx, "blob"), row)


def _sql(tx: Tx, name: str) -> str:
    return dialects.of(tx.dialect).sql(name)


def _call(tx: Tx, name: str, **params: object) -> list[object]:
    return tx.values(routines.call_sql(tx.dialect, name), routines.arguments(tx.dialect, params))
