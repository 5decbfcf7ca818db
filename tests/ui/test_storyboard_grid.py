"""The storyboard at a glance and the frame review, on every database: pages and filters (state
included), shot states in words, thumbnails made once per frame and only for the page shown,
fetched through the database store (frames made on another PC), and a review queue of frames
only, each shown with its shot's text and the prompt it was drawn from."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import TypeVar

import ipywidgets as w
import pytest
import sqlalchemy as sa
from PIL import Image

from pipeline_kit import engine, store
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import Completion
from pipeline_kit.store.database import DatabaseStore
from pipeline_kit.ui.review import SHEETS
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.ui.storyboard_view import storyboard_screen

from .conftest import enter_book

W = TypeVar("W", bound=w.Widget)


def draw(db: Database, tmp_path: Path, *, limit: int = 1000, lanes: tuple[str, ...] = ("image",)) -> list[str]:
    """Play a worker on another PC: claim what the lanes offer (sheets, then the frames they
    free) and publish a distinct 640x360 PNG per task into the database store."""
    other_pc = DatabaseStore(db, tmp_path / "other-pc-cache")
    done: list[str] = []
    while len(done) < limit and (leases := engine.claim(db, "w1", list(lanes), limit=limit - len(done), lease_s=60)):
        for lease in leases:
            png = tmp_path / "drawn.png"
            Image.new("RGB", (640, 360), ((len(done) * 37) % 256, 90, 160)).save(png)
            stored = other_pc.publish(f"outputs/{lease.task_id}.png", png, {})
            engine.complete(
                db,
                Completion(
                    task_id=lease.task_id,
                    token=lease.token,
                    output_path=stored.output_path,
                    result={"sha256": stored.sha256, "bytes": stored.size},
                ),
            )
            done.append(lease.task_id)
    return done


def _set(db: Database, task_id: str, **values: object) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(**values))


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This PC's user cache (where screens keep what they fetch), apart from the other PC's cache;
    the notebook's working folder is another place, which the screens never write to."""
    folder = tmp_path / "this-pc"
    folder.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "user-cache"))
    monkeypatch.chdir(tmp_path)
    return folder


def test_shot_states_in_words_and_the_state_filter(db: Database, here: Path) -> None:
    """A shot reads as its most pressing task: failed (the tile says why), waiting for your
    review, drawing, done, waiting for a worker or for its sheets; the state filter offers the
    states there are and keeps only shots in the chosen one."""
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    rows = model.page(1, 1000).rows
    a, b, c, d = (r.shot_id for r in rows[:4])
    _set(db, f"{a}/first_frame", status="failed", last_error="the provider refused the prompt")
    _set(db, f"{b}/first_frame", status="completed")
    _set(db, f"{b}/last_frame", status="awaiting_review")
    _set(db, f"{c}/last_frame", status="processing")
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).where(tasks.c.shot_id == d).values(status="completed", deps_remaining=0))
    states = {r.shot_id: r.state for r in model.page(1, 1000).rows}
    assert (states[a], states[b], states[c], states[d]) == ("failed", "waiting for your review", "drawing", "done")
    assert set(states.values()) - {"failed", "waiting for your review", "drawing", "done"} <= {
        "waiting for a worker",
        "waiting for its character and place sheets",
    }
    assert "awaiting_review" not in set(states.values())

    offered = model.filters().states
    assert offered == tuple(sorted(set(states.values())))
    for state in offered:
        chosen = model.page(1, 1000, state=state)
        assert chosen.total == list(states.values()).count(state)
        assert all(r.state == state for r in chosen.rows)
    failed_tile = model.grid(1, 1000, state="failed").tiles[a]["first_frame"]
    assert failed_tile.state == "failed: the provider refused the prompt" and failed_tile.thumbnail is None


