"""A book made chapter by chapter, as a production enters it: chapter 1 is split and made into a
film by a worker, chapter 2 comes later; the book's film is then made again from both chapters,
and `pipeline-kit film` says it is out of date (and why) until it is."""

from __future__ import annotations

import json
from pathlib import Path

import imageio_ffmpeg
import pytest
import sqlalchemy as sa

from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.film import book_task_id, chapter_task_id
from pipeline_kit.film.timeline import TITLE_CARD_S
from pipeline_kit.store import open_store
from pipeline_kit.worker.runtime import WorkerConfig, run_worker
from tests.text.helpers import SAMPLE_TITLE, sample_chapter_files


def cli(capsys: pytest.CaptureFixture[str], url: str, *argv: str) -> tuple[str, str]:
    """Run one command as a user types it; returns (stdout, stderr) and requires exit code 0."""
    code = main(["--db", url, *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def work(db: Database, tmp_path: Path) -> None:
    """A worker with the offline sketch backend, until nothing is left to do."""
    cfg = WorkerConfig(
        worker_id="pc-1",
        backend="sketch",
        until_empty=True,
        progress=False,
        outputs=tmp_path / "outputs",
        spool=tmp_path / "spool",
        poll_s=0.1,
    )
    run_worker(db, cfg)


def seconds(db: Database, tmp_path: Path, task_id: str) -> float:
    """The length of the film a completed assembly task published, read from its mp4 by ffmpeg
    (imageio-ffmpeg's frame count), not from anything the assembler said."""
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks.c.output_path, tasks.c.result).where(tasks.c.task_id == task_id)).one()
    path = open_store(db, cache=tmp_path / "cache").fetch(row.output_path, row.result or {})
    return float(imageio_ffmpeg.count_frames_and_secs(str(path))[1])


def test_a_chapter_added_after_the_film_was_made_joins_the_book_film(
    db: Database, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Chapter 1 made into a film; chapter 2 added with `ingest --chapter 2`: `film` says the book's
    film is out of date (chapter 2 not split), and after `split` that it was made before chapter 2
    was added; a worker then makes chapter 2's film and the book's again (chapter 1's only if the
    re-folded bible re-cast its shots), whose length is the book's
    title card plus both chapter films as measured from the mp4 files, and nothing is out of date."""
    one, two = sample_chapter_files(tmp_path)[:2]
    bookcode = cli(capsys, db_url, "ingest", str(one), "--title", SAMPLE_TITLE, "--chapter", "1")[0].strip()
    cli(capsys, db_url, "split", bookcode)
    work(db, tmp_path)
    made = json.loads(cli(capsys, db_url, "film", bookcode, "--json")[0])
    assert made["task_status"] == "completed" and made["out_of_date"] == []
    first_book = seconds(db, tmp_path, book_task_id(bookcode))
    chapter_one = seconds(db, tmp_path, chapter_task_id(bookcode, 1))
    assert first_book == pytest.approx(TITLE_CARD_S + chapter_one, abs=0.1)

    _, said = cli(capsys, db_url, "ingest", str(two), "--title", SAMPLE_TITLE, "--chapter", "2")
    assert f"chapter 2 not split yet: `pipeline-kit split {bookcode}`" in said
    waiting = json.loads(cli(capsys, db_url, "film", bookcode, "--json")[0])
    assert waiting["out_of_date"] == ["chapter 2 is not split yet (run split)"]
    assert waiting["chapters"][1]["split"] is False

    _, said = cli(capsys, db_url, "split", bookcode)
    assert "films re-planned, to be made again: chapter 2 added" in said
    recast = "the bible changed how earlier shots are cast" in said  # chapter 1's shots re-cast: its film again
    shown = cli(capsys, db_url, "film", bookcode)[0]
    assert "book film: pending\n      out of date: made before: chapter 2 added" in shown

    work(db, tmp_path)
    done = json.loads(cli(capsys, db_url, "film", bookcode, "--json")[0])
    assert done["task_status"] == "completed" and done["out_of_date"] == []
    assert [c["task_status"] for c in done["chapters"]] == ["completed", "completed"]
    assert all(c["out_of_date"] == [] for c in done["chapters"])
    assert "out of date" not in cli(capsys, db_url, "film", bookcode)[0]
    films = [seconds(db, tmp_path, chapter_task_id(bookcode, n)) for n in (1, 2)]
    assert films[0] == pytest.approx(chapter_one, abs=0.01)
    assert seconds(db, tmp_path, book_task_id(bookcode)) == pytest.approx(TITLE_CARD_S + sum(films), abs=0.1)
    assert outcomes(db, book_task_id(bookcode)) == ["completed", "completed"]  # the first film's is kept
    assert outcomes(db, chapter_task_id(bookcode, 1)) == ["completed"] * (1 + recast)  # made again only if re-cast


def outcomes(db: Database, task_id: str) -> list[str]:
    with db.engine.connect() as conn:
        query = sa.select(attempts.c.outcome).where(attempts.c.task_id == task_id).order_by(attempts.c.id)
        return list(conn.execute(query).scalars())
