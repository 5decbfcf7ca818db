"""Benchmark the film's sound: the offline voice's speed, and what sound costs a chapter's assembly.

1. Offline voice (libespeak-ng): seconds of speech made per CPU second, English and Mandarin,
   each run in a fresh process (the library's start-up included once, as a worker pays it).
2. Assembly of a 100-shot chapter with sound (each shot's speech, a music bed ducked under it)
   against the same chapter without (the silent track today's films had), at the animatic's
   picture (640x360, 12 fps) and at 720p (1280x720, 24 fps, Seedance's), side by side: wall
   seconds and peak memory (the Python process's max RSS plus PROCESSES x the largest ffmpeg
   child's, as the film benchmark counts it), each run in a fresh process.

Medians of several runs; results in reports/bench/sound.json and sound.md. Clips are ffmpeg's
moving test pattern (so encoding costs what a real clip's does), voices espeak's, made once and
cached under /tmp.

    python bench/sound_bench.py                # 100 shots, 3 runs each
    python bench/sound_bench.py --quick        # 20 shots, 1 run: a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import imageio_ffmpeg  # type: ignore[import-untyped]

from pipeline_kit.backends import Job, LocalContext, get_backend
from pipeline_kit.backends.assembly import PROCESSES
from pipeline_kit.film import audio, ffmpeg
from pipeline_kit.film.names import side_path

CACHE = Path(tempfile.gettempdir()) / "pipeline_kit_sound_bench"
REPORTS = Path(__file__).resolve().parents[1] / "reports" / "bench"
PICTURES = {"animatic": (640, 360, 12), "720p": (1280, 720, 24)}
# each shot's line in the assembly runs: short enough (under 1.6 s) that no shot is held longer for
# its speech, so the chapter with sound lasts as long as the one without and only sound differs
SHOT_LINES = ["The lamp is out.", "I saw it.", "There is no ghost.", "Row me across."]
LINES = {
    "en": [
        "The lamp is out. Didn't you see it?",
        "I saw it, and old Hetty will say it is the ghost again.",
        "There is no ghost. There is only a broken wheel or a cracked chimney.",
        "Will you row me across before the tide turns?",
    ],
    "zh": [
        "我进去！我进去！",
        "这股水不知是那里的水。我们今日赶闲无事，顺涧边往上溜头寻看源流耍子去耶！",
        "好水！好水！原来此处远通山脚之下，直接大海之波。",
        "那一个有本事的，钻进去寻个源头出来，不伤身体者，我等即拜他为王。",
    ],
}


def seconds_of(index: int) -> float:
    """A clip length from 2.0 to 3.0 s, varied deterministically."""
    return 2.0 + (index * 7 % 11) / 10


def run_ffmpeg(*args: str) -> None:
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-y", *args], check=True)


def make_clips(count: int, picture: str) -> list[Path]:
    """The cached clips at `picture`: ffmpeg's moving test pattern, H.264 as providers send it."""
    width, height, fps = PICTURES[picture]
    folder = CACHE / picture
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        clip = folder / f"clip-{index:04d}-{seconds_of(index):.1f}s.mp4"
        if not clip.exists():
            source = f"testsrc2=size={width}x{height}:rate={fps}:duration={seconds_of(index)}"
            part = clip.with_name(f"{clip.stem}.tmp.mp4")
            run_ffmpeg(
                "-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", str(part)
            )
            part.rename(clip)
        paths.append(clip)
    return paths


def make_voices(count: int) -> list[Path]:
    """The cached voice outputs (WAV and its lines' timing) the offline voice makes, one a shot."""
    folder = CACHE / "short-voices"
    folder.mkdir(parents=True, exist_ok=True)
    voice = get_backend("espeak")
    paths = []
    for index in range(count):
        wav = folder / f"voice-{index:04d}.wav"
        if not (wav.exists() and side_path(wav, audio.LINES).exists()):
            line = {"text": SHOT_LINES[index % len(SHOT_LINES)], "narration": index % 3 == 0, "gender": "female"}
            job = Job(
                task_id=f"v{index}",
                kind="voice",
                lane="voice",
                params={"lang": "en", "lines": [line]},
                inputs={},
                out_path=wav,
            )
            output = voice.run(job, LocalContext())
            output.extras[audio.LINES].rename(side_path(wav, audio.LINES))
        paths.append(wav)
    return paths


def make_bed() -> Path:
    """A 40-second music bed (two tones and a beat), made as `film --music` makes one."""
    bed = CACHE / "bed.m4a"
    if not bed.exists():
        source = CACHE / "music.wav"
        tones = [arg for hz in (220, 330) for arg in ("-f", "lavfi", "-i", f"sine=frequency={hz}:duration=40")]
        run_ffmpeg(*tones, "-filter_complex", "amix=inputs=2,volume=0.5", str(source))
        ffmpeg.music_bed(source, bed, timeout_s=120)
    return bed


# -- 1. the offline voice -------------------------------------------------------------------
def voice_once(lang: str, repeat: int) -> dict[str, float]:
    """Speak the language's lines `repeat` times in this process: speech seconds, CPU seconds."""
    from pipeline_kit.backends import espeak

    started_cpu, started = time.process_time(), time.perf_counter()
    said = 0.0
    voice = "cmn" if lang == "zh" else "en"
    for _ in range(repeat):
        for line in LINES[lang]:
            speech = espeak.speak(line, voice)
            said += len(speech.pcm) / 2 / speech.rate
    cpu, wall = time.process_time() - started_cpu, time.perf_counter() - started
    return {"speech_s": said, "cpu_s": cpu, "wall_s": wall, "per_cpu_s": said / cpu}


