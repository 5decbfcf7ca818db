"""Where a task's output lives, and how it gets there: temp file, ready marker, atomic move.

The final path is deterministic (data/outputs/BOOKCODE/SHOT/KIND.ext), so a re-run overwrites
instead of duplicating. A backend writes `KIND.<token>.part.png` (its own, so two holders
never write one file); once its call returned, the runtime renames that to `KIND.ready.png` with
a sidecar `KIND.ready.json` holding cost, model and a hash of the params, so a worker taking the task
over later reuses the paid-for file instead of calling again (never after the params changed).
Only the holder of the current lease moves `.ready` onto the final path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class OutputPaths:
    final: Path
    part: Path
    ready: Path
    ready_meta: Path

    @classmethod
    def for_task(cls, root: Path, *, task_id: str, kind: str, bookcode: str | None, shot_id: str | None,
                 suffix: str, token: str, publish_as: str | None = None) -> OutputPaths:
        if publish_as:  # a path under the data folder the task asks for (films/BOOK/film.mp4)
            parts = [_safe(p) for p in Path(publish_as).parts if p not in ("", ".", "..", "/")]
            final = root.parent.joinpath(*parts) if parts else root / "tasks" / f"{_safe(task_id)}{suffix}"
        elif bookcode and shot_id:
            final = root / _safe(bookcode) / _safe(shot_id) / f"{_safe(kind)}{suffix}"
        elif bookcode:
            final = root / _safe(bookcode) / f"{_safe(task_id.split('/')[-1])}-{_safe(kind)}{suffix}"
        else:
            final = root / "tasks" / f"{_safe(task_id)}{suffix}"
        stem, suffix = final.name[: len(final.name) - len(final.suffix)], final.suffix
        # the real suffix stays last: tools such as ffmpeg pick the format from it
        return cls(final, final.with_name(f"{stem}.{token[:12]}.part{suffix}"),
                   final.with_name(f"{stem}.ready{suffix}"), final.with_name(f"{stem}.ready.json"))

    def mark_ready(self, meta: dict[str, Any], extras: Mapping[str, Path] | None = None) -> None:
        """The call returned: keep its file (and side files) and what it cost for a takeover."""
        for suffix, path in (extras or {}).items():
            os.replace(path, self.side(suffix, ready=True))
        meta = {**meta, "extras": sorted(extras or {})}
        _write_atomic(self.ready_meta, json.dumps(meta, sort_keys=True).encode())
        os.replace(self.part, self.ready)

    def side(self, suffix: str, *, ready: bool = False) -> Path:
        """Where a side file (".srt", ".contact.png") lives: next to the final file."""
        stem = self.final.name[: len(self.final.name) - len(self.final.suffix)]
        return self.final.with_name(f"{stem}{'.ready' if ready else ''}{suffix}")

    def reusable(self, params_hash: str) -> dict[str, Any] | None:
        """Meta of a finished, unpublished output an earlier attempt made from the same params."""
        if not (self.ready.exists() and self.ready_meta.exists()):
            return None
        try:
            meta = dict(json.loads(self.ready_meta.read_text()))
        except (OSError, ValueError):
            return None
        return meta if meta.get("params_hash") == params_hash else None

    def publish(self) -> tuple[int, str]:
        """Move the ready file onto the final path (atomic); returns (bytes, sha256)."""
        size, digest = file_digest(self.ready)
        meta = json.loads(self.ready_meta.read_text()) if self.ready_meta.exists() else {}
        for suffix in meta.get("extras", []):
            if self.side(suffix, ready=True).exists():
                os.replace(self.side(suffix, ready=True), self.side(suffix))
        os.replace(self.ready, self.final)
        self.ready_meta.unlink(missing_ok=True)
        stem = self.final.name[: len(self.final.name) - len(self.final.suffix)]
        for stale in self.final.parent.glob(f"{stem}.*.part{self.final.suffix}"):
            stale.unlink(missing_ok=True)  # temp files of attempts killed mid-call
        return size, digest


def params_hash(params: Any) -> str:
    """A stable hash of a task's params (what a reusable output must have been made from)."""
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def file_digest(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _safe(part: str) -> str:
    return _UNSAFE.sub("_", part).strip("._") or "_"
