"""Benchmark the storyboard screen: a book of about 1,000 shots with every frame drawn opens its
first page in under 2 s, with this PC's thumbnail cache cold (a PC that never showed the book:
thumbnails fetched through the store) and warm (seen before).

The book is the sample book's chapters repeated until the split gives the shots asked for; every
character sheet and frame is a distinct 1280x720 PNG published into the database store with its
thumbnail beside it, as a worker on another PC does (clips wait for a worker); `--frames-only`
publishes the frames alone, as workers did before they made thumbnails, so the screen draws them.
Each run opens the screen as 02_storyboard does (the book list, then the book's screen: filters,
the first page's cards, the editor's shot and the review queue) in a fresh process inside an event
loop, as a kernel runs it: timed from connecting to the database to the page shown, and to its
last thumbnail in (thumbnails this PC lacks come after the page shows); then presses Next, timed
alike. Reports the median of the runs to reports/bench/storyboard_DATABASE[_frames_only].json
and .md (sqlite, postgresql, mysql).

    python bench/storyboard_bench.py                 # 1,000 shots, SQLite, 5 runs each
    python bench/storyboard_bench.py --shots 200 --runs 3
    python bench/storyboard_bench.py --db postgresql://root@127.0.0.1:5432/scratch   # an EMPTY database
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

REPORTS = Path(__file__).resolve().parents[1] / "reports" / "bench"
GOAL_S = 2.0
FRAME = (1280, 720)
PAGE = 20


def synthetic_book(shots: int) -> tuple[str, int]:
    """The sample book's chapters repeated, enough of them for about `shots` shots (the sample
    gives about 7 shots a chapter); returns the text and the number of chapters."""
    from pipeline_kit.text import sample_book_path

    sample = sample_book_path().read_text(encoding="utf-8")
    bodies = [b.strip() for b in re.split(r"(?m)^Chapter \d+\.[^\n]*\n", sample)[1:]]
    count = -(-shots * 3 // 22)  # 22 shots in the sample's 3 chapters
    chapters = [f"Chapter {n + 1}. Night {n + 1}\n\n{bodies[n % len(bodies)]}\n" for n in range(count)]
    return "The Storyboard Benchmark\n\n\n" + "\n\n".join(chapters), count


def frame_png(path: Path, index: int, grain: Image.Image) -> None:
    """A distinct frame as big as a provider's PNG (about 0.9 MiB: film grain over a tinted
    gradient), a few shapes and the frame's number."""
    rng = random.Random(index)
    tint = Image.new("RGB", FRAME, (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    image = Image.blend(grain, tint, 0.5)
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x, y = rng.randrange(FRAME[0] - 200), rng.randrange(FRAME[1] - 200)
        draw.ellipse(
            (x, y, x + rng.randrange(40, 200), y + rng.randrange(40, 200)),
            fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)),
        )
    draw.text((40, 40), f"frame {index}", fill="white")
    image.save(path, "PNG", compress_level=1)  # quick to make; as big as a provider's


def film_grain() -> Image.Image:
    """A gradient with noise, made once: what makes every frame as heavy as a real one."""
    gradient = Image.linear_gradient("L").resize(FRAME).convert("RGB")
    return Image.blend(gradient, Image.effect_noise(FRAME, 30).convert("RGB"), 0.15)


def build(url: str, shots: int, work: Path, thumbnails: bool) -> dict[str, Any]:
    """Make the book in the database at `url`, split it and draw every image into the store (with
    the thumbnail a worker publishes beside it, unless `thumbnails` is off)."""
    from pipeline_kit import engine, store, text, thumbnail
    from pipeline_kit.db import create
    from pipeline_kit.db.migrate import init
    from pipeline_kit.engine import Completion
    from pipeline_kit.engine.lanes import seed_default_lanes
    from pipeline_kit.store.database import DatabaseStore

    db = create(url)
    init(db)
    seed_default_lanes(db)
    store.set_url(db, store.DATABASE_URL)
    book, chapters = synthetic_book(shots)
    started = time.perf_counter()
    bookcode = text.ingest_text(db, book, "The Storyboard Benchmark", "en", progress=False).bookcode
    split = text.split_book(db, bookcode, progress=False)
    other_pc = DatabaseStore(db, work / "other-pc-cache")
    drawn, png, grain = 0, work / "frame.png", film_grain()
    while leases := engine.claim(db, "bench", ["image"], limit=100, lease_s=600):
        done = []
        for lease in leases:
            frame_png(png, drawn, grain)
            small = png.with_name("frame" + thumbnail.SUFFIX)
            sides = {thumbnail.SUFFIX: small} if thumbnails and thumbnail.draw(png, small) else {}
            stored = other_pc.publish(f"outputs/{lease.task_id}.png", png, sides)
            done.append(
                Completion(
                    task_id=lease.task_id,
                    token=lease.token,
                    output_path=stored.output_path,
                    result={
                        "sha256": stored.sha256,
                        "bytes": stored.size,
                        **({"sides": stored.sides} if stored.sides else {}),
                    },
                )
            )
            drawn += 1
        engine.complete_many(db, done)
    db.dispose()
    return {
        "bookcode": bookcode,
        "chapters": chapters,
        "shots": split.shots_created,
        "images": drawn,
        "frame_bytes": png.stat().st_size,
        "build_s": time.perf_counter() - started,
    }


