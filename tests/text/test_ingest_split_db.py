"""Ingest, split and the task graph on SQLite, PostgreSQL and MariaDB (the `db` fixture), kept small."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database, create
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import chapters, shots, task_deps, tasks
from pipeline_kit.engine.lanes import seed_default_lanes
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text import ingest_file, ingest_text, sample_book_path, show_shot, split_book
from pipeline_kit.text.graph import place_task_id, seed_for
from tests.text.helpers import SAMPLE_TITLE, row_counts, sample_chapter_files

SHEET_KEYS = {"bookcode", "name", "prompt", "width", "height", "seed"}
FRAME_KEYS = {
    "bookcode",
    "shot_id",
    "chapter",
    "seq",
    "scene",
    "prompt",
    "caption",
    "characters",
    "location",
    "time_of_day",
    "width",
    "height",
    "seed",
    "references",
}
VIDEO_KEYS = {"bookcode", "shot_id", "video_prompt", "caption", "duration_s", "fps", "width", "height", "seed"}


def _shots(db: Database, bookcode: str) -> list[dict]:
    with db.engine.connect() as conn:
        rows = (
            conn.execute(sa.select(shots).where(shots.c.bookcode == bookcode).order_by(shots.c.chapter, shots.c.seq))
            .mappings()
            .all()
        )
    return [{k: v for k, v in r.items() if k != "edited_at"} for r in rows]


def test_sample_book_ingests_and_splits_once(db: Database) -> None:
    """The sample book gives 20-30 shots; a second split (and a second ingest) creates nothing."""
    report = ingest_file(db, sample_book_path(), SAMPLE_TITLE)
    assert report.count("added") == 3 and report.lang == "en"
    first = split_book(db, report.bookcode)
    assert first.chapters_split == 3 and 20 <= first.shots_created <= 30
    before = row_counts(db)
    again = ingest_file(db, sample_book_path(), SAMPLE_TITLE)
    second = split_book(db, report.bookcode)
    assert again.count("unchanged") == 3
    assert (second.chapters_split, second.shots_created, second.tasks_created) == (0, 0, 0)
    assert row_counts(db) == before
    with db.engine.connect() as conn:
        versions = set(conn.execute(sa.select(chapters.c.splitter_version)).scalars())
        assert None not in set(conn.execute(sa.select(chapters.c.split_at)).scalars())
    assert versions == {"rules-1"}


def test_shots_tile_their_chapters_in_the_database(db: Database) -> None:
    """Stored shot texts are the chapter's text at their spans, and together rebuild the chapter."""
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    with db.engine.connect() as conn:
        texts = dict(conn.execute(sa.select(chapters.c.number, chapters.c.text)).all())
    for number, text in texts.items():
        rows = [s for s in _shots(db, bookcode) if s["chapter"] == number]
        assert "".join(s["text"] for s in rows) == text
        assert all(text[s["span_start"] : s["span_end"]] == s["text"] for s in rows)
        assert all(isinstance(s["characters"], list) for s in rows)


