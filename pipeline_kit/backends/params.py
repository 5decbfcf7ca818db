"""The params contract every backend reads, with its defaults and its permanent errors.

The splitting side produces these params; a missing required field or an impossible value is
the caller's fault, so it fails at once (permanent `GenerationError`) naming the field.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from pipeline_kit import kinds
from pipeline_kit.backends.base import Job
from pipeline_kit.errors import GenerationError

DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_FPS = 640, 360, 12
MAX_SIDE = 4096


def permanent(error_kind: str, message: str) -> GenerationError:
    """A non-retryable error: retrying the same call cannot succeed."""
    return GenerationError(message, error_kind=error_kind, retryable=False)


def check_kind(kind: str, supported: frozenset[str], backend: str) -> None:
    """Refuse a kind this backend does not make (permanent `invalid_kind`)."""
    if kind not in supported:
        raise permanent(
            "invalid_kind", f"backend {backend} cannot make kind {kind!r} (it makes {', '.join(sorted(supported))})"
        )


def suffix_for(kind: str) -> str:
    """The output suffix of a kind (the registry's): .png for images, .mp4 for video, .wav for
    voice, .json for records."""
    found = kinds.get(kind)
    if found is None:
        raise permanent("invalid_kind", f"unknown task kind {kind!r}")
    return found.suffix


def require(params: Mapping[str, Any], name: str) -> Any:
    """The value of a required field; missing or empty -> permanent `missing_field`."""
    value = params.get(name)
    if value is None or value == "":
        raise permanent("missing_field", f"params field {name!r} is required")
    return value


def text(params: Mapping[str, Any], name: str, default: str = "") -> str:
    """An optional text field as a string (None -> default)."""
    value = params.get(name)
    return default if value is None else str(value)


def _positive_int(params: Mapping[str, Any], name: str, default: int, limit: int) -> int:
    value = params.get(name, default)
    if value is None:
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise permanent("bad_param", f"params field {name!r} must be an integer, got {value!r}") from None
    if not 0 < number <= limit:
        raise permanent(
            "unsupported_size" if name in ("width", "height") else "bad_param",
            f"params field {name!r} must be in 1..{limit}, got {number}",
        )
    return number


def size(params: Mapping[str, Any]) -> tuple[int, int]:
    """(width, height), default 640x360."""
    return (
        _positive_int(params, "width", DEFAULT_WIDTH, MAX_SIDE),
        _positive_int(params, "height", DEFAULT_HEIGHT, MAX_SIDE),
    )


def even_size(params: Mapping[str, Any]) -> tuple[int, int]:
    """(width, height) rounded down to even numbers (x264 with yuv420p needs them), min 2."""
    width, height = size(params)
    return max(2, width - width % 2), max(2, height - height % 2)


def fps(params: Mapping[str, Any]) -> int:
    """Frames per second, default 12."""
    return _positive_int(params, "fps", DEFAULT_FPS, 120)


def duration_s(params: Mapping[str, Any]) -> float:
    """The clip length in seconds (required, finite, > 0, at most 10 minutes)."""
    value = require(params, "duration_s")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise permanent("bad_param", f"params field 'duration_s' must be a number, got {value!r}") from None
    if not (math.isfinite(seconds) and 0 < seconds <= 600):
        raise permanent("bad_param", f"params field 'duration_s' must be in (0, 600], got {value!r}")
    return seconds


def stable_seed(task_id: str) -> int:
    """A seed derived from the task id alone, identical on every machine and run."""
    return int.from_bytes(hashlib.sha256(task_id.encode("utf-8")).digest()[:4], "big")


def seed(job: Job) -> int:
    """The params seed, else a stable hash of the task id."""
    value = job.params.get("seed")
    if value is None:
        return stable_seed(job.task_id)
    try:
        return int(value) & 0xFFFFFFFF
    except (TypeError, ValueError):
        raise permanent("bad_param", f"params field 'seed' must be an integer, got {value!r}") from None


def voice_lines(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lines of a voice task: objects with a `text` (an empty list: a silent shot)."""
    lines = params.get("lines")
    if not isinstance(lines, list) or not all(isinstance(x, Mapping) and isinstance(x.get("text"), str) for x in lines):
        raise permanent("bad_param", "params field 'lines' must be a list of objects with a 'text'")
    return [dict(x) for x in lines if x["text"].strip()]


def record_suffix(kind: str, supported: frozenset[str], backend: str) -> str:
    """.json for the record kinds a chat backend makes; any other kind is refused."""
    check_kind(kind, supported, backend)
    return ".json"


def image_suffix(kind: str, backend: str) -> str:
    """.png for the image kinds an image-only backend makes; any other kind is refused."""
    check_kind(kind, frozenset(kinds.names(media=kinds.Media.IMAGE)), backend)
    return kinds.Media.IMAGE.value
