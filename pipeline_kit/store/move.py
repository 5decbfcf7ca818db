"""Changing a database's store without losing its outputs (`pipeline-kit store set URL --copy`).

Task rows name outputs by store name and checksum, so moving a store is copying every recorded
output (side files too) from the old store into the new one under the same name, each checked
against its checksum on the way in and read back from the new store; the rows stay as they are.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from pipeline_kit.db.connect import Database
from pipeline_kit.engine.queries import MADE, find_tasks
from pipeline_kit.errors import PipelineKitError
from pipeline_kit.store import Store, side_name
from pipeline_kit.store.cache import file_digest


def recorded_outputs(db: Database) -> list[tuple[str, dict[str, Any]]]:
    """(store name, result) of every output a completed task records, every book."""
    with db.reading() as conn:
        rows = find_tasks(conn, statuses=MADE, made=True)
    return [(str(r.output_path), dict(r.result or {})) for r in rows]


def copy_outputs(db: Database, source: Store, target: Store) -> tuple[int, list[tuple[str, str]]]:
    """Copy every recorded output from `source` into `target`; (outputs copied, [(name, why)]
    of those that could not be)."""
    copied, failed = 0, []
    for name, result in recorded_outputs(db):
        try:
            copy_one(source, target, name, result)
            copied += 1
        except (PipelineKitError, OSError) as exc:
            failed.append((name, (str(exc).splitlines() or [type(exc).__name__])[0]))
    return copied, failed


def copy_one(source: Store, target: Store, name: str, result: dict[str, Any]) -> None:
    """One output and its side files, checked against the recorded checksums before and after."""
    sha, sides = result.get("sha256"), dict(result.get("sides") or {})
    if not isinstance(sha, str):
        raise PipelineKitError(f"{name} has no checksum recorded")
    main = source.fetch(name, result)
    with tempfile.TemporaryDirectory(prefix="pk-copy-") as scratch:
        staged = Path(scratch) / main.name
        staged_sides = {suffix: side_name(staged, suffix) for suffix in sides}
        for suffix, path in [("", staged), *staged_sides.items()]:
            shutil.copyfile(side_name(main, suffix) if suffix else main, path)
            expected = sides[suffix] if suffix else sha
            if file_digest(path)[1] != expected:
                raise PipelineKitError(f"{name}{suffix and ' ' + suffix} in the old store does not match its checksum")
        stored = target.publish(name, staged, staged_sides)
        target.settle(stored, staged, staged_sides)
    if stored.sha256 != sha or stored.sides != sides:
        raise PipelineKitError(f"{name} was stored with other checksums than recorded")
    back = target.fetch(name, result)
    if file_digest(back)[1] != sha or any(
        file_digest(side_name(back, suffix))[1] != side_sha for suffix, side_sha in sides.items()
    ):
        raise PipelineKitError(f"{name} read back from the new store does not match its checksum")
