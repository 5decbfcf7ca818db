"""Checking images that a server sent back before they are accepted as a task's output."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from pipeline_kit.backends.params import permanent


def save_checked_png(data: bytes, size: tuple[int, int], out_path: Path) -> dict[str, int]:
    """Write `data` to `out_path` as PNG if it is an image of exactly `size`.

    Not an image, or the wrong size, is a permanent `bad_output`: the server will answer the
    same request the same way. PNG bytes are written unchanged; other formats are converted.
    """
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (OSError, Image.DecompressionBombError) as exc:  # UnidentifiedImageError is an OSError
        raise permanent("bad_output", f"bad_output: the server's image does not decode: "
                                      f"{exc}") from exc
    with image:
        if image.size != size:
            raise permanent("bad_output", f"bad_output: asked for {size[0]}x{size[1]}, "
                                          f"server returned {image.width}x{image.height}")
        if image.format == "PNG":
            out_path.write_bytes(data)
        else:
            image.convert("RGB").save(out_path, format="PNG")
    return {"width": size[0], "height": size[1], "bytes": out_path.stat().st_size}