def test_task_graph_follows_the_params_contract(db: Database) -> None:
    """One sheet per character and per place shots are set at; per shot two frames (after its
    characters' and place's sheets, the last also after the first), a video (after both) and a
    voice in the voice lane (after nothing) saying the shot's lines."""
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    rows = _shots(db, bookcode)
    with db.engine.connect() as conn:
        all_tasks = {r.task_id: r for r in conn.execute(sa.select(tasks))}
        deps: dict[str, set[str]] = {}
        for r in conn.execute(sa.select(task_deps)):
            deps.setdefault(r.task_id, set()).add(r.depends_on)
    names = {n for s in rows for n in s["characters"]}
    sheets = {t for t, r in all_tasks.items() if r.kind == "character_sheet"}
    assert len(sheets) == len(names) >= 2
    films = {t for t, r in all_tasks.items() if r.lane == "assembly"}
    assert len(films) == len({s["chapter"] for s in rows}) + 1  # a film per chapter, one for the book
    places = {t for t, r in all_tasks.items() if r.kind == "location_sheet"}
    assert places == {place_task_id(bookcode, s["location"]) for s in rows if s["location"]}
    assert len(all_tasks) == len(sheets) + len(places) + 4 * len(rows) + len(films)
    for tid in sheets:
        r = all_tasks[tid]
        assert set(r.params) == SHEET_KEYS and r.lane == "image" and tid.startswith(f"{bookcode}/char/")
        assert r.params["seed"] == seed_for(tid) and (r.params["width"], r.params["height"]) == (640, 360)
    for s in rows:
        sid = s["shot_id"]
        first, last, video = (all_tasks[f"{sid}/{k}"] for k in ("first_frame", "last_frame", "video"))
        for frame in (first, last):
            assert set(frame.params) == FRAME_KEYS and frame.lane == "image"
            assert (frame.bookcode, frame.shot_id) == (bookcode, sid)
            assert frame.params["characters"] == s["characters"] and frame.params["seed"] == seed_for(frame.task_id)
            drawn_from = {d for d in deps.get(frame.task_id, set()) if all_tasks[d].kind == "character_sheet"}
            assert {all_tasks[d].params["name"] for d in drawn_from} == set(s["characters"])
            assert set(frame.params["references"]) == deps.get(frame.task_id, set())
        assert first.task_id in deps[last.task_id]
        assert set(video.params) == VIDEO_KEYS and video.lane == "video" and video.params["fps"] == 12
        assert video.params["video_prompt"] == s["video_prompt"] and video.params["duration_s"] == s["duration_s"]
        assert deps[video.task_id] == {first.task_id, last.task_id}
        voice = all_tasks[f"{sid}/voice"]
        assert set(voice.params) == {"bookcode", "shot_id", "lang", "lines"} and voice.lane == "voice"
        assert voice.task_id not in deps and all(line["text"] for line in voice.params["lines"])


def test_chapter_by_chapter_entry_gives_the_same_shots(db: Database, tmp_path: Path) -> None:
    """Entering the book one chapter at a time (--chapter N) stores the same shots as one whole-book ingest."""
    for number, path in enumerate(sample_chapter_files(tmp_path), start=1):
        ingest_file(db, path, SAMPLE_TITLE, chapter=number)
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode  # all unchanged: a no-op
    split_book(db, bookcode)
    reference = create(f"sqlite:///{tmp_path / 'whole.db'}")
    init(reference)
    seed_default_lanes(reference)
    ingest_file(reference, sample_book_path(), SAMPLE_TITLE)
    split_book(reference, bookcode)
    assert _shots(db, bookcode) == _shots(reference, bookcode)
    reference.dispose()


def test_changed_split_chapter_is_refused_unless_forced(db: Database, tmp_path: Path) -> None:
    """A changed, already split chapter is refused (nothing written); --force re-splits only it."""
    files = sample_chapter_files(tmp_path)
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    before, shots_before = row_counts(db), _shots(db, bookcode)
    edited = files[1].read_text(encoding="utf-8").replace("sitting on an upturned\nbucket", "asleep on a crate")
    files[1].write_text(edited, encoding="utf-8")
    with pytest.raises(BadInput, match="--force"):
        ingest_file(db, files[1], SAMPLE_TITLE, chapter=2)
    assert row_counts(db) == before and _shots(db, bookcode) == shots_before
    report = ingest_file(db, files[1], SAMPLE_TITLE, chapter=2, force=True)
    (outcome,) = report.chapters
    assert outcome.action == "resplit" and outcome.changes is not None
    assert outcome.changes.changed and all("-c002-" in s for s in outcome.changes.changed)
    after = _shots(db, bookcode)
    untouched = [s for s in shots_before if s["chapter"] != 2]
    assert [s for s in after if s["chapter"] != 2] == untouched
    with db.engine.connect() as conn:
        reset = set(outcome.changes.reset_tasks)
        films = {f"{bookcode}/film/chapter-002", f"{bookcode}/film/book"}
        assert films <= reset and all("-c002-" in t for t in reset - films)  # and its films, no other
        statuses = set(conn.execute(sa.select(tasks.c.status)).scalars())
    assert statuses == {"pending"}