def open_once(url: str, bookcode: str, cache: Path) -> dict[str, Any]:
    """Open the storyboard as 02_storyboard does, in this (fresh) process, inside an event loop
    as in a kernel: the time until the page shows, then until its thumbnails are all in; then
    the same for Next."""
    from pipeline_kit.db import connect
    from pipeline_kit.ui.storyboard_view import BookPicker

    async def timed() -> dict[str, Any]:
        started = time.perf_counter()
        db = connect(url)
        picker = BookPicker(db, bookcode, page_size=PAGE, cache=cache)
        opened = time.perf_counter() - started
        screen = picker.screen
        assert screen is not None and screen.shown is not None
        if screen.filler is not None:
            await screen.filler
        filled = time.perf_counter() - started
        made = screen.model.thumbnails.made
        thumbs = sum(
            1 for tiles in screen.shown.tiles.values() for t in tiles.values() if t.has_output and t.kind != "video"
        )
        started = time.perf_counter()
        screen.next.click()
        next_s = time.perf_counter() - started
        if screen.filler is not None:
            await screen.filler
        return {
            "open_s": opened,
            "thumbnails_s": filled,
            "next_s": next_s,
            "next_thumbnails_s": time.perf_counter() - started,
            "thumbnails_shown": thumbs,
            "thumbnails_made": made,
            "next_made": screen.model.thumbnails.made - made,
            "shots": screen.shown.page.total,
        }

    return asyncio.run(timed())


def measure(url: str, bookcode: str, cache: Path, runs: int, cold: bool) -> dict[str, Any]:
    """`runs` fresh-process openings; cold ones start with this PC's cache emptied."""
    results = []
    for _ in range(runs):
        if cold:
            shutil.rmtree(cache, ignore_errors=True)
        done = subprocess.run(
            [sys.executable, __file__, "--one", url, bookcode, str(cache)], capture_output=True, text=True, check=True
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    median = {
        k: statistics.median(r[k] for r in results) for k in ("open_s", "thumbnails_s", "next_s", "next_thumbnails_s")
    }
    return {
        "cache": "cold" if cold else "warm",
        "runs": results,
        "median": median,
        "meets_goal": median["open_s"] < GOAL_S,
    }


def markdown(report: dict[str, Any]) -> str:
    book = report["book"]
    lines = [
        f"# Storyboard benchmark ({book['shots']} shots, {book['images']} images in the database store)",
        "",
        f"Database: {report['database']}. Frames {FRAME[0]}x{FRAME[1]} PNG (about "
        f"{book['frame_bytes'] // 1024} KiB each). Each run opens 02_storyboard's screen ({PAGE} shots "
        "a page) in a fresh process inside an event loop, as in a kernel: *page shown* is from "
        "connecting to the screen built (cards, filters, editor, review queue; thumbnails this PC "
        "lacks still drawing), *thumbnails in* until the last one is on its card; then the same "
        f"for Next. Median of {report['runs']} runs. Cold: this PC's cache emptied before each run "
        + (
            "(each thumbnail the worker published fetched through the store). "
            if report["thumbnails_published"]
            else "(frames published without thumbnails: each fetched whole through the store and drawn here). "
        )
        + f"Goal: page shown under {GOAL_S:g} s.",
        "",
        "| thumbnail cache | page shown s | thumbnails in s | Next: shown s | Next: thumbnails in s | "
        "thumbnails | made on open | made on Next | goal |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in report["cases"]:
        m, first = case["median"], case["runs"][0]
        lines.append(
            f"| {case['cache']} | {m['open_s']:.2f} | {m['thumbnails_s']:.2f} | {m['next_s']:.2f} | "
            f"{m['next_thumbnails_s']:.2f} | {first['thumbnails_shown']} | "
            f"{first['thumbnails_made']} | {first['next_made']} | "
            f"{'met' if case['meets_goal'] else 'MISSED'} |"
        )
    runs = "; ".join(
        f"{c['cache']}: " + ", ".join(f"{r['open_s']:.2f}/{r['thumbnails_s']:.2f}" for r in c["runs"])
        for c in report["cases"]
    )
    before, after = report["load_average"]
    lines += [
        "",
        f"Each run's page shown / thumbnails in, s: {runs}.",
        "",
        f"Building the book (ingest, split, draw and store every image): {book['build_s']:.0f} s.",
        "",
        f"Machine: {report['machine']}, {report['cpus']} CPUs (shared), Python {report['python']}; "
        f"1-minute load average {before} before and {after} after the runs.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=int, default=1000, help="about how many shots (default 1000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument(
        "--frames-only",
        action="store_true",
        help="publish frames without their thumbnails (as workers did before): the screen draws them",
    )
    parser.add_argument("--db", help="an EMPTY database to build the book in (default: SQLite in a temp folder)")
    parser.add_argument("--one", nargs=3, metavar=("URL", "BOOKCODE", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(open_once(args.one[0], args.one[1], Path(args.one[2]))))
        return
    if args.shots < 1 or args.runs < 1:
        print("--shots and --runs must be at least 1", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="pk_storyboard_bench_") as tmp:
        work = Path(tmp)
        url = args.db or f"sqlite:///{work / 'bench.db'}"
        load_before = f"{os.getloadavg()[0]:.2f}"
        book = build(url, args.shots, work, thumbnails=not args.frames_only)
        cache = work / "this-pc-cache"
        cases = [measure(url, book["bookcode"], cache, args.runs, cold) for cold in (True, False)]
        report = {
            "book": book,
            "database": url.split("://")[0].split("+")[0],
            "runs": args.runs,
            "thumbnails_published": not args.frames_only,
            "cases": cases,
            "goal_s": GOAL_S,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": [load_before, f"{os.getloadavg()[0]:.2f}"],
        }
    REPORTS.mkdir(parents=True, exist_ok=True)
    name = f"storyboard_{report['database']}" + ("" if report["thumbnails_published"] else "_frames_only")
    (REPORTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = markdown(report)
    (REPORTS / f"{name}.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
