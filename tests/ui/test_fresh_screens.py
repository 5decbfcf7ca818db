"""Fresh displays: after every button the storyboard's widgets show what the database holds (the
saved prompt, an emptied note once a rejection took it, captions in words after an approval)."""

from __future__ import annotations

from pathlib import Path

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.engine import Completion
from pipeline_kit.ui.review import SHEETS
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.ui.storyboard_view import storyboard_screen

from .conftest import enter_book


def test_prompt_note_and_captions_show_what_is_stored(sqlite_db: Database, tmp_path: Path) -> None:
    """Save shows the prompt as stored (trimmed), a rejection empties the note box, and an
    approval turns the shot's frame caption to "done" without picking the shot again."""
    board = storyboard_screen(StoryboardModel(sqlite_db, enter_book(sqlite_db, 1)), page_size=50)
    board.split_button.click()
    board.panel.review.value = True
    board.prompt.value = "  A gull over the harbour at dawn  \n"
    board.save.click()
    stored = board.model.shot(board.shot.value).prompt
    assert stored == "A gull over the harbour at dawn" and board.prompt.value == stored
    assert "task(s)" not in board.message.widget.value

    for _ in ("sheets", "first frames"):  # the sheets approved, so the frames are drawn
        engine.approve_many(sqlite_db, [r.task_id for r in board.model.review.awaiting(kinds=SHEETS)])
        for lease in engine.claim(sqlite_db, "w1", ["image"], limit=500, lease_s=60):
            path = tmp_path / f"{lease.task_id.replace('/', '_')}.png"
            path.write_bytes(b"\x89PNG\r\n\x1a\n")
            engine.complete(sqlite_db, Completion(task_id=lease.task_id, token=lease.token, output_path=str(path)))
    board.refresh.click()
    assert "waiting for your review:" in board.panel.line.value
    frame = next(r for r in board.model.review.awaiting() if r.kind == "first_frame")
    shot_id = frame.task_id.rsplit("/", 1)[0]
    board.shot.value = shot_id
    assert "first frame: waiting for your review" in board.media.children[0].children[-1].value

    board.panel.waiting.value = frame.task_id
    board.panel.approve.click()
    assert "approved" in board.message.widget.value
    assert board.shot.value == shot_id
    assert "first frame: done" in board.media.children[0].children[-1].value
    assert "approved the first frame of shot" in board.panel.line.value

    other = next(r for r in board.model.review.awaiting() if r.kind not in SHEETS)
    board.panel.waiting.value = other.task_id
    board.panel.note.value = "make the sea rougher"
    board.panel.reject.click()
    assert "redrawn with your note" in board.message.widget.value and board.panel.note.value == ""
    assert "make the sea rougher" in board.panel.line.value
