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
        raise permanent("bad_output", f"bad_output: the server's image does not decode: {exc}") from exc
    return image


def save_checked_png(data: bytes, size: tuple[int, int], out_path: Path) -> dict[str, int]:
    """Write `data` to `out_path` as PNG if it is an image of exactly `size`.

    Not an image, or the wrong size, is a permanent `bad_output`: the server will answer the
    same request the same way. PNG bytes are written unchanged; other formats are converted.
    """
    image = decoded(data)
    with image:
        if image.size != size:
            raise permanent(
                "bad_output", f"bad_output: asked for {size[0]}x{size[1]}, server returned {image.width}x{image.height}"
            )
        if image.format == "PNG":
            out_path.write_bytes(data)
        else:
            image.convert("RGB").save(out_path, format="PNG")
    return {"width": size[0], "height": size[1], "bytes": out_path.stat().st_size}


def save_kept_png(data: bytes, size: tuple[int, int], out_path: Path, tolerance: float = 0.02) -> dict[str, int]:
    """Write `data` to `out_path` as a PNG as the provider drew it, if it has the shape of `size`.

    For providers that draw larger than the task asks for (a model's smallest image, a user's
    workflow): the picture is never shrunk on the way, the film scales it. An answer that does
    not decode, or whose aspect ratio differs from `size` by more than `tolerance`, is a
    permanent `bad_output`.
    """
    image = decoded(data)
    with image:
        wanted, got = size[0] / size[1], image.width / image.height
        if abs(got / wanted - 1) > tolerance:
            raise permanent(
                "bad_output",
                f"bad_output: asked for the shape of {size[0]}x{size[1]}, server returned {image.width}x{image.height}",
            )
        if image.format == "PNG":
            out_path.write_bytes(data)
        else:
            image.convert("RGB").save(out_path, format="PNG")
    return {
        "width": image.width,
        "height": image.height,
        "asked_width": size[0],
        "asked_height": size[1],
        "bytes": out_path.stat().st_size,
    }


def save_fitted_png(data: bytes, asked: tuple[int, int], size: tuple[int, int], out_path: Path) -> dict[str, int]:
    """Write `data`, an image of exactly `asked` (a size the provider offers), to `out_path` as a
    PNG of the shape of `size`: the largest centred part of that shape, at the provider's scale
    (never shrunk). An answer that does not decode or is not `asked` is a permanent `bad_output`."""
    image = decoded(data)
    with image:
        if image.size != asked:
            raise permanent(
                "bad_output",
                f"bad_output: asked for {asked[0]}x{asked[1]}, server returned {image.width}x{image.height}",
            )
        scale = min(asked[0] / size[0], asked[1] / size[1])
        cut = (min(asked[0], round(size[0] * scale)), min(asked[1], round(size[1] * scale)))
        ImageOps.fit(image.convert("RGB"), cut, Image.Resampling.LANCZOS).save(out_path, format="PNG")
    return {
        "width": cut[0],
        "height": cut[1],
        "asked_width": size[0],
        "asked_height": size[1],
        "source_width": asked[0],
        "source_height": asked[1],
        "bytes": out_path.stat().st_size,
    }
