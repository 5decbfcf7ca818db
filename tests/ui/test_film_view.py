"""The film shown and linked in 02 and 03, on every database: a film published to the database
store by another PC is found, fetched and played from a notebook in another folder, with its
subtitles to download; films not made yet say what they wait for in a creator's words."""

from __future__ import annotations

from pathlib import Path

import ipywidgets as w
import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import enqueue
from pipeline_kit.film import book_task_id, chapter_task_id
from pipeline_kit.text.film_tasks import assembly_specs
from pipeline_kit.film.names import SRT, chapter_film_path
from pipeline_kit.store import open_store, set_url
from pipeline_kit.ui.film_view import FilmModel, FilmScreen, made_films
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.monitor_view import monitor_screen
from pipeline_kit.ui.session import screen_store
from tests.film.books import BOOK, add_book, shot_id
from tests.film.conftest import make_clip


def publish_chapter_film(db: Database, bookcode: str, chapter: int, made_on: Path) -> bytes:
    """The chapter's film published as a worker on another PC does: into the store in effect,
    the assembly task's row recording the store's name and the checksums. Returns the film."""
    made_on.mkdir(exist_ok=True)
    clip = make_clip(made_on, f"{bookcode}-c{chapter:03d}-s0001", 1.0, (320, 180), 12).path
    srt = made_on / "chapter.srt"
    srt.write_text("1\n00:00:00,000 --> 00:00:01,000\nRain fell.\n", encoding="utf-8")
    stored = open_store(db, cache=made_on / "cache").publish(chapter_film_path(bookcode, chapter), clip, {SRT: srt})
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(tasks)
            .where(tasks.c.task_id == chapter_task_id(bookcode, chapter))
            .values(
                status="completed",
                output_path=stored.output_path,
                finished_at=sa.func.now(),
                result={"sha256": stored.sha256, "sides": stored.sides},
            )
        )
    return clip.read_bytes()


def test_film_found_through_the_database_store_from_another_folder(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """02 and 03 show the chapter's film fetched from the database store into the notebook's own
    cache (the worker's folder is gone), play it and link it with its subtitles; the book's film
    and chapter 2's say what they wait for."""
    set_url(db, "database")
    with db.engine.begin() as conn:
        add_book(conn, {1: 2, 2: 1})
        enqueue(conn, assembly_specs(conn, BOOK))
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(tasks)
            .where(tasks.c.task_id.in_([f"{shot_id(1, s)}/video" for s in (1, 2)]))
            .values(status="completed")
        )
    made_on = tmp_path / "worker-pc"
    film = publish_chapter_film(db, BOOK, 1, made_on)
    for path in sorted(made_on.rglob("*"), reverse=True):  # the other PC's files are not here
        path.unlink() if path.is_file() else path.rmdir()
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")

    book, one, two = FilmModel(db, BOOK).films()
    assert (one.task_id, one.label, one.state, one.ready) == (
        chapter_task_id(BOOK, 1),
        "chapter 1: Part 1",
        "made",
        True,
    )
    assert Path(one.path or "").read_bytes() == film
    assert Path(one.path or "").resolve().is_relative_to(tmp_path / "user-cache")
    assert not any((tmp_path / "notebooks").iterdir())  # the notebook's folder stays as it was
    assert "Rain fell." in Path(one.subtitles or "").read_text(encoding="utf-8")
    assert (book.task_id, book.ready) == (book_task_id(BOOK), False)
    assert book.state == "waiting for its chapters (2 of 3 clips done)"
    assert two.state == "waiting for its clips (0 of 1 clips done)"

    screen = FilmScreen(FilmModel(db, BOOK))
    player = next(c for box in screen.films.children for c in getattr(box, "children", ()) if isinstance(c, w.Video))
    assert player.value == film
    links = " ".join(
        c.value for box in screen.films.children for c in getattr(box, "children", ()) if isinstance(c, w.HTML)
    )
    assert f"download='{BOOK}-chapter-001.mp4'" in links and f"download='{BOOK}-chapter-001.srt'" in links
    before = screen.films.children
    screen.redraw()
    assert screen.films.children[1] is before[1]  # a film shown is not sent to the page again

    assert [f.task_id for f in made_films(db, screen_store(db), BOOK)] == [chapter_task_id(BOOK, 1)]
    monitor = monitor_screen(MonitorModel(db), auto=False)
    shown = [c for c in monitor.films.children[0].children if isinstance(c, w.Video)]
    assert shown and shown[0].value == film


def test_a_book_without_films_says_so(db: Database) -> None:
    """Before any chapter is split, each film says it is not planned yet, in words."""
    with db.engine.begin() as conn:
        add_book(conn, {}, unsplit=(1,))
    (book, chapter) = FilmModel(db, BOOK).films()
    assert book.state == "not planned yet: planned once every chapter is split"
    assert chapter.state == "not planned yet: planned once the chapter is split"
    assert not (book.ready or chapter.ready)
