"""Small pictures of frames for the storyboard grid, made once per output and kept on this PC.

A thumbnail is named by its frame's checksum (`result.sha256`, recorded at completion), so a
page seen again costs one file check per frame and no fetch at all; a redrawn frame has another
checksum and so gets a new thumbnail. Workers publish a thumbnail beside each image they make
(`pipeline_kit.thumbnail`), which comes through the output store (a few kilobytes, from any PC);
only a frame published without one (an older one) is fetched whole and drawn here.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline_kit import thumbnail
from pipeline_kit.errors import GenerationError, StoreUnavailable
from pipeline_kit.store import Store
from pipeline_kit.store.cache import file_digest

BOX = thumbnail.BOX


class Thumbnails:
    """JPEG thumbnails under `folder`, keyed by checksum; `made` counts those this object drew
    or fetched from the store."""

    def __init__(self, folder: Path, box: tuple[int, int] = BOX) -> None:
        self.folder, self.box = folder, box
        self.made = 0
        self._lock = threading.Lock()

    def cached(self, result: Mapping[str, Any] | None) -> Path | None:
        """The thumbnail this PC already has for an output of that checksum (no fetch)."""
        sha = (result or {}).get("sha256")
        if not isinstance(sha, str):
            return None
        target = self._path(sha)
        return target if target.is_file() else None

    def of(self, store: Store, output_path: str | None, result: Mapping[str, Any] | None) -> Path | None:
        """The thumbnail of a recorded output, made now if this PC has none; None when the frame
        cannot be had (not drawn yet, store unreachable, not a picture)."""
        if not output_path:
            return None
        found = self.cached(result)
        if found is not None:
            return found
        result = dict(result or {})
        sha = result.get("sha256")
        if isinstance(sha, str) and self.box == BOX and thumbnail.SUFFIX in (result.get("sides") or {}):
            return self._published(store, output_path, result, self._path(sha))
        try:
            frame = store.fetch(output_path, result)
        except (GenerationError, StoreUnavailable, OSError):
            return None
        if not frame.is_file():
            return None
        if not isinstance(sha, str):  # an output recorded without its checksum
            sha = file_digest(frame)[1]
        target = self._path(sha)
        return target if target.is_file() else self._draw(frame, target)

    def _path(self, sha: str) -> Path:
        return self.folder / sha[:2] / f"{sha}-{self.box[0]}x{self.box[1]}.jpg"

    def _published(self, store: Store, output_path: str, result: Mapping[str, Any], target: Path) -> Path | None:
        """The thumbnail the worker published beside the frame, fetched through the store."""
        try:
            side = store.fetch_side(output_path, result, thumbnail.SUFFIX)
        except (GenerationError, StoreUnavailable, OSError):
            return None
        if side is None or not side.is_file():
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{threading.get_ident()}.tmp")
        shutil.copyfile(side, tmp)
        tmp.replace(target)  # whole or absent, like a drawn one
        return self._count(target)

    def _draw(self, frame: Path, target: Path) -> Path | None:
        return self._count(target) if thumbnail.draw(frame, target, self.box) else None

    def _count(self, target: Path) -> Path:
        with self._lock:  # screens draw off their event loop, in threads
            self.made += 1
        return target
