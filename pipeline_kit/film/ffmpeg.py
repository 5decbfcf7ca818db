"""The ffmpeg calls behind film assembly: probe a file, encode parts into a segment, join segments.

Uses the binary imageio-ffmpeg ships (never a system ffmpeg). Every segment is encoded with the
same H.264 settings, so the concat demuxer can join them by copying packets. Decoding, scaling,
holding and encoding all happen inside ffmpeg: no frame ever passes through Python.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import imageio_ffmpeg  # type: ignore[import-untyped]

from pipeline_kit.errors import GenerationError

# One encoder setting for every segment: concat by copy needs identical streams. No B-frames,
# so each segment's timestamps start at zero and joins stay frame-exact.
ENCODE = ("-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-bf", "0",
          "-pix_fmt", "yuv420p", "-threads", "2", "-map_metadata", "-1",
          "-fflags", "+bitexact", "-flags:v", "+bitexact")

_DURATION = re.compile(r"Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)")
_VIDEO = re.compile(r"Stream #\S+.*?: Video: (\w+).*?, (\d{2,5})x(\d{2,5})[ ,]")
_FPS = re.compile(r"([\d.]+) fps")


@dataclass(frozen=True)
class Probe:
    """What the container header says about a video file."""

    codec: str
    width: int
    height: int
    fps: float
    duration_s: float


def exe() -> str:
    """The ffmpeg binary shipped with imageio-ffmpeg."""
    return str(imageio_ffmpeg.get_ffmpeg_exe())


def run(args: Sequence[str], *, timeout_s: float, what: str) -> None:
    """Run ffmpeg quietly; a failure raises GenerationError naming `what` and ffmpeg's reason."""
    command = [exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                              check=False)
    except subprocess.TimeoutExpired:
        raise GenerationError(f"ffmpeg took over {timeout_s:g} s on {what}",
                              error_kind="timeout", retryable=True) from None
    if done.returncode != 0:
        raise GenerationError(f"ffmpeg failed on {what}: {last_line(done.stderr)}",
                              error_kind="ffmpeg_failed", retryable=True)


def probe(path: Path, *, timeout_s: float) -> Probe:
    """Read the header of `path`; unreadable or without a video stream -> ValueError."""
    return _parse(_headers([path], timeout_s))


def probe_all(paths: Sequence[Path], *, timeout_s: float) -> list[Probe | None]:
    """The headers of many files read by one ffmpeg run (one process start, not one a file);
    None for a file it could not read, and for every file after it (ffmpeg stops there)."""
    log = _headers(paths, timeout_s)
    sections = dict(zip(*[iter(re.split(r"^Input #(\d+), ", log, flags=re.MULTILINE)[1:])] * 2))
    found: list[Probe | None] = []
    for index in range(len(paths)):
        try:
            found.append(_parse(sections.get(str(index), "")))
        except ValueError:
            found.append(None)
    return found


