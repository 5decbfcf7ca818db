"""Screens that agree with the database: on 02's page (the storyboard, the cast and the films,
sections of one `BookPicker` page), 01 and 03, every action redraws every section, so none shows
an older state than another and none needs *Look again*."""

from __future__ import annotations

from pathlib import Path

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.ui.cast_view import CastScreen, cast_screen
from pipeline_kit.ui.film_view import FilmScreen, film_screen
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.monitor_view import monitor_screen
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.newbook_view import newbook_screen
from pipeline_kit.ui.storyboard_view import BookPicker
from pipeline_kit.plural import plural

from .conftest import TITLE, enter_book, sample_chapters
from .test_review import _sketch_images

SHEETS = "waiting for its character and place sheets"


def _page(db: Database, bookcode: str) -> tuple[BookPicker, CastScreen, FilmScreen]:
    """02 as its notebook builds it: the book chosen, the cast and the films added as sections."""
    picker = BookPicker(db, bookcode, page_size=50)
    cast = picker.section(lambda code, page: cast_screen(db, code, page=page))
    film = picker.section(lambda code, page: film_screen(db, code, page=page))
    assert cast.screen is not None and film.screen is not None
    return picker, cast.screen, film.screen


def _cards(picker: BookPicker) -> str:
    assert picker.screen is not None
    return " ".join(card.children[0].value for card in picker.screen.grid.children)


def _count(picker: BookPicker) -> str:
    """The storyboard's line of what waits for review (without the decisions below it)."""
    assert picker.screen is not None
    return picker.screen.panel.line.value.split("</p>", 1)[0]


def _films(film: FilmScreen) -> str:
    return " ".join(box.children[0].value for box in film.films.children)


def test_split_cast_approval_and_rejections_show_on_every_section(sqlite_db: Database, tmp_path: Path) -> None:
    """After Split the cast lists the characters and the films say what they wait for (not
    "no characters yet", not "not planned yet"); accepting the cast turns the cards' "waiting
    for its character sheets" into waiting for a worker and empties the storyboard's count of
    sheets; a sheet sent back shows in the storyboard's count, a frame sent back in its card,
    the cast and the counts; all without pressing Look again."""
    db = sqlite_db
    bookcode = enter_book(db, 2)
    picker, cast, film = _page(db, bookcode)
    board = picker.screen
    assert board is not None
    assert "no characters yet" in cast.table.value and "not planned yet" in _films(film)

    board.split_button.click()
    assert "split 2 chapters" in board.message.widget.value
    assert "no characters yet" not in cast.table.value and "Mara" in cast.table.value
    assert "not planned yet" not in _films(film) and "clips done" in _films(film)
    assert SHEETS in _cards(picker)

    board.panel.review.value = True
    assert _sketch_images(db, tmp_path).stopped_by == "empty"  # the sheets, drawn by a worker
    picker.page.redraw()  # what the worker made (Look again: the whole page)
    waiting = [v for _, v in cast.waiting.options]
    assert len(waiting) >= 2 and f"{plural(len(waiting), 'character sheet')}" in _count(picker)

    cast.waiting.value = waiting[0]
    cast.note.value = "a red coat"
    cast.reject.click()
    assert "sent back" in cast.message.widget.value
    assert f"{plural(len(waiting) - 1, 'character sheet')}" in _count(picker)  # the storyboard follows

    cast.approve_all.click()
    assert "the cast approved" in cast.message.widget.value
    assert "character sheet" not in _count(picker)
    held = [r for r in board.shown.page.rows if waiting[0] not in r.characters] if board.shown else []
    assert held and all(SHEETS not in r.state for r in held)  # shots no longer held by a sheet

    assert _sketch_images(db, tmp_path).stopped_by == "empty"  # the frames of those shots
    picker.page.redraw()
    frame = board.panel.waiting.value
    assert frame and "waiting for your review" in _cards(picker)
    shown = len(board.panel.waiting.options)
    board.panel.note.value = "make the sea rougher"
    board.panel.reject.click()
    assert "redrawn with your note" in board.message.widget.value
    assert len(board.panel.waiting.options) == shown - 1 and frame not in [v for _, v in board.panel.waiting.options]
    assert "rejected" in board.panel.line.value and "make the sea rougher" in board.panel.line.value
    assert "clips done" in _films(film) and "Mara" in cast.table.value


def test_new_book_and_monitor_actions_go_through_their_page(sqlite_db: Database) -> None:
    """01: a chapter added redraws the page (its chapters table) and says what changed; 03: a
    retry redraws the counts at once (one refresh path, no separate refresh per button)."""
    book = newbook_screen(NewBookModel(sqlite_db), title=TITLE)
    redrawn: list[str] = []
    book.page.add(type("Seen", (), {"redraw": lambda self: redrawn.append("01")})())
    book.body.value = sample_chapters()[0]
    book.paste.click()
    assert redrawn == ["01"] and "chapter 1 added" in book.message.widget.value
    assert "<td>1</td>" in book.chapters.value and 'data-pk="changes"' in book.changes.value

    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [engine.TaskSpec(task_id="bad", kind="noop", lane="default")])
    (lease,) = engine.claim(sqlite_db, "w1", ["default"])
    engine.fail(sqlite_db, lease.task_id, lease.token, error="nope", retryable=False)
    screen = monitor_screen(MonitorModel(sqlite_db), auto=False)
    screen.page.add(type("Seen", (), {"redraw": lambda self: redrawn.append("03")})())
    (row,) = screen.problems.children
    row.children[1].click()  # Retry
    assert redrawn == ["01", "03"] and "data-pk='count-pending'>1<" in screen.counts.value
