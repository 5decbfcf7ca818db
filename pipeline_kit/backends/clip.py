"""MP4 clips: input frames loaded, a hard cut between two frames, and frames encoded to MP4.

Written with the ffmpeg binary that imageio-ffmpeg ships (libx264, yuv420p, so width and
height must be even), with bit-exact flags so the same frames give the same file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import imageio_ffmpeg  # type: ignore[import-untyped]
from PIL import Image

from pipeline_kit.backends.params import permanent


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


def cut(first: Image.Image, last: Image.Image, count: int) -> Iterator[Image.Image]:
    """`count` pictures: the first frame held for the first half, then the last frame.

    For frames the sketch backend cannot redraw (another backend's): a hard cut, never a blend
    of two pictures, and no zoom that would crop what is written at their edges.
    """
    for index in range(count):
        yield first if index < (count + 1) // 2 else last


def write_mp4(path: Path, pictures: Iterable[Image.Image], size: tuple[int, int], fps: int) -> None:
    """Encode RGB pictures of `size`, made one at a time, to an H.264 MP4 at `path`."""
    writer = imageio_ffmpeg.write_frames(
        str(path),
        size,
        fps=fps,
        codec="libx264",
        pix_fmt_out="yuv420p",
        quality=None,
        macro_block_size=1,
        ffmpeg_log_level="error",
        output_params=[
            "-preset",
            "veryfast",
            "-crf",
            "23",
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            "-flags:v",
            "+bitexact",
        ],
    )
    writer.send(None)  # start the ffmpeg process
    try:
        for picture in pictures:
            writer.send(picture.tobytes())
    finally:
        writer.close()


def clip_seconds(path: Path) -> tuple[int, float]:
    """(frames, seconds) of the video at `path`, read by decoding it; one that does not decode is
    a permanent `bad_output`."""
    try:
        frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(path))
    except (RuntimeError, OSError) as exc:
        raise permanent("bad_output", f"bad_output: the clip does not decode: {exc}") from exc
    return int(frames), float(seconds)


def save_checked_mp4(data: bytes, out_path: Path) -> dict[str, float]:
    """Write `data` to `out_path` if it is an MP4 that decodes: its frames, real length, bytes.

    A provider may return another length than asked for; the real one is what assembly uses.
    """
    if data[4:8] != b"ftyp":
        raise permanent("bad_output", "bad_output: the video is not an MP4")
    out_path.write_bytes(data)
    frames, seconds = clip_seconds(out_path)
    return {"frames": frames, "duration_s": seconds, "bytes": len(data)}
