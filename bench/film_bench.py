"""Benchmark chapter assembly: 100 sketch clips of 2-3 s joined into one chapter film.

Clips are made once with the sketch backend and cached under /tmp. Each run assembles the
chapter in a fresh process, so its peak memory is its own: the Python process's max RSS and the
largest ffmpeg child's (RUSAGE_CHILDREN). Reports the median of 3 runs, plain and with burned-in
subtitles (goal: under 30 s and 500 MB), to reports/bench/film.json and film.md.

    python bench/film_bench.py              # 100 shots, 3 runs each
    python bench/film_bench.py --shots 20   # a quick look
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

CACHE = Path(tempfile.gettempdir()) / "pipeline_kit_film_bench"
REPORTS = Path(__file__).resolve().parents[1] / "reports" / "bench"
SIZE, FPS = (640, 360), 12
GOAL_S, GOAL_MB = 30.0, 500.0


def seconds_of(index: int) -> float:
    """A clip length from 2.0 to 3.0 s, varied deterministically."""
    return 2.0 + (index * 7 % 11) / 10


def make_clips(count: int) -> list[Path]:
    """The cached clips, making those not there yet (sketch frames, then the sketch video)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    sketch = get_backend("sketch")
    paths = []
    for index in range(count):
        shot_id = f"bench-c001-s{index + 1:04d}"
        clip = CACHE / f"{shot_id}-{seconds_of(index):.1f}s.mp4"
        if not clip.exists():
            frames = {}
            for kind in ("first_frame", "last_frame"):
                job = Job(
                    task_id=f"{shot_id}/{kind}",
                    kind=kind,
                    lane="image",
                    params={"shot_id": shot_id, "caption": f"Shot {index + 1}", "width": SIZE[0], "height": SIZE[1]},
                    inputs={},
                    out_path=CACHE / f"{shot_id}-{kind}.png",
                )
                sketch.run(job, LocalContext())
                frames[kind] = job.out_path
            part = clip.with_name(f"{clip.stem}.tmp.mp4")
            sketch.run(
                Job(
                    task_id=f"{shot_id}/video",
                    kind="video",
                    lane="video",
                    params={"duration_s": seconds_of(index), "fps": FPS, "width": SIZE[0], "height": SIZE[1]},
                    inputs=frames,
                    out_path=part,
                ),
                LocalContext(),
            )
            part.rename(clip)
        paths.append(clip)
    return paths


def chapter_job(clips: list[Path], out: Path, burn: bool) -> Job:
    """assemble_chapter for the clips, each held for its own length plus a quarter second."""
    ids = [f"bench-c001-s{i + 1:04d}" for i in range(len(clips))]
    shots = [
        {
            "shot_id": shot_id,
            "video_task": f"{shot_id}/video",
            "duration_s": seconds_of(i) + 0.25,
            "subtitle": f"Line {i + 1} of the chapter.",
        }
        for i, shot_id in enumerate(ids)
    ]
    inputs = {f"{shot_id}/video": clip for shot_id, clip in zip(ids, clips)}
    params = {
        "bookcode": "bench",
        "chapter": 1,
        "title": "The Benchmark",
        "shots": shots,
        "width": SIZE[0],
        "height": SIZE[1],
        "fps": FPS,
        "title_card_s": 2.0,
        "burn_subtitles": burn,
        "publish_as": "films/bench/chapter-001.mp4",
    }
    return Job(
        task_id="bench/film/chapter-001",
        kind="assemble_chapter",
        lane="assembly",
        params=params,
        inputs=inputs,
        out_path=out,
    )


def run_once(shots: int, burn: bool) -> dict[str, Any]:
    """One assembly in this process; time and peak memory (this process, largest child)."""
    clips = make_clips(shots)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        job = chapter_job(clips, Path(tmp) / "chapter.mp4.part", burn)
        started = time.perf_counter()
        output = get_backend("assembly").run(job, LocalContext(timeout_s=600))
        seconds = time.perf_counter() - started
        film_mb = job.out_path.stat().st_size / 2**20
        # memory first: reading the film back below starts another ffmpeg
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        frames_read, _ = imageio_ffmpeg.count_frames_and_secs(str(job.out_path))
    return {
        "seconds": seconds,
        "self_mb": own,
        "child_mb": child,
        "peak_upper_mb": own + PROCESSES * child,
        "frames": output.result["frames"],
        "frames_read": frames_read,
        "duration_s": output.result["duration_s"],
        "film_mb": film_mb,
    }


def measure(shots: int, burn: bool, runs: int) -> dict[str, Any]:
    """The median of `runs` fresh-process runs."""
    results = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, __file__, "--one", "--shots", str(shots)] + (["--burn"] if burn else []),
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(done.stdout))
    median = {k: statistics.median(r[k] for r in results) for k in results[0]}
    return {
        "burn_subtitles": burn,
        "runs": results,
        "median": median,
        "meets_goal": median["seconds"] < GOAL_S and median["peak_upper_mb"] < GOAL_MB,
    }


def markdown(report: dict[str, Any]) -> str:
    title = f"# Film assembly benchmark ({report['shots']} shots, {SIZE[0]}x{SIZE[1]} @ {FPS} fps)"
    method = (
        f"Median of {report['runs']} runs, each in a fresh process; goal under {GOAL_S:g} s "
        f"and {GOAL_MB:g} MB. Peak upper bound = Python max RSS + {PROCESSES} x the largest "
        "ffmpeg child (at most that many run at once)."
    )
    header = (
        "| subtitles | seconds | python MB | largest ffmpeg MB | peak upper MB | "
        "film length s | frames (read back) | film MB | goal |"
    )
    lines = [title, "", method, "", header, "|---|---|---|---|---|---|---|---|---|"]
    for case in report["cases"]:
        m = case["median"]
        lines.append(
            f"| {'burned in' if case['burn_subtitles'] else 'side-car only'} | "
            f"{m['seconds']:.1f} | {m['self_mb']:.0f} | {m['child_mb']:.0f} | "
            f"{m['peak_upper_mb']:.0f} | {m['duration_s']:.1f} | "
            f"{m['frames']:.0f} ({m['frames_read']:.0f}) | {m['film_mb']:.1f} | "
            f"{'met' if case['meets_goal'] else 'MISSED'} |"
        )
    before, after = report["load_average"]
    machine = (
        f"Machine: {report['machine']}, {report['cpus']} CPUs (shared), Python "
        f"{report['python']}; 1-minute load average {before} before and {after} after "
        "the runs, so times include waiting for the CPU."
    )
    lines += ["", machine]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--burn", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_once(args.shots, args.burn)))
        return
    started = time.perf_counter()
    make_clips(args.shots)
    print(f"clips ready in {time.perf_counter() - started:.1f} s ({CACHE})", file=sys.stderr)
    load_before = os.getloadavg()[0]
    cases = [measure(args.shots, burn, args.runs) for burn in (False, True)]
    report = {
        "shots": args.shots,
        "runs": args.runs,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "cases": cases,
    }
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "film.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (REPORTS / "film.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


if __name__ == "__main__":
    main()
