"""The demo: the whole pipeline on one machine, as three PCs would run it, on the SQLite default.

Ingest the project's own sample book, split it into shots and tasks, start three worker
processes with the offline sketch backend until the book is done, write the post-mortem, and
say where the frames, clips, film and report are. Safe to run again: nothing is duplicated.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline_kit import engine, fonts, text
from pipeline_kit.db.connect import Database
from pipeline_kit.db.migrate import init
from pipeline_kit.store import open_store


@dataclass(frozen=True)
class DemoResult:
    bookcode: str
    tasks: int
    seconds: float
    counts: dict[str, int]
    outputs: Path
    report: Path | None
    film: Path | None


def run_demo(db: Database, *, workers: int = 3, reports: Path = Path("reports"), log=print) -> DemoResult:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    init(db)
    data = open_store(db).root or Path("data")  # where the files are: the store's folder, on SQLite
    engine.seed_default_lanes(db)
    ingested = text.ingest_file(db, text.sample_book_path(), text.sample_book_title())
    fonts.warn_missing([ingested.lang])
    split = text.split_book(db, ingested.bookcode)
    log(
        f"book {ingested.bookcode}: {split.shots_created} shots and {split.tasks_created} tasks created "
        f"({split.chapters_already_split} chapters were split before)"
    )
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pipeline_kit",
                "--db",
                db.engine.url.render_as_string(False),
                "work",
                "--worker-id",
                f"demo-PC-{i}",
                "--lanes",
                "image,video,voice,assembly",
                "--until-empty",
                "--quiet",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for i in range(1, workers + 1)
    ]
    log(f"started {workers} worker processes (sketch backend); waiting until the book is done ...")
    for proc in procs:
        out, _ = proc.communicate()
        log("  " + (out.strip().splitlines() or ["(no summary)"])[-1])
    view = engine.overview(db, ingested.bookcode)
    report = _report(db, ingested.bookcode, reports / ingested.bookcode, log)
    film = data / "films" / ingested.bookcode / "film.mp4"
    return DemoResult(
        bookcode=ingested.bookcode,
        tasks=view.total,
        seconds=time.monotonic() - started,
        counts={k: v for k, v in view.counts.items() if v},
        outputs=data / "outputs" / ingested.bookcode,
        report=report,
        film=film if film.exists() else None,
    )


def _report(db: Database, bookcode: str, out: Path, log) -> Path | None:  # type: ignore[no-untyped-def]
    try:
        from pipeline_kit.analysis.report import write_report
    except ImportError:  # analysis not installed in this build
        return None
    path = write_report(db, bookcode, out)
    log(f"post-mortem written to {path}")
    return path
