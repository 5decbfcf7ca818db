"""The widget builders are thin: pressing their buttons does what the view-models promise, and the
refresher draws synchronously where no event loop runs (the asyncio path runs in the browser test)."""

from __future__ import annotations

import asyncio

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.engine import TaskSpec
from pipeline_kit.ui.live import Refresher
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.monitor_view import monitor_screen
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.newbook_view import newbook_screen
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.ui.storyboard_view import storyboard_screen

from .conftest import TITLE, sample_chapters


def test_newbook_and_storyboard_buttons(sqlite_db: Database) -> None:
    """Paste a chapter, split, page, edit a shot and turn review on, all through the widgets."""
    book = newbook_screen(NewBookModel(sqlite_db), title=TITLE)
    assert "data-pk='bookcode'" in book.code.value
    book.body.value = sample_chapters()[0]
    book.paste.click()
    assert "chapter 1 added" in book.message.widget.value and book.body.value
    book.paste.click()  # the same text again: nothing new, the text still in the box
    assert "chapter 1 unchanged" in book.message.widget.value and book.body.value
    assert "length (characters)" in book.chapters.value
    assert "0 = the next chapter" in book.number_help.value
    for labelled in (book.paste, book.upload, book.force, book.number):  # labels are never cut off
        assert labelled.layout.width == "auto"
    assert 'data-pk="chapters"' in book.chapters.value

    board = storyboard_screen(StoryboardModel(sqlite_db, NewBookModel(sqlite_db).books()[0].bookcode), page_size=3)
    board.split_button.click()
    assert "split 1 chapter:" in board.message.widget.value
    board.next.click()
    assert board.page_no == 2 and board.shot.value
    board.prompt.value = "A gull over the harbour at dawn"
    board.save.click()
    assert "saved" in board.message.widget.value
    assert board.model.shot(board.shot.value).prompt == "A gull over the harbour at dawn"
    board.panel.review.value = True
    assert board.model.review.review_on() and "review on" in board.message.widget.value
    board.character.value = "Mara"
    assert board.page_no == 1 and all("Mara" in r.characters for r in board.model.page(1, 100, character="Mara").rows)


def test_monitor_buttons_and_refresher(sqlite_db: Database) -> None:
    """Retry from the problem row, pause from the lane row; the refresher draws and stops."""
    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="bad", kind="noop", lane="default")])
    (lease,) = engine.claim(sqlite_db, "w1", ["default"])
    engine.fail(sqlite_db, lease.task_id, lease.token, error="nope", retryable=False)
    screen = monitor_screen(MonitorModel(sqlite_db), auto=False)
    assert not screen.live.running and screen.toggle.description == "Start auto-refresh"
    assert "data-pk='count-failed'>1<" in screen.counts.value
    (row,) = screen.problems.children
    row.children[1].click()  # Retry
    assert "bad is pending again" in screen.message.widget.value
    assert "data-pk='count-pending'>1<" in screen.counts.value
    lane_row = next(r for r in screen.lanes.children if "lane-default" in r.children[0].value)
    lane_row.children[1].click()  # Pause
    assert "paused" in lane_row.children[0].value and lane_row.children[1].disabled

    async def run_briefly() -> int:
        drawn: list[int] = []
        live = Refresher(lambda: len(drawn), drawn.append, every_s=0.05, on_error=lambda m: None)
        assert live.start() and live.running
        await asyncio.sleep(0.3)
        live.stop()
        return len(drawn)

    assert asyncio.run(run_briefly()) >= 2
    errors: list[str] = []
    failing = Refresher(lambda: 1 / 0, lambda _: None, every_s=1, on_error=errors.append)
    failing.refresh()
    assert errors and "ZeroDivisionError" in errors[0]
