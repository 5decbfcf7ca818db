"""The storyboard view-model on every database: split, filter and page, edit and re-run, media, and
the review gate (frames wait for a person; a rejected frame is made again)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine, store
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import Completion
from pipeline_kit.store.database import DatabaseStore
from pipeline_kit.ui.storyboard import StoryboardModel

from .conftest import enter_book


def _status(db: Database, task_id: str) -> str:
    with db.engine.connect() as conn:
        return str(conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar_one())


def _finish_all(db: Database, lane: str, out: Path | None = None) -> list[str]:
    """Claim and complete every task the lane offers now (with a PNG each when `out` is given)."""
    done = []
    for lease in engine.claim(db, "w1", [lane], limit=100, lease_s=60):
        path = None
        if out is not None:
            path = out / f"{len(done)}.png"
            path.write_bytes(b"\x89PNG\r\n\x1a\n")
        engine.complete(
            db, Completion(task_id=lease.task_id, token=lease.token, output_path=str(path) if path else None)
        )
        done.append(lease.task_id)
    return done


def test_split_filter_page_edit_rerun(db: Database) -> None:
    """Split once; filters narrow the pages; an edit and a re-run reset only that shot's tasks."""
    model = StoryboardModel(db, enter_book(db, 2))
    first = model.split()
    assert first.ok and first.message.startswith("split 2 chapters")
    assert model.split().message.startswith("nothing to split")
    filters = model.filters()
    assert filters.chapters == (1, 2) and "Mara" in filters.characters

    everything = model.page(1, 5)
    assert everything.pages == -(-everything.total // 5) and len(everything.rows) == 5
    assert model.page(999, 5).page == everything.pages
    assert set(everything.rows[0].statuses) == {"first_frame", "last_frame", "video", "voice"}  # every shot task
    in_two = model.page(1, 1000, chapter=2)
    assert in_two.total and all(r.chapter == 2 for r in in_two.rows)
    name = filters.characters[0]
    with_name = model.page(1, 1000, character=name).rows
    assert with_name and all(name in r.characters for r in with_name)
    if filters.locations:
        place = filters.locations[0]
        assert all(r.location == place for r in model.page(1, 1000, location=place).rows)

    shot_id = everything.rows[0].shot_id
    edited = model.edit(
        shot_id, prompt="A lighthouse at dusk, wide shot", characters="Mara, Tobias Fenn", location="the pier"
    )
    assert edited.ok, edited.message
    shot = model.shot(shot_id)
    assert (shot.prompt, shot.characters, shot.location) == (  # Tobias Fenn, his full name, is Tobias
        "A lighthouse at dusk, wide shot",
        ("Mara", "Tobias"),
        "the pier",
    )
    assert not model.edit(shot_id, prompt="   ").ok
    assert not model.edit("no-such-shot", location="x").ok
    rerun = model.rerun(shot_id)  # nothing ran yet: no claim that anything "will run again"
    assert rerun.ok and "nothing was made yet" in rerun.message and "task" not in rerun.message


def test_review_gate_media_approve_reject(db: Database, tmp_path: Path) -> None:
    """With review on, sheets and frames wait; a last frame is drawn once its first is approved;
    the clip is claimable only after both are approved; a rejected frame goes back to pending."""
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    assert not model.review.review_on()
    assert model.review.set_review(True).ok and model.review.review_on()

    first = _finish_all(db, "image", tmp_path)  # the sheets (and first frames of shots that need none)
    assert first and {r.task_id for r in model.review.awaiting()} == set(first)
    for task_id in first:
        assert model.review.approve(task_id).ok
    frames = _finish_all(db, "image", tmp_path)
    assert frames and all(_status(db, t) == "awaiting_review" for t in frames)
    assert engine.claim(db, "w1", ["video"], limit=100) == []  # no clip before both its frames are approved

    shot_id = sorted(t.rsplit("/", 1)[0] for t in frames if t.endswith("/first_frame"))[0]
    assert model.review.approve(f"{shot_id}/first_frame").ok
    assert f"{shot_id}/last_frame" in _finish_all(db, "image", tmp_path)  # drawn from the approved first
    media = model.media(shot_id)
    assert [(m.kind, m.status, m.ready, m.mime) for m in media] == [
        ("first_frame", "completed", True, "image/png"),
        ("last_frame", "awaiting_review", True, "image/png"),
        ("video", "pending", False, None),
    ]
    assert engine.claim(db, "w1", ["video"], limit=100) == []
    assert model.review.approve(f"{shot_id}/last_frame").ok
    assert [lease.task_id for lease in engine.claim(db, "w1", ["video"], limit=100)] == [f"{shot_id}/video"]

    other = next(t for t in frames if not t.startswith(shot_id + "/"))
    assert not model.review.reject(other, "  ").ok
    rejected = model.review.reject(other, "Mara's coat should be red")
    assert rejected.ok and _status(db, other) == "pending"
    assert other not in {r.task_id for r in model.review.awaiting()}
    assert not model.review.approve(other).ok
    assert model.review.set_review(False).ok and not model.review.review_on()


def test_media_are_fetched_through_the_store(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame kept only in the database store (made on another PC) shows: the storyboard
    fetches it into this PC's cache instead of looking for another PC's path."""
    monkeypatch.chdir(tmp_path)  # the notebook runs here; its cache is the user cache
    store.set_url(db, store.DATABASE_URL)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    made = tmp_path / "elsewhere.png"
    made.write_bytes(b"\x89PNG\r\n\x1a\nframe")
    while leases := engine.claim(db, "w1", ["image"], limit=100):  # sheets, then frames
        for lease in leases:
            stored = DatabaseStore(db, tmp_path / "other-pc").publish(f"outputs/{lease.task_id}.png", made, {})
            engine.complete(
                db,
                Completion(
                    task_id=lease.task_id,
                    token=lease.token,
                    output_path=stored.output_path,
                    result={"sha256": stored.sha256, "bytes": stored.size},
                ),
            )
    made.unlink()
    shot_id = model.page(1, 1).rows[0].shot_id
    first = model.media(shot_id)[0]
    assert (first.kind, first.ready, first.mime) == ("first_frame", True, "image/png")
    assert Path(first.path).read_bytes().endswith(b"frame")
    assert Path(first.path).resolve().is_relative_to(tmp_path.resolve())  # this PC's cache
