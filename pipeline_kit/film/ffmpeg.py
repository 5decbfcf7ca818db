"""The ffmpeg calls behind film assembly: probe a file, encode parts into a segment, join segments,
mix a film's sound track (speech, clips' own sound, a music bed ducked under them), make a music bed.

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
ENCODE = (
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-crf",
    "23",
    "-bf",
    "0",
    "-pix_fmt",
    "yuv420p",
    "-threads",
    "2",
    "-map_metadata",
    "-1",
    "-fflags",
    "+bitexact",
    "-flags:v",
    "+bitexact",
)

_DURATION = re.compile(r"Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)")
_VIDEO = re.compile(r"Stream #\S+.*?: Video: (\w+).*?, (\d{2,5})x(\d{2,5})[ ,]")
_FPS = re.compile(r"([\d.]+) fps")
_AUDIO = re.compile(r"Stream #\S+.*?: Audio: ")
RATE = 48000  # the films' sound: 48 kHz stereo AAC
LOUDNESS = "loudnorm=I=-23:TP=-2:LRA=7"  # EBU R128: -23 LUFS integrated, true peak under -2 dBTP
BED_LOUDNESS = "loudnorm=I=-30:TP=-8:LRA=11"  # a music bed, well under speech before the film's own level
# the music bed gives way to speech: compressed by up to 8:1 while the speech (the sidechain) is louder
# than about -34 dBFS, within 20 ms, and back over 400 ms once it stops
DUCKING = "sidechaincompress=threshold=0.02:ratio=8:attack=20:release=400:makeup=1"
MUSIC_FADE_S = 1.5
AAC = ("-c:a", "aac", "-b:a", "128k", "-ar", str(RATE), "-ac", "2")


@dataclass(frozen=True)
class Probe:
    """What the container header says about a video file."""

    codec: str
    width: int
    height: int
    fps: float
    duration_s: float
    audio: bool = False  # the file carries a sound stream too


def exe() -> str:
    """The ffmpeg binary shipped with imageio-ffmpeg."""
    return str(imageio_ffmpeg.get_ffmpeg_exe())


def run(args: Sequence[str], *, timeout_s: float, what: str) -> str:
    """Run ffmpeg quietly and return what it wrote to stdout; a failure raises GenerationError
    naming `what` and ffmpeg's reason."""
    command = [exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise GenerationError(
            f"ffmpeg took over {timeout_s:g} s on {what}", error_kind="timeout", retryable=True
        ) from None
    if done.returncode != 0:
        raise GenerationError(
            f"ffmpeg failed on {what}: {last_line(done.stderr)}", error_kind="ffmpeg_failed", retryable=True
        )
    return done.stdout


def video_frames(path: Path, *, timeout_s: float, what: str) -> int:
    """How many frames the first video stream of `path` holds, counted by copying its packets (no
    decoding: a tenth of a second for a chapter film). A header's duration is its longest
    stream's, and a film's AAC track ends up to a frame after its picture: a length taken from it
    put each later chapter's sound and subtitles that much after its picture in the book film."""
    progress = run(
        ["-i", str(path), "-map", "0:v:0", "-c", "copy", "-f", "null", "-", "-progress", "pipe:1"],
        timeout_s=timeout_s,
        what=what,
    )
    counted = re.findall(r"^frame=(\d+)$", progress, flags=re.MULTILINE)
    if not counted:
        raise GenerationError(f"ffmpeg counted no frames in {what}", error_kind="ffmpeg_failed", retryable=True)
    return int(counted[-1])


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
        done = subprocess.run(
            [exe(), "-hide_banner", "-nostdin", *inputs], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        what = paths[0] if len(paths) == 1 else f"{len(paths)} files"
        raise GenerationError(
            f"ffmpeg took over {timeout_s:g} s reading {what}", error_kind="timeout", retryable=True
        ) from None
    return done.stderr


def audio_seconds(path: Path, *, timeout_s: float) -> float:
    """How long the sound of `path` lasts; a file ffmpeg cannot read, or without a sound stream
    (or of no length), -> ValueError naming why."""
    log = _headers([path], timeout_s)
    duration = _DURATION.search(log)
    if _AUDIO.search(log) is None or duration is None:
        raise ValueError(last_line(log) or "no sound stream")
    hours, minutes, seconds = duration.groups()
    total = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    if total <= 0:
        raise ValueError("the sound lasts no time")
    return total


def music_bed(source: Path, out: Path, *, timeout_s: float) -> None:
    """`source`'s sound as a music bed: 48 kHz stereo AAC in an .m4a at `out`, brought to BED_LOUDNESS
    so that any file the user names sits at the same level under the speech."""
    run(
        ["-vn", "-i", str(source), "-map", "0:a:0", "-af", f"{BED_LOUDNESS},aresample={RATE}", *AAC]
        + ["-map_metadata", "-1", "-f", "mp4", str(out)],
        timeout_s=timeout_s,
        what=f"the music {source.name}",
    )


def _parse(log: str) -> Probe:
    """One input's header lines -> Probe; without a video stream or duration -> ValueError."""
    video, duration = _VIDEO.search(log), _DURATION.search(log)
    if video is None or duration is None:
        raise ValueError(last_line(log) or "no video stream")
    rate = _FPS.search(log[video.start() :])
    hours, minutes, seconds = duration.groups()
    return Probe(
        codec=video.group(1),
        width=int(video.group(2)),
        height=int(video.group(3)),
        fps=float(rate.group(1)) if rate else 0.0,
        duration_s=int(hours) * 3600 + int(minutes) * 60 + float(seconds),
        audio=_AUDIO.search(log) is not None,
    )


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
    return (
        f"fps={fps},scale={width}:{height}:force_original_aspect_ratio=decrease,"
        f"pad={width}:{height}:(ow-iw)/2:(oh-ih)/2:color=black,setsar=1"
    )


def encode(
    parts: Sequence[Part],
    out: Path,
    *,
    width: int,
    height: int,
    fps: int,
    thumb_width: int,
    timeout_s: float,
    what: str,
) -> None:
    """Encode `parts` one after another into one MP4 segment, in a single ffmpeg run.

    One run for many parts saves a process and an encoder start per shot; each input decodes
    on one thread, so memory grows by a few MB per part (callers keep batches small).
    """
    inputs: list[str] = []
    graph: list[str] = []
    thumbs: list[str] = []
    index = 0  # ffmpeg's number of the next input
    for i, part in enumerate(parts):
        inputs += (
            ["-loop", "1", "-framerate", str(fps), "-i", str(part.source)]
            if part.still
            else ["-threads", "1", "-i", str(part.source)]
        )
        chain = f"[{index}:v]{fit_filter(width, height, fps)},tpad=stop_mode=clone:stop=-1"
        if part.thumb is not None:
            graph.append(f"{chain},split=2[p{i}][t{i}]")
            graph.append(f"[t{i}]trim=end_frame=1,scale={thumb_width}:-2[th{i}]")
            thumbs += ["-map", f"[th{i}]", "-frames:v", "1", "-update", "1", str(part.thumb)]
            chain = f"[p{i}]null"
        for k, (overlay, first, end) in enumerate(part.overlays, start=1):
            inputs += ["-i", str(overlay)]
            graph.append(f"{chain}[b{i}x{k}]")
            chain = f"[b{i}x{k}][{index + k}:v]overlay=0:0:enable='between(n,{first},{end - 1})'"
        graph.append(f"{chain},trim=end_frame={part.frames},setpts=PTS-STARTPTS[s{i}]")
        index += 1 + len(part.overlays)
    joined = "".join(f"[s{i}]" for i in range(len(parts)))
    graph.append(f"{joined}concat=n={len(parts)}:v=1:a=0,format=yuv420p[v]")
    run(
        [
            *inputs,
            "-filter_complex",
            ";".join(graph),
            "-map",
            "[v]",
            *ENCODE,
            "-r",
            str(fps),
            "-video_track_timescale",
            str(fps * 1000),
            "-f",
            "mp4",
            str(out),
            *thumbs,
        ],
        timeout_s=timeout_s,
        what=what,
    )


@dataclass(frozen=True)
class Sound:
    """A piece of a sound track: `seconds` long, the audio of `sources` mixed from its start
    (none: silence), cut or padded with silence to its length."""

    seconds: float
    sources: tuple[Path, ...] = ()


def mix_audio(
    pieces: Sequence[Sound],
    out: Path,
    *,
    timeout_s: float,
    what: str,
    music: Path | None = None,
    normalise: bool = True,
) -> None:
    """One sound track of `pieces` one after another, over `music` (looped to the track's length,
    faded in and out, ducked under the pieces' sound by a sidechain compressor), loudness-
    normalised (EBU R128; `normalise=False` for pieces that are already, such as chapter films:
    joined, they stay at their level, and loudnorm is most of a long mix's cost), as AAC in an
    .m4a at `out`, in a single ffmpeg run; its length is the sum of the pieces'. The sources are
    read for their sound only (a clip's picture is never decoded here)."""
    inputs: list[str] = []
    graph: list[str] = []
    index = 0
    fit = f"aresample={RATE},aformat=sample_fmts=fltp:channel_layouts=stereo"
    for i, piece in enumerate(pieces):
        end = f"{piece.seconds:.6f}"
        if not piece.sources:
            graph.append(f"aevalsrc=0|0:c=stereo:s={RATE}:d={end}[p{i}]")
            continue
        names = []
        for source in piece.sources:
            inputs += ["-vn", "-i", str(source)]
            graph.append(f"[{index}:a]{fit}[i{index}]")
            names.append(f"[i{index}]")
            index += 1
        mixed = (
            f"{''.join(names)}amix=inputs={len(names)}:duration=longest:normalize=0,"
            if len(names) > 1
            else (f"{names[0]}anull,")
        )
        graph.append(f"{mixed}apad=whole_dur={end},atrim=end={end},asetpts=N/SR/TB[p{i}]")
    joined = "".join(f"[p{i}]" for i in range(len(pieces)))
    graph.append(f"{joined}concat=n={len(pieces)}:v=0:a=1[said]")
    track = "[said]"
    if music is not None:
        total = sum(piece.seconds for piece in pieces)
        fade = min(MUSIC_FADE_S, total / 4)
        inputs += ["-stream_loop", "-1", "-vn", "-i", str(music)]
        graph.append(
            f"[{index}:a]{fit},atrim=end={total:.6f},asetpts=N/SR/TB,afade=t=in:d={fade:.3f},"
            f"afade=t=out:st={total - fade:.6f}:d={fade:.3f}[bed]"
        )
        graph.append(f"[said]asplit=2[over][key];[bed][key]{DUCKING}[ducked]")
        graph.append("[over][ducked]amix=inputs=2:duration=first:normalize=0[mixed]")
        track, index = "[mixed]", index + 1
    # loudnorm turns a track of pure silence into NaN, which the encoder refuses: silence stays as it is
    level = f"{LOUDNESS}," if index and normalise else ""
    graph.append(f"{track}{level}{fit}[a]")
    run(
        [
            *inputs,
            "-filter_complex",
            ";".join(graph),
            "-map",
            "[a]",
            *AAC,
            "-map_metadata",
            "-1",
            "-f",
            "mp4",
            str(out),
        ],
        timeout_s=timeout_s,
        what=what,
    )


def concat(
    parts: Sequence[Path], out: Path, *, list_path: Path, timeout_s: float, what: str, audio: Path | None = None
) -> None:
    """Join segments encoded alike into one MP4 at `out` by copying their packets, with the sound
    track `audio` (an .m4a of the same length) beside the picture."""
    lines = ["ffconcat version 1.0"] + [f"file '{_quoted(p)}'" for p in parts]
    list_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sound = ["-i", str(audio)] if audio is not None else []
    run(
        [
            "-f",
            "concat",
            "-safe",
            "0",
            "-i",
            str(list_path),
            *sound,
            "-map",
            "0:v",
            *(["-map", "1:a"] if audio is not None else []),
            "-c",
            "copy",
            "-movflags",
            "+faststart",
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            "-f",
            "mp4",
            str(out),
        ],
        timeout_s=timeout_s,
        what=what,
    )


def last_line(log: str) -> str:
    """The last non-empty line of an ffmpeg log: usually the reason it gave up."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _quoted(path: Path) -> str:
    return str(path.resolve()).replace("'", "'\\''")