def test_forced_resplit_that_drops_shots_cancels_their_tasks(db: Database, tmp_path: Path) -> None:
    """Shots a forced re-split no longer has are removed and their tasks canceled, never left pending."""
    files = sample_chapter_files(tmp_path)
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    text = files[2].read_text(encoding="utf-8")
    files[2].write_text(text[: text.index("\n\n", len(text.splitlines()[0]) + 2)] + "\n", encoding="utf-8")
    report = ingest_file(db, files[2], SAMPLE_TITLE, chapter=3, force=True)
    removed = report.chapters[0].changes.removed
    assert removed
    with db.engine.connect() as conn:
        states = {r.task_id: r.status for r in conn.execute(sa.select(tasks.c.task_id, tasks.c.status))}
    for shot_id in removed:
        assert {states[f"{shot_id}/{k}"] for k in ("first_frame", "last_frame", "video")} == {"canceled"}


def test_bad_input_writes_nothing(db: Database, tmp_path: Path) -> None:
    """Refused input (bad title, empty text, heading without body, unknown book) leaves every table as it was."""
    before = row_counts(db)
    for call in (
        lambda: ingest_text(db, "Some text.", "!!!"),
        lambda: ingest_text(db, "   \n", "Empty"),
        lambda: ingest_text(db, "Chapter 1\n\n", "Lonely heading"),
        lambda: ingest_text(db, "text", "Title", lang="fr"),
        lambda: split_book(db, "no-such-book-000000"),
        lambda: show_shot(db, "no-such-shot"),
    ):
        with pytest.raises(BadInput):
            call()
    with pytest.raises(NotFound):
        ingest_file(db, tmp_path / "missing.txt", "Missing")
    assert row_counts(db) == before


def test_titles_of_any_kind_are_stored_safely(db: Database) -> None:
    """Chinese, quoted and SQL-looking titles round-trip; their bookcodes differ and are ASCII."""
    codes = set()
    for title in ("西游记", "Robert'); DROP TABLE books;--", "“Quoted” — title"):
        report = ingest_text(db, "第一回　开始\n    悟空道：“好！”\n", title)
        assert report.title == title
        codes.add(report.bookcode)
    assert len(codes) == 3 and all(c.isascii() for c in codes)
    assert row_counts(db)["books"] == 3


def test_chinese_chapters_split_with_names(db: Database) -> None:
    """A small Chinese book splits on every database and names its people (four-byte-safe storage)."""
    text = "第一回　石猴\n" + "    孙悟空来到花果山，见了众猴。悟空道：“我乃齐天大圣！”众猴大喜。\n" * 6
    bookcode = ingest_text(db, text, "小书").bookcode
    split_book(db, bookcode)
    rows = _shots(db, bookcode)
    assert rows and "孙悟空" in {n for s in rows for n in s["characters"]}
    assert dataclasses.asdict(show_shot(db, rows[0]["shot_id"]))["text"] == rows[0]["text"]


def test_concurrent_splits_create_each_shot_once(db_url: str) -> None:
    """Two split runs racing on one book: every chapter is split by exactly one of them, nothing twice."""
    setup = create(db_url)
    bookcode = ingest_file(setup, sample_book_path(), SAMPLE_TITLE).bookcode
    handles = [create(db_url), create(db_url)]
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda h: split_book(h, bookcode, progress=False), handles))
    assert sum(r.chapters_split for r in reports) == 3
    assert sum(r.shots_created for r in reports) == len(_shots(setup, bookcode))
    counts = row_counts(setup)
    assert counts["tasks"] == sum(r.tasks_created for r in reports)
    for handle in (*handles, setup):
        handle.dispose()
