"""Input images re-encoded for a provider: data URIs of a size the provider accepts.

A base64 data URI grows a file by a third and providers cap both request and image sizes, so
a character sheet or frame is scaled to fit (longest side at most `max_side`, shortest at least
`min_side`) and sent as JPEG, never raw. An input that is missing or not an image is the task's
fault: a permanent error naming it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from PIL import Image

from pipeline_kit import kinds
from pipeline_kit.backends.params import permanent

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp"})


def image_inputs(inputs: Mapping[str, Path], limit: int) -> list[Path]:
    """The distinct image files among a job's inputs, in the order given, at most `limit`."""
    paths: Iterable[Path] = dict.fromkeys(Path(p) for p in inputs.values())
    return [p for p in paths if p.suffix.lower() in IMAGE_SUFFIXES][:limit]


def labelled_references(kind: str, params: Mapping[str, object], inputs: Mapping[str, Path], limit: int) -> list[Path]:
    """The pictures a frame is drawn from, in the order its params' `references` name them (the
    shot's first frame before the sheets), then any other image input; none for other kinds."""
    if kind not in kinds.names(kinds.Role.FRAME):
        return []
    labels = params.get("references") or {}
    named = [inputs[t] for t in labels if isinstance(labels, Mapping) and t in inputs]
    return image_inputs({**{str(k): p for k, p in enumerate(named)}, **inputs}, limit)


def reference_note(params: Mapping[str, object], inputs: Mapping[str, Path], used: list[Path]) -> str:
    """`Image 1 is the first frame of this shot; image 2 is the character sheet of X.`: which
    reference is whom, in the order they are sent (empty when none is labelled)."""
    labels = params.get("references") or {}
    if not isinstance(labels, Mapping):
        return ""
    by_path = {inputs[t]: str(label) for t, label in labels.items() if t in inputs}
    said = [f"image {k} is {by_path[p]}" for k, p in enumerate(used, start=1) if p in by_path]
    note = "; ".join(said)
    return note[:1].upper() + note[1:] + "." if said else ""


def with_references(prompt: str, note: str) -> str:
    """The prompt with its reference note after it, when there is one."""
    return f"{prompt}\n{note}" if note else prompt


def input_bytes(path: Path) -> bytes:
    """The bytes of an input file; one that cannot be read is the task's fault (permanent)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise permanent("bad_input", f"bad_input: {path.name} cannot be read: {exc}") from exc


def data_uri(path: Path, *, max_side: int, min_side: int = 1, quality: int = 90) -> str:
    """`path` as `data:image/jpeg;base64,...`, scaled so its sides lie in [min_side, max_side]."""
    try:
        with Image.open(path) as source:
            image = source.convert("RGB")
    except OSError as exc:  # missing file, or not an image
        raise permanent("bad_input", f"bad_input: {path.name} is not a readable image: {exc}") from exc
    scale = min(1.0, max_side / max(image.size))
    scale = max(scale, min_side / min(image.size))
    if scale != 1.0:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
