"""A task's output as a screen shows it: fetched through the output store into this PC's cache,
with its MIME type and whether the file is there to show (the storyboard, the frame review, the
cast, the films and the monitor all read outputs this way, never by a path some worker saw)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline_kit.engine.queries import TaskOutput
from pipeline_kit.engine.states import Status
from pipeline_kit.errors import GenerationError, StoreUnavailable
from pipeline_kit.store import Store

MIME = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".json": "application/json",
}


@dataclass(frozen=True)
class MediaItem:
    task_id: str
    kind: str
    status: Status
    path: str | None
    mime: str | None
    ready: bool  # the file exists and can be shown


def media_item(store: Store, row: TaskOutput) -> MediaItem:
    """A task's output as a MediaItem, fetched through the store."""
    path = local_copy(store, row.output_path, row.result)
    return MediaItem(
        row.task_id,
        row.kind,
        row.status,
        path,
        MIME.get(Path(path).suffix.lower()) if path else None,
        bool(path) and Path(path).is_file(),
    )


def local_copy(store: Store, output_path: str | None, result: Any) -> str | None:
    """Where an output can be shown from: fetched through the store (cached on this PC), else the
    recorded path as it is."""
    if not output_path:
        return None
    try:
        return str(store.fetch(output_path, dict(result or {})))
    except (GenerationError, StoreUnavailable):
        return output_path
