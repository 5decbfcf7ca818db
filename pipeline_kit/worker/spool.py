"""A local spool for results the database could not take: submitted when it returns.

One JSON file per finished task under data/spool/WORKER/. A spooled completion is submitted
with its original lease token, so if the lease was lost meanwhile the engine fences it and the
entry is dropped: nothing is accepted twice. Its output (staged in a folder store) is revealed
or dropped once the engine answered; the database store's blobs go in with the completion, read
from this PC's cache where the publish left them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from pipeline_kit import engine
from pipeline_kit.db.blobs import Upload
from pipeline_kit.db.connect import Database
from pipeline_kit.engine import Ack, Completion


class Spool:
    def __init__(self, root: Path, worker_id: str) -> None:
        self.dir = root / worker_id.replace("/", "_")

    def put(self, completion: Completion) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        # named by a digest, not hash(): the same completion spooled again after a restart (a new
        # hash seed) replaces its file instead of adding a second one
        digest = hashlib.sha256(completion.task_id.encode()).hexdigest()[:16]
        path = self.dir / f"{digest}-{completion.token[:8]}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(completion), default=str))
        os.replace(tmp, path)
        return path

    def pending(self) -> list[Path]:
        return sorted(self.dir.glob("*.json")) if self.dir.exists() else []

    def flush(
        self, db: Database, worker_id: str, answered: Callable[[Completion, Ack], None] = lambda c, a: None
    ) -> dict[str, Ack]:
        """Submit every spooled completion; each is removed once the engine answered, and
        `answered` hears it (the worker then reveals the output in the store, or drops it)."""
        acks: dict[str, Ack] = {}
        for path in self.pending():
            data = json.loads(path.read_text())
            completion = Completion(**{**data, "uploads": [Upload(**u) for u in data.get("uploads", ())]})
            acks[completion.task_id] = ack = engine.complete(db, completion, worker_id=worker_id)
            path.unlink()
            answered(completion, ack)
        return acks