# -- 2. assembly with and without sound -------------------------------------------------------
def chapter_job(shots: int, picture: str, sound: bool, out: Path) -> Job:
    clips = make_clips(shots, picture)
    voices = make_voices(shots) if sound else []
    ids = [f"bench-c001-s{i + 1:04d}" for i in range(shots)]
    entries = [
        {"shot_id": s, "video_task": f"{s}/video", "duration_s": seconds_of(i), "subtitles": [f"Line {i + 1}."]}
        | ({"voice_task": f"{s}/voice"} if sound else {})
        for i, s in enumerate(ids)
    ]
    inputs = {f"{s}/video": c for s, c in zip(ids, clips)} | {f"{s}/voice": v for s, v in zip(ids, voices)}
    width, height, fps = PICTURES[picture]
    params: dict[str, Any] = {
        "bookcode": "bench",
        "chapter": 1,
        "title": "The Benchmark",
        "shots": entries,
        "profile": picture,
        "width": width,
        "height": height,
        "fps": fps,
        "title_card_s": 2.0,
    }
    if sound:
        inputs["bench/music"] = make_bed()
        params["music_task"] = "bench/music"
    return Job(
        task_id="bench/film/chapter-001",
        kind="assemble_chapter",
        lane="assembly",
        params=params,
        inputs=inputs,
        out_path=out,
    )


def assemble_once(shots: int, picture: str, sound: bool) -> dict[str, Any]:
    """One assembly in this process: wall seconds and peak memory."""
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        job = chapter_job(shots, picture, sound, Path(tmp) / "chapter.mp4")
        started = time.perf_counter()
        output = get_backend("assembly").run(job, LocalContext(timeout_s=1800))
        seconds = time.perf_counter() - started
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "seconds": seconds,
        "self_mb": own,
        "child_mb": child,
        "peak_upper_mb": own + PROCESSES * child,
        "film_s": output.result["duration_s"],
        "voiced_shots": output.result["voiced_shots"],
    }


def fresh(*args: str) -> dict[str, Any]:
    """This script with `args` in a fresh process; its one JSON line."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def median_of(results: list[dict[str, Any]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in results) for k in results[0]}


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Sound benchmark ({report['shots']} shots, median of {report['runs']} runs, each in a fresh process)",
        "",
        "## Offline voice (libespeak-ng)",
        "",
        "| language | speech made s | CPU s | speech s per CPU s | wall s |",
        "|---|---|---|---|---|",
    ]
    for lang, case in report["voice"].items():
        m = case["median"]
        lines.append(f"| {lang} | {m['speech_s']:.1f} | {m['cpu_s']:.2f} | {m['per_cpu_s']:.1f} | {m['wall_s']:.2f} |")
    lines += [
        "",
        "## Chapter assembly with sound (speech and a ducked music bed) against without",
        "",
        "| picture | sound | wall s | python MB | largest ffmpeg MB | peak upper MB | film s | with / without |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for picture, cases in report["assembly"].items():
        plain = cases["without"]["median"]["seconds"]
        for sound in ("without", "with"):
            m = cases[sound]["median"]
            lines.append(
                f"| {picture} | {sound} | {m['seconds']:.1f} | {m['self_mb']:.0f} | {m['child_mb']:.0f} | "
                f"{m['peak_upper_mb']:.0f} | {m['film_s']:.0f} | {m['seconds'] / plain:.2f} |"
            )
    before, after = report["load_average"]
    lines += [
        "",
        f"Machine: {report['machine']}, {report['cpus']} CPUs (shared), Python {report['python']}; 1-minute load "
        f"average {before} before and {after} after the runs (times include waiting for the CPU). The two cases "
        "of a picture run alternately, so each pair saw the same load.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 shots, 1 run")
    parser.add_argument("--voice", help=argparse.SUPPRESS)  # one voice run: LANG
    parser.add_argument("--assemble", help=argparse.SUPPRESS)  # one assembly run: PICTURE:with|without
    args = parser.parse_args()
    if args.quick:
        args.shots, args.runs = 20, 1
    if args.voice:
        print(json.dumps(voice_once(args.voice, repeat=5)))
        return
    if args.assemble:
        picture, sound = args.assemble.split(":")
        print(json.dumps(assemble_once(args.shots, picture, sound == "with")))
        return
    started = time.perf_counter()
    for picture in PICTURES:
        make_clips(args.shots, picture)
    make_voices(args.shots)
    make_bed()
    print(f"inputs ready in {time.perf_counter() - started:.1f} s ({CACHE})", file=sys.stderr)
    load_before = os.getloadavg()[0]
    voice: dict[str, Any] = {}
    for lang in LINES:
        results = [fresh("--voice", lang) for _ in range(args.runs)]
        voice[lang] = {"median": median_of(results), "runs": results}
    assembly: dict[str, dict[str, Any]] = {}
    for picture in PICTURES:
        runs: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
        for _ in range(args.runs):  # alternate, so both cases see the same load
            for sound in runs:
                runs[sound].append(fresh("--shots", str(args.shots), "--assemble", f"{picture}:{sound}"))
        assembly[picture] = {sound: {"median": median_of(results), "runs": results} for sound, results in runs.items()}
    report = {
        "shots": args.shots,
        "runs": args.runs,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "voice": voice,
        "assembly": assembly,
    }
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "sound.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (REPORTS / "sound.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


if __name__ == "__main__":
    main()
