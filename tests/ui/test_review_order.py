"""The frame review at book scale, on every database: what waits is listed in the book's order
(chapter, shot; a shot's last frame is drawn once its first is approved) whatever order the tasks
were made or finished in, each named as its card names the shot; a page, a chapter or every shot
shown is approved in one call."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.engine import Completion
from pipeline_kit.text.graph import FRAMES
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.review import SHEETS
from pipeline_kit.ui.storyboard import StoryboardModel

from .conftest import TITLE, sample_chapters


LATE = (
    "\nA gull landed on the rail and watched the sea for a long while. The wind rose. Mara turned back "
    "to the stairs and counted every step on the way down.\n"
)


def _book_split_backwards(db: Database) -> StoryboardModel:
    """Two chapters split, then chapter 1 lengthened and re-split: its new last shot's tasks come
    after chapter 2's in the task table (the order of making is not the book's)."""
    book = NewBookModel(db)
    first, second = sample_chapters()[:2]
    code = book.add_chapter(TITLE, first).bookcode or ""
    assert book.add_chapter(TITLE, second).ok
    model = StoryboardModel(db, code)
    assert model.split().ok and model.review.set_review(True).ok
    resplit = book.add_chapter(TITLE, first + LATE, 1, force=True)
    assert resplit.ok and "added" in resplit.changes[0].detail, resplit.message
    return model


def _finish_backwards(db: Database) -> list[str]:
    """Draw every image the lane offers now, finishing them last task first."""
    leases = engine.claim(db, "w1", ["image"], limit=1000, lease_s=60)
    for lease in reversed(leases):
        engine.complete(db, Completion(task_id=lease.task_id, token=lease.token))
    return [lease.task_id for lease in leases]


def _book_order(db: Database, bookcode: str) -> dict[str, tuple[int, int, str]]:
    """shot id -> (chapter, seq, text), from the shots table itself."""
    with db.engine.connect() as conn:
        return {
            r.shot_id: (r.chapter, r.seq, r.text)
            for r in conn.execute(
                sa.select(shots.c.shot_id, shots.c.chapter, shots.c.seq, shots.c.text).where(
                    shots.c.bookcode == bookcode
                )
            )
        }


def test_review_list_is_in_book_order_with_shot_names(db: Database) -> None:
    """Frames made and finished out of the book's order are listed by chapter, then shot, the
    first frame round before the last; each is named '2.14 · first frame · <its text>'; character
    sheets, which the frames wait on, come first and stay out of the frame list."""
    model = _book_split_backwards(db)
    _finish_backwards(db)  # the character sheets (and frames of shots naming nobody)
    everything = model.review.awaiting()
    sheets = [r for r in everything if r.kind in SHEETS]
    assert sheets and everything[: len(sheets)] == tuple(sheets)
    assert engine.approve_many(db, [r.task_id for r in sheets])
    order = _book_order(db, model.bookcode)
    for kind in FRAMES:  # a shot's last frame is drawn from its first, once that is approved
        _finish_backwards(db)
        listed = model.review.awaiting(kinds=FRAMES)
        assert {r.shot_id for r in listed} == set(order) and {r.kind for r in listed} == {kind}  # every shot's
        keys = [(order[r.shot_id][0], order[r.shot_id][1]) for r in listed]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert [k[0] for k in keys][0] == 1 and [k[0] for k in keys][-1] == 2
        made_order = [i.task_id for i in engine.awaiting_review(db, model.bookcode, kinds=FRAMES)]
        assert made_order != [r.task_id for r in listed]  # the engine's order (of making) is not the book's
        for row in listed:
            chapter, seq, text = order[row.shot_id or ""]
            assert row.label.startswith(f"{chapter}.{seq} · {kind.replace('_', ' ')} · ")
            assert row.label.split(" · ", 2)[2].rstrip("…") in " ".join(text.split())
        assert engine.approve_many(db, [r.task_id for r in listed])


def test_a_page_a_chapter_and_every_shot_shown_are_approved_at_once(db: Database) -> None:
    """The grid's batch buttons: this page's waiting frames, a chapter's, every page the filters
    choose; each is one call that approves exactly those frames and no other."""
    model = _book_split_backwards(db)
    _finish_backwards(db)
    assert engine.approve_many(db, [r.task_id for r in model.review.awaiting(kinds=SHEETS)])
    _finish_backwards(db)  # each shot's first frame; its last waits for that one's approval

    grid = model.grid(1, 4, draw=False)
    page = grid.waiting.page
    assert len(page) == 4 and all(t.rsplit("/", 1)[0] in {r.shot_id for r in grid.page.rows} for t in page)
    before = {r.task_id for r in model.review.awaiting()}
    done = model.review.approve_many(page, "this page")
    assert done.ok and done.message.startswith("4 frames of this page approved")
    assert {r.task_id for r in model.review.awaiting()} == before - set(page)

    grid = model.grid(1, 4, draw=False)
    assert set(grid.waiting.chapters) == {1, 2} and not set(grid.waiting.chapters[1]) & set(page)
    second = grid.waiting.chapters[2]
    assert model.review.approve_many(second, "chapter 2").ok
    waiting = model.review.awaiting()
    assert {r.task_id for r in waiting} == before - set(page) - set(second)
    assert {r.chapter for r in waiting} == {1}

    someone = next(c for r in model.page(1, 1000).rows for c in r.characters)
    shown = model.grid(1, 4, draw=False, character=someone).waiting.shown
    assert shown and model.review.approve_many(shown, f"every shot of {someone}").ok
    assert not {r.task_id for r in model.review.awaiting()} & set(shown)
    assert (
        model.review.approve_many(shown, "those shots").message
        == "no frame of those shots waits for your review any more"
    )
    assert model.review.approve_many((), "this page").message == "no frame of this page waits for your review"
