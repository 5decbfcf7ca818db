"""Benchmark: ingest + split of each whole corpus book into a fresh SQLite database.

The split builds the book's bible (characters, places, narrator) and writes shots and tasks;
the bible is also timed alone (chapters found and the bible built, nothing stored) in a process
of its own. Each run is a fresh process (so jieba's first load and peak memory are counted
honestly); the median of the runs is reported. Writes reports/bench/split.json and split.md.

    python bench/split_bench.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "corpus"
BOOKS = {
    "zh": ("zh_xiyouji.txt", "西游记"),
    "en": ("en_adventures_of_sherlock_holmes.txt", "The Adventures of Sherlock Holmes"),
}
GOAL_SECONDS, GOAL_MB = 5.0, 500
MEASURES = ("ingest_s", "split_s", "total_s", "work_cpu_s", "cpu_s", "peak_mb", "load_avg", "bible_s", "bible_cpu_s")


def one_run(lang: str) -> dict[str, float]:
    """Ingest and split one book into a fresh SQLite file; time each step (run in a child process)."""
    from pipeline_kit.db import create
    from pipeline_kit.db.migrate import init
    from pipeline_kit.engine.lanes import seed_default_lanes
    from pipeline_kit.text import ingest_file, split_book

    name, title = BOOKS[lang]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = create(f"sqlite:///{tmp}/bench.db")
        init(db)
        seed_default_lanes(db)
        start, cpu_start = time.perf_counter(), time.process_time()
        report = ingest_file(db, CORPUS / name, title, progress=False)
        ingested = time.perf_counter()
        split = split_book(db, report.bookcode, progress=False)
        done, cpu_done = time.perf_counter(), time.process_time()
        db.dispose()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "ingest_s": ingested - start,
        "split_s": done - ingested,
        "total_s": done - start,
        "work_cpu_s": cpu_done - cpu_start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "load_avg": os.getloadavg()[0],
        "chapters": len(report.chapters),
        "shots": split.shots_created,
        "tasks": split.tasks_created,
    }


def bible_run(lang: str) -> dict[str, float]:
    """Find the chapters and build the bible of one book, nothing stored (run in a child process)."""
    from pipeline_kit.text.cast import build_bible
    from pipeline_kit.text.chapters import find_chapters
    from pipeline_kit.text.decode import read_book

    start, cpu_start = time.perf_counter(), time.process_time()
    texts = [c.text for c in find_chapters(read_book(CORPUS / BOOKS[lang][0]).text, BOOKS[lang][1]).chapters]
    bible = build_bible(texts, lang)
    return {
        "bible_s": time.perf_counter() - start,
        "bible_cpu_s": time.process_time() - cpu_start,
        "characters": len(bible.characters),
        "places": len(bible.places),
    }


def _child(*args: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", choices=sorted(BOOKS), help=argparse.SUPPRESS)
    parser.add_argument("--bible", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(bible_run(args.child) if args.bible else one_run(args.child)))
        return 0
    results = {}
    for lang in BOOKS:
        runs = [{**_child("--child", lang), **_child("--child", lang, "--bible")} for _ in range(args.runs)]
        results[lang] = {
            "book": BOOKS[lang][0],
            "runs": runs,
            **{f"median_{k}": statistics.median(r[k] for r in runs) for k in MEASURES},
            "shots": runs[0]["shots"],
            "tasks": runs[0]["tasks"],
            "chapters": runs[0]["chapters"],
            "characters": runs[0]["characters"],
            "places": runs[0]["places"],
        }
        results[lang]["meets_goal"] = (
            results[lang]["median_total_s"] < GOAL_SECONDS and results[lang]["median_peak_mb"] < GOAL_MB
        )
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "split.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Ingest + split benchmark (fresh SQLite, one process per run, median)",
        "",
        f"Goal: under {GOAL_SECONDS:g} s and {GOAL_MB} MB per book. Runs: {args.runs}.",
        "",
        "Times are wall clock; work cpu s is the CPU time of ingest + split alone, process cpu s the",
        "whole process (imports, schema set-up). On a shared machine (load average in the last column,",
        "2 cores) wall time exceeds CPU time by the wait for a core.",
        "",
        "| book | chapters | characters | places | shots | tasks | ingest s | split s | total s | work cpu s "
        "| process cpu s | peak MB | bible alone s | bible cpu s | load avg | goal met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        lines.append(
            f"| {r['book']} | {r['chapters']} | {r['characters']} | {r['places']} | {r['shots']} | {r['tasks']} | "
            f"{r['median_ingest_s']:.2f} | {r['median_split_s']:.2f} | {r['median_total_s']:.2f} | "
            f"{r['median_work_cpu_s']:.2f} | {r['median_cpu_s']:.2f} | {r['median_peak_mb']:.0f} | "
            f"{r['median_bible_s']:.2f} | {r['median_bible_cpu_s']:.2f} | {r['median_load_avg']:.1f} | "
            f"{'yes' if r['meets_goal'] else 'no'} |"
        )
    (out / "split.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