def test_grid_thumbnails_are_made_once_for_the_page_shown(db: Database, tmp_path: Path, here: Path) -> None:
    """Frames made on another PC (database store) show in the grid as thumbnails of the page
    asked for only; seeing the page again, even from a new screen, makes and fetches nothing new;
    the next page makes its own. Clips are fetched only when asked for."""
    store.set_url(db, store.DATABASE_URL)
    model = StoryboardModel(db, enter_book(db, 2))
    assert model.split().ok
    drawn = set(draw(db, tmp_path))
    size = 4
    first = model.grid(1, size)
    assert first.page.total > 2 * size and len(first.page.rows) == size
    assert set(first.tiles) == {r.shot_id for r in first.page.rows}
    frames = [t for tiles in first.tiles.values() for k, t in tiles.items() if k != "video"]
    assert frames and all(t.task_id in drawn for t in frames)
    thumbs = [t.thumbnail for t in frames]
    assert all(p is not None and p.is_file() for p in thumbs)
    with Image.open(thumbs[0]) as im:
        assert im.format == "JPEG" and im.size == (256, 144)
    assert all(p.resolve().is_relative_to(here.resolve()) for p in thumbs if p)  # this PC's cache
    assert model.thumbnails.made == len(frames) == len(set(thumbs))
    assert all(
        t.thumbnail is None and not t.has_output
        for tiles in first.tiles.values()
        for k, t in tiles.items()
        if k == "video"
    )
    made_here = sorted((here / "user-cache").rglob("*.jpg"))
    assert not list(tmp_path.glob("data/cache"))  # nothing where the notebook runs
    assert len(made_here) == len(frames)  # nothing made for shots not on the page

    fetched: list[str] = []
    real_get = DatabaseStore.get

    def counting_get(self: DatabaseStore, sha256: str, target: Path) -> None:
        fetched.append(sha256)
        real_get(self, sha256, target)

    again = StoryboardModel(db, model.bookcode)  # a new screen on this PC
    try:
        DatabaseStore.get = counting_get  # type: ignore[method-assign]
        seen = again.grid(1, size)
        assert again.thumbnails.made == 0 and not fetched
        assert [t.thumbnail for tiles in seen.tiles.values() for k, t in tiles.items() if k != "video"] == thumbs
        second = again.grid(2, size)
        assert second.page.page == 2 and not {r.shot_id for r in second.page.rows} & set(first.tiles)
        made = [t for tiles in second.tiles.values() for k, t in tiles.items() if k != "video" and t.thumbnail]
        assert made and again.thumbnails.made == len(made) and len(fetched) == len(made)
    finally:
        DatabaseStore.get = real_get  # type: ignore[method-assign]


def test_review_queue_shows_frames_with_their_text_and_prompt(db: Database, tmp_path: Path, here: Path) -> None:
    """Character and place sheets wait outside the frame queue (they have their own step); a frame under
    review comes with its shot's source text and the prompt it was drawn from, the full frame
    fetched through the store; once decided it is no longer offered."""
    store.set_url(db, store.DATABASE_URL)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    draw(db, tmp_path)
    everything = model.review.awaiting()
    sheets = [r for r in everything if r.kind in SHEETS]
    assert sheets and {r.kind for r in model.review.awaiting(kinds=SHEETS)} == set(SHEETS)
    for sheet in sheets:
        assert model.review.approve(sheet.task_id).ok
    draw(db, tmp_path)
    firsts = model.review.awaiting(kinds=("first_frame", "last_frame"))
    assert firsts and {r.kind for r in firsts} == {"first_frame"}  # a last frame is drawn from its approved first
    assert model.review.approve(firsts[0].task_id).ok
    draw(db, tmp_path)
    queue = model.review.awaiting(kinds=("first_frame", "last_frame"))
    assert {r.kind for r in queue} == {"first_frame", "last_frame"}
    assert [i.task_id for i in engine.awaiting_review(db, model.bookcode, kinds=["last_frame"])] == [
        f"{firsts[0].shot_id}/last_frame"
    ]

    frame = model.review.frame(queue[0].task_id)
    assert frame is not None and frame.shot_id == queue[0].shot_id
    shot = model.shot(frame.shot_id or "")
    assert frame.text == shot.text and shot.text and frame.prompt
    assert frame.where == f"chapter {shot.chapter}, shot {shot.seq}"
    assert frame.media.ready and frame.media.mime == "image/png"
    with Image.open(frame.media.path or "") as im:
        assert im.size == (640, 360)
    assert model.review.reject(frame.task_id, "a lower sun").ok
    assert model.review.frame(frame.task_id) is None


