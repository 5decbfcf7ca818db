"""Where a task's output is made and named: temp file, ready marker, its name in the store.

The name (and the final path in this PC's outputs folder) is deterministic and unique per task, so
a re-run overwrites instead of
duplicating and no two tasks share a file: data/outputs/BOOKCODE/SHOT/KIND.ext when those names
are plain ASCII and the task id is SHOT/KIND, else data/outputs/BOOKCODE/tasks/READABLE-HASH.ext
(a readable form of the task id plus a hash of the whole id, so names that read alike, or not at
all, such as Chinese, Arabic or emoji character names, still get files of their own).
A backend writes `KIND.<token>.part.png` (its own, so two holders
never write one file); once its call returned, the runtime renames that to `KIND.ready.png` with
a sidecar `KIND.ready-meta.json` holding cost, model and a hash of the params, so a worker taking the task
over later reuses the paid-for file instead of calling again (never after the params changed).
The sidecar also says the task generation it was made for: a late attempt never replaces the
ready file of a later generation (a task reset while it ran), and a run publishes `.ready` only
while it holds an output of its own params and generation; a completion accepted under the
current lease is what makes a published file an output (`pipeline_kit.store`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline_kit.store.cache import file_digest
from pipeline_kit.store.folder import OUTPUTS

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # used as it is in a path
_UNREADABLE = re.compile(r"[^\w-]+")  # letters of every script stay; emoji, spaces, / do not
READABLE_MAX = 40  # characters of the task id kept in its file name (4 bytes each at most)
HASH_HEX = 12  # 48 bits of the task id's sha256: what makes the name unique


@dataclass(frozen=True)
class OutputPaths:
    name: str  # PC-independent: outputs/BOOK/SHOT/KIND.ext, films/BOOK/film.mp4
    final: Path
    part: Path
    ready: Path
    ready_meta: Path

    @classmethod
    def for_task(
        cls,
        root: Path,
        *,
        task_id: str,
        kind: str,
        bookcode: str | None,
        shot_id: str | None,
        suffix: str,
        token: str,
        publish_as: str | None = None,
    ) -> OutputPaths:
        parts = [_safe(p) for p in Path(publish_as or "").parts if p not in ("", ".", "..", "/")]
        if parts:  # a path under the data folder the task asks for (films/BOOK/film.mp4)
            name = "/".join(parts)
        elif bookcode and shot_id and task_id == f"{shot_id}/{kind}" and _plain(bookcode, shot_id, kind):
            name = f"{OUTPUTS}{bookcode}/{shot_id}/{kind}{suffix}"
        else:
            folder = f"{OUTPUTS}{_safe(bookcode)}/" if bookcode else OUTPUTS
            name = f"{folder}tasks/{task_file_name(task_id, bookcode, suffix)}"
        final = root / name[len(OUTPUTS) :] if name.startswith(OUTPUTS) else root.parent / name
        stem, suffix = final.name[: len(final.name) - len(final.suffix)], final.suffix
        # the real suffix stays last: tools such as ffmpeg pick the format from it
        return cls(
            name,
            final,
            final.with_name(f"{stem}.{token[:12]}.part{suffix}"),
            final.with_name(f"{stem}.ready{suffix}"),
            final.with_name(f"{stem}.ready-meta.json"),  # never the ready file itself, whatever its suffix
        )

    def mark_ready(self, meta: dict[str, Any], extras: Mapping[str, Path] | None = None) -> None:
        """The call returned: keep its file (and side files) and what it cost for a takeover,
        unless the ready file holds a later generation's output (this attempt is late: a reset
        re-opened the task and a newer lease made it anew), which is never replaced."""
        if self._generation() > meta.get("generation", -1):
            return
        for suffix, path in (extras or {}).items():
            os.replace(path, self.side(suffix, ready=True))
        meta = {**meta, "extras": sorted(extras or {})}
        _write_atomic(self.ready_meta, json.dumps(meta, sort_keys=True).encode())
        os.replace(self.part, self.ready)

    def side_part(self, suffix: str) -> Path:
        """Where this attempt writes a side file before `mark_ready` keeps it: named like the temp
        file (`X.TOKEN.thumb.jpg.part.png`), so `tidy` clears it if the attempt dies first."""
        return self.part.with_name(
            self.part.name.removesuffix(f".part{self.final.suffix}") + f"{suffix}.part{self.final.suffix}"
        )

    def side(self, suffix: str, *, ready: bool = False) -> Path:
        """Where a side file (".srt", ".contact.png") lives: next to the final file."""
        stem = self.final.name[: len(self.final.name) - len(self.final.suffix)]
        return self.final.with_name(f"{stem}{'.ready' if ready else ''}{suffix}")

    def reusable(self, params_hash: str) -> dict[str, Any] | None:
        """Meta of a finished, unpublished output an earlier attempt made from the same params."""
        meta = self._meta() if self.ready.exists() else {}
        return meta if meta and meta.get("params_hash") == params_hash else None

    def _generation(self) -> int:
        """The task generation the ready file was made for (-1: none, or not said)."""
        try:
            return int(self._meta().get("generation", -1))
        except (ValueError, TypeError):
            return -1

    def ready_sides(self) -> dict[str, Path]:
        """The side files made with the ready file, by suffix."""
        return {suffix: self.side(suffix, ready=True) for suffix in self._meta().get("extras", [])}

    def _meta(self) -> dict[str, Any]:
        """What the ready file's sidecar says ({}: none, or unreadable)."""
        try:
            meta = json.loads(self.ready_meta.read_text())
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    def ready_files(self, sides: Iterable[str]) -> tuple[Path, dict[str, Path]]:
        """The ready file and its side files by suffix: where a fenced publish gives them back."""
        return self.ready, {suffix: self.side(suffix, ready=True) for suffix in sides}

    def restore_meta(self, meta: Mapping[str, Any]) -> None:
        """A fenced publish gave the ready file back: its meta again, unless another attempt's
        ready file is there now (its meta stands)."""
        if self.ready.exists() and not self.ready_meta.exists():
            _write_atomic(self.ready_meta, json.dumps(dict(meta), sort_keys=True).encode())

    def tidy(self) -> None:
        """Published: drop the ready marker and temp files of attempts killed mid-call."""
        self.ready_meta.unlink(missing_ok=True)
        stem = self.final.name[: len(self.final.name) - len(self.final.suffix)]
        for stale in self.final.parent.glob(f"{stem}.*.part{self.final.suffix}"):
            stale.unlink(missing_ok=True)


__all__ = ["OutputPaths", "file_digest", "params_hash", "task_file_name"]


def params_hash(params: Any) -> str:
    """A stable hash of a task's params (what a reusable output must have been made from)."""
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def task_file_name(task_id: str, bookcode: str | None, suffix: str) -> str:
    """READABLE-HASH.ext: the task id (less its book prefix) in letters any file system takes,
    cut to READABLE_MAX characters, and the first HASH_HEX hex digits of the id's sha256."""
    tail = (task_id.removeprefix(f"{bookcode}/") if bookcode else task_id).replace("/", "-")
    readable = _UNREADABLE.sub("_", unicodedata.normalize("NFC", tail)).strip("._-")[:READABLE_MAX]
    digest = hashlib.sha256(task_id.encode()).hexdigest()[:HASH_HEX]
    return f"{readable.rstrip('._-') or 'task'}-{digest}{suffix}"


def _plain(*names: str) -> bool:
    return all(_PLAIN.fullmatch(n) for n in names)


def _safe(part: str) -> str:
    return _UNSAFE.sub("_", part).strip("._") or "_"