def _headers(paths: Sequence[Path], timeout_s: float) -> str:
    """What ffmpeg prints about `paths` as inputs (it stops at the first it cannot read)."""
    inputs = [arg for path in paths for arg in ("-i", str(path))]
    try:
        done = subprocess.run([exe(), "-hide_banner", "-nostdin", *inputs],
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        what = paths[0] if len(paths) == 1 else f"{len(paths)} files"
        raise GenerationError(f"ffmpeg took over {timeout_s:g} s reading {what}",
                              error_kind="timeout", retryable=True) from None
    return done.stderr


def _parse(log: str) -> Probe:
    """One input's header lines -> Probe; without a video stream or duration -> ValueError."""
    video, duration = _VIDEO.search(log), _DURATION.search(log)
    if video is None or duration is None:
        raise ValueError(last_line(log) or "no video stream")
    rate = _FPS.search(log[video.start():])
    hours, minutes, seconds = duration.groups()
    return Probe(codec=video.group(1), width=int(video.group(2)), height=int(video.group(3)),
                 fps=float(rate.group(1)) if rate else 0.0,
                 duration_s=int(hours) * 3600 + int(minutes) * 60 + float(seconds))


@dataclass(frozen=True)
class Part:
    """A piece of a film: `frames` frames of `source`, normalised, held on its last frame if short.

    `still` reads `source` as one image (a title card); each of `overlays` is an RGBA image
    laid over the part's frames first to end - 1 (a burned-in subtitle); `thumb` receives the
    first frame, before any overlay.
    """

    source: Path
    frames: int
    still: bool = False
    overlays: tuple[tuple[Path, int, int], ...] = ()
    thumb: Path | None = None


def fit_filter(width: int, height: int, fps: int) -> str:
    """Scale into width x height keeping the aspect (black bars), at a constant `fps`."""
    return (f"fps={fps},scale={width}:{height}:force_original_aspect_ratio=decrease,"
            f"pad={width}:{height}:(ow-iw)/2:(oh-ih)/2:color=black,setsar=1")


def encode(parts: Sequence[Part], out: Path, *, width: int, height: int, fps: int,
           thumb_width: int, timeout_s: float, what: str) -> None:
    """Encode `parts` one after another into one MP4 segment, in a single ffmpeg run.

    One run for many parts saves a process and an encoder start per shot; each input decodes
    on one thread, so memory grows by a few MB per part (callers keep batches small).
    """
    inputs: list[str] = []
    graph: list[str] = []
    thumbs: list[str] = []
    index = 0  # ffmpeg's number of the next input
    for i, part in enumerate(parts):
        inputs += (["-loop", "1", "-framerate", str(fps), "-i", str(part.source)] if part.still
                   else ["-threads", "1", "-i", str(part.source)])
        chain = f"[{index}:v]{fit_filter(width, height, fps)},tpad=stop_mode=clone:stop=-1"
        if part.thumb is not None:
            graph.append(f"{chain},split=2[p{i}][t{i}]")
            graph.append(f"[t{i}]trim=end_frame=1,scale={thumb_width}:-2[th{i}]")
            thumbs += ["-map", f"[th{i}]", "-frames:v", "1", "-update", "1", str(part.thumb)]
            chain = f"[p{i}]null"
        for k, (overlay, first, end) in enumerate(part.overlays, start=1):
            inputs += ["-i", str(overlay)]
            graph.append(f"{chain}[b{i}x{k}]")
            chain = (f"[b{i}x{k}][{index + k}:v]overlay=0:0:"
                     f"enable='between(n,{first},{end - 1})'")
        graph.append(f"{chain},trim=end_frame={part.frames},setpts=PTS-STARTPTS[s{i}]")
        index += 1 + len(part.overlays)
    joined = "".join(f"[s{i}]" for i in range(len(parts)))
    graph.append(f"{joined}concat=n={len(parts)}:v=1:a=0,format=yuv420p[v]")
    run([*inputs, "-filter_complex", ";".join(graph), "-map", "[v]", *ENCODE, "-r", str(fps),
         "-video_track_timescale", str(fps * 1000), "-f", "mp4", str(out), *thumbs],
        timeout_s=timeout_s, what=what)


def concat(parts: Sequence[Path], out: Path, *, list_path: Path, timeout_s: float,
           what: str) -> None:
    """Join segments encoded alike into one MP4 at `out` by copying their packets."""
    lines = ["ffconcat version 1.0"] + [f"file '{_quoted(p)}'" for p in parts]
    list_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run(["-f", "concat", "-safe", "0", "-i", str(list_path), "-map", "0:v", "-c", "copy",
         "-movflags", "+faststart", "-map_metadata", "-1", "-fflags", "+bitexact",
         "-f", "mp4", str(out)], timeout_s=timeout_s, what=what)


def last_line(log: str) -> str:
    """The last non-empty line of an ffmpeg log: usually the reason it gave up."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _quoted(path: Path) -> str:
    return str(path.resolve()).replace("'", "'\\''")
