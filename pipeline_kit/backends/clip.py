"""MP4 clips from a first and a last frame: a cross-fade under a slow pan and zoom.

Written with the ffmpeg binary that imageio-ffmpeg ships (libx264, yuv420p, so width and
height must be even), with bit-exact flags so the same frames give the same file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import imageio_ffmpeg  # type: ignore[import-untyped]
from PIL import Image

from pipeline_kit.backends.params import permanent

ZOOM = 0.08        # the view narrows by this fraction of the frame over the clip
PAN = 0.04         # and slides sideways by this fraction of the width


def load_frame(path: Path | None, role: str, size: tuple[int, int]) -> Image.Image:
    """An input frame as RGB of `size`; missing or unreadable -> permanent error."""
    if path is None:
        raise permanent("missing_input", f"video needs the {role} image in inputs[{role!r}]")
    try:
        with Image.open(path) as image:
            frame = image.convert("RGB")
    except OSError as exc:
        raise permanent("bad_input", f"inputs[{role!r}] is not a readable image: {exc}") from exc
    return frame if frame.size == size else frame.resize(size, Image.Resampling.BILINEAR)


def _smooth(t: float) -> float:
    return t * t * (3 - 2 * t)


def frames(first: Image.Image, last: Image.Image, count: int,
           pan_right: bool) -> Iterator[bytes]:
    """`count` RGB frames (raw bytes) moving from `first` to `last`, made one at a time."""
    width, height = first.size
    for index in range(count):
        t = index / (count - 1) if count > 1 else 0.0
        mixed = Image.blend(first, last, _smooth(t))
        zoom = 1.0 - ZOOM * t
        view_w, view_h = width * zoom, height * zoom
        shift = (width - view_w) / 2 + (PAN * width * (t - 0.5) * (1 if pan_right else -1))
        left = min(max(0.0, shift), width - view_w)
        top = (height - view_h) / 2
        box = (left, top, left + view_w, top + view_h)
        yield mixed.resize((width, height), Image.Resampling.BILINEAR, box=box).tobytes()


def write_mp4(path: Path, frame_bytes: Iterable[bytes], size: tuple[int, int], fps: int) -> None:
    """Encode raw RGB frames to an H.264 MP4 at `path`."""
    writer = imageio_ffmpeg.write_frames(
        str(path), size, fps=fps, codec="libx264", pix_fmt_out="yuv420p", quality=None,
        macro_block_size=1, ffmpeg_log_level="error",
        output_params=["-preset", "veryfast", "-crf", "23", "-map_metadata", "-1",
                       "-fflags", "+bitexact", "-flags:v", "+bitexact"])
    writer.send(None)  # start the ffmpeg process
    try:
        for frame in frame_bytes:
            writer.send(frame)
    finally:
        writer.close()