def test_grid_buttons_review_panel_and_clip_on_click(sqlite_db: Database, tmp_path: Path, here: Path) -> None:
    """On the screen: a frame approved from its card and one rejected there with the grid's note
    leave the queue (the note box empties); the review panel shows the frame large with its
    shot's text and prompt and moves with previous and next; a clip plays only once clicked."""
    db = sqlite_db
    store.set_url(db, store.DATABASE_URL)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    draw(db, tmp_path)
    for sheet in model.review.awaiting(kinds=SHEETS):
        assert model.review.approve(sheet.task_id).ok
    draw(db, tmp_path)
    board = storyboard_screen(model, page_size=6)

    queue = [v for _, v in board.panel.waiting.options]
    assert len(queue) >= 3 and queue == [r.task_id for r in model.review.awaiting(kinds=("first_frame", "last_frame"))]
    assert (
        board.panel.waiting.value == queue[0]
        and board.panel.prev_frame.disabled
        and not board.panel.next_frame.disabled
    )
    assert "frame 1 of" in board.panel.position.value
    (large,) = board.panel.large.children
    assert isinstance(large.children[0], w.Image) and large.children[0].width == "640"
    shot = model.shot(queue[0].rsplit("/", 1)[0])
    assert html.escape(shot.text[:40]) in board.panel.frame_info.value and "Prompt" in board.panel.frame_info.value
    board.panel.next_frame.click()
    assert board.panel.waiting.value == queue[1] and "frame 2 of" in board.panel.position.value
    board.panel.prev_frame.click()
    assert board.panel.waiting.value == queue[0]

    cards = board.grid.children
    assert len(cards) == 6 and all("data-pk='shot-card'" in c.children[0].value for c in cards)
    thumbs = _inside(board.grid, w.Image)
    assert thumbs and all(t.format == "jpeg" for t in thumbs)
    approve = [b for b in _buttons(board.grid) if "pk-grid-approve" in b._dom_classes]
    reject = [b for b in _buttons(board.grid) if "pk-grid-reject" in b._dom_classes]
    assert approve and len(approve) == len(reject)
    target = approve[0].tooltip.removeprefix("approve ")
    approve[0].click()
    assert f"{target} approved" in board.message.widget.value
    assert len(board.panel.waiting.options) == len(queue) - 1
    reject = [b for b in _buttons(board.grid) if "pk-grid-reject" in b._dom_classes]
    reject[0].click()  # no note yet: refused, nothing changes
    assert "needs a note" in board.message.widget.value and len(board.panel.waiting.options) == len(queue) - 1
    board.grid_note.value = "less fog"
    reject[0].click()
    assert "redrawn with your note" in board.message.widget.value and board.grid_note.value == ""
    assert len(board.panel.waiting.options) == len(queue) - 2

    at = board.panel.waiting.value
    board.panel.approve.click()  # the panel shows the frame that came after the one decided
    assert at not in [v for _, v in board.panel.waiting.options]
    assert board.panel.waiting.value == [v for _, v in board.panel.waiting.options][0]

    for _ in ("first frames", "last frames"):  # a last frame is drawn once its first is approved
        for sheet_or_frame in model.review.awaiting():
            assert model.review.approve(sheet_or_frame.task_id).ok
        draw(db, tmp_path)
    for frame in model.review.awaiting():
        assert model.review.approve(frame.task_id).ok
    clip_src = tmp_path / "clip.mp4"
    clip_src.write_bytes(b"\x00\x00\x00\x18ftypmp42clip")
    for lease in engine.claim(db, "w2", ["video"], limit=1, lease_s=60):
        stored = DatabaseStore(db, tmp_path / "other-pc-cache").publish(f"outputs/{lease.task_id}.mp4", clip_src, {})
        engine.complete(
            db,
            Completion(
                task_id=lease.task_id,
                token=lease.token,
                output_path=stored.output_path,
                result={"sha256": stored.sha256, "bytes": stored.size},
            ),
        )
        clip_shot = lease.task_id.rsplit("/", 1)[0]
    board.refresh.click()  # what the worker made since
    board.state.value = "done"
    card = next(c for c in board.grid.children if f"data-shot='{clip_shot}'" in c.children[0].value)
    play = next(b for b in _buttons(card) if b.description == "▶ Play clip")
    clip_box = card.children[-1]
    assert clip_box.children == ()
    play.click()
    (video,) = clip_box.children
    assert isinstance(video, w.Video) and bytes(video.value).endswith(b"clip")


def _inside(widget: w.Widget, kind: type[W]) -> list[W]:
    """Every widget of that kind inside a widget tree."""
    if isinstance(widget, kind):
        return [widget]
    return [x for child in getattr(widget, "children", ()) for x in _inside(child, kind)]


def _buttons(widget: w.Widget) -> list[w.Button]:
    return _inside(widget, w.Button)


def test_page_shows_at_once_and_thumbnails_follow(sqlite_db: Database, tmp_path: Path, here: Path) -> None:
    """In a kernel (an event loop running) the page shows before its missing thumbnails are
    made: their slots say so, then fill from a task off the loop; leaving the page stops the
    filling of the page left."""
    db = sqlite_db
    store.set_url(db, store.DATABASE_URL)
    model = StoryboardModel(db, enter_book(db, 2))
    assert model.split().ok
    draw(db, tmp_path)

    async def in_kernel() -> None:
        board = storyboard_screen(model, page_size=4)
        assert model.thumbnails.made == 0 and not _inside(board.grid, w.Image)
        assert sum("drawing its thumbnail" in h.value for h in _inside(board.grid, w.HTML)) == len(
            [t for tiles in board.shown.tiles.values() for k, t in tiles.items() if k != "video"]
        )
        assert board.filler is not None
        first = board.filler
        board.next.click()  # left before its thumbnails were drawn
        assert first.cancelled() or first.cancelling()
        assert board.filler is not None
        await board.filler
        thumbs = _inside(board.grid, w.Image)
        frames = [t for tiles in board.shown.tiles.values() for k, t in tiles.items() if k != "video"]
        assert len(thumbs) == len(frames) == model.thumbnails.made
        board.prev.click()  # page 1 again: its thumbnails are drawn now, none drawn twice
        if board.filler is not None:
            await board.filler

    asyncio.run(in_kernel())
    assert model.thumbnails.made == len(set(p.name for p in (here / "user-cache").rglob("*.jpg")))
