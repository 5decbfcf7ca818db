"""Checking images that a server sent back before they are accepted as a task's output."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageOps

from pipeline_kit.backends.params import permanent


def decoded(data: bytes) -> Image.Image:
    """The image in `data`, loaded; bytes that are no image are a permanent `bad_output`."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (OSError, Image.DecompressionBombError) as exc:  # UnidentifiedImageError is an OSError
        raise permanent("bad_output", f"bad_output: the server's image does not decode: "
                                      f"{exc}") from exc
    return image


def save_checked_png(data: bytes, size: tuple[int, int], out_path: Path) -> dict[str, int]:
    """Write `data` to `out_path` as PNG if it is an image of exactly `size`.

    Not an image, or the wrong size, is a permanent `bad_output`: the server will answer the
    same request the same way. PNG bytes are written unchanged; other formats are converted.
    """
    image = decoded(data)
    with image:
        if image.size != size:
            raise permanent("bad_output", f"bad_output: asked for {size[0]}x{size[1]}, "
                                          f"server returned {image.width}x{image.height}")
        if image.format == "PNG":
            out_path.write_bytes(data)
        else:
            image.convert("RGB").save(out_path, format="PNG")
    return {"width": size[0], "height": size[1], "bytes": out_path.stat().st_size}


def save_resized_png(data: bytes, size: tuple[int, int], out_path: Path,
                     tolerance: float = 0.02) -> dict[str, int]:
    """Write `data` to `out_path` as PNG of `size`, from an image of the same shape.

    For providers whose smallest image is larger than the task asks for: the answer is scaled
    down. An answer that does not decode, or whose aspect ratio differs from `size` by more than
    `tolerance`, is a permanent `bad_output`.
    """
    image = decoded(data)
    with image:
        wanted, got = size[0] / size[1], image.width / image.height
        if abs(got / wanted - 1) > tolerance:
            raise permanent("bad_output", f"bad_output: asked for the shape of {size[0]}x{size[1]},"
                                          f" server returned {image.width}x{image.height}")
        image.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(out_path, format="PNG")
    return {"width": size[0], "height": size[1], "source_width": image.width,
            "source_height": image.height, "bytes": out_path.stat().st_size}


def save_fitted_png(data: bytes, asked: tuple[int, int], size: tuple[int, int],
                    out_path: Path) -> dict[str, int]:
    """Write `data`, an image of exactly `asked` (a size the provider offers), to `out_path` as a
    PNG of `size`: scaled to cover it and cut to its shape from the centre. An answer that does
    not decode or is not `asked` is a permanent `bad_output`."""
    image = decoded(data)
    with image:
        if image.size != asked:
            raise permanent("bad_output", f"bad_output: asked for {asked[0]}x{asked[1]}, "
                                          f"server returned {image.width}x{image.height}")
        ImageOps.fit(image.convert("RGB"), size, Image.Resampling.LANCZOS).save(
            out_path, format="PNG")
    return {"width": size[0], "height": size[1], "source_width": asked[0],
            "source_height": asked[1], "bytes": out_path.stat().st_size}
