"""Review a creator can act on, on every database: a rejection's note changes the redraw (prompt
and seed), what waits for review is counted and the last decisions are shown (storyboard, status,
monitor), workers stop or say so when only review is left, and states read in a creator's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.cli.engine_cmds import render_status
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.engine import Completion
from pipeline_kit.store import open_store
from pipeline_kit.text.graph import sheet_task_id
from pipeline_kit.ui.cast_view import CastModel
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.monitor_view import monitor_screen
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.worker import WorkerConfig, run_worker
from pipeline_kit.plural import plural

from .conftest import enter_book

NOTE = "Mara's coat should be red"


def _task(db: Database, task_id: str) -> Any:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(tasks).where(tasks.c.task_id == task_id)).one()


def _last_attempt(db: Database, task_id: str) -> Any:
    with db.engine.connect() as conn:
        return conn.execute(
            sa.select(attempts).where(attempts.c.task_id == task_id).order_by(attempts.c.attempt_no.desc()).limit(1)
        ).one()


def _fetched(db: Database, tmp_path: Path, row: Any) -> bytes:
    """A task's output bytes, read through the store in effect (the database on servers)."""
    store = open_store(db, cache=tmp_path / "cache")
    return store.fetch(row.output_path, dict(row.result or {})).read_bytes()


def _sketch_images(db: Database, tmp_path: Path) -> Any:
    """Run a sketch worker on the image lane until only review is left (half a minute at most)."""
    return run_worker(
        db,
        WorkerConfig(
            worker_id="w1",
            lanes=("image",),
            backend="sketch",
            until_empty=True,
            outputs=tmp_path / "out",
            spool=tmp_path / "spool",
            progress=False,
            poll_s=0.05,
            max_minutes=0.5,
        ),
    )


def test_rejection_note_and_new_seed_change_the_redraw(db: Database, tmp_path: Path) -> None:
    """A rejected frame is redrawn from its prompt plus the note and from a new seed, both on the
    next attempt, so the sketch backend draws a different picture; a worker `--until-empty`
    stops when only review is left, saying how many frames wait."""
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    first = _sketch_images(db, tmp_path)
    assert first.stopped_by == "empty", first.line()
    assert first.awaiting_review and "need your review" in first.line()
    assert CastModel(db, model.bookcode).approve_all().ok  # the sheets approved: the frames are drawn
    assert _sketch_images(db, tmp_path).stopped_by == "empty"

    frame = next(r for r in model.review.awaiting() if r.kind == "first_frame")
    before = _task(db, frame.task_id)
    old_png, old_seed = (
        _fetched(db, tmp_path, before),
        _last_attempt(db, frame.task_id).settings["seed"],
    )
    rejected = model.review.reject(frame.task_id, NOTE)
    assert rejected.ok and "redrawn with your note" in rejected.message and "task(s)" not in rejected.message
    queued = _task(db, frame.task_id)
    assert queued.status == "pending"
    assert queued.params["prompt"].startswith(before.params["prompt"]) and queued.params["prompt"].endswith(NOTE)
    assert queued.params["seed"] != old_seed

    again = _sketch_images(db, tmp_path)
    assert again.stopped_by == "empty" and again.counts["completed"] >= 1
    redrawn = _task(db, frame.task_id)
    attempt = _last_attempt(db, frame.task_id)
    assert redrawn.status == "awaiting_review" and attempt.outcome == "completed"
    assert attempt.settings["seed"] == queued.params["seed"] != old_seed
    assert _fetched(db, tmp_path, redrawn) != old_png


def test_idle_worker_says_frames_need_review(
    sqlite_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker left with nothing but review says so on its progress line instead of a still
    counter, and its summary says how many frames wait."""
    model = StoryboardModel(sqlite_db, enter_book(sqlite_db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    summary = run_worker(
        sqlite_db,
        WorkerConfig(
            worker_id="w1",
            lanes=("image",),
            backend="sketch",
            outputs=tmp_path / "out",
            spool=tmp_path / "spool",
            poll_s=0.05,
            max_minutes=0.03,
        ),
    )
    waiting = model.review.counts().total
    assert waiting and summary.stopped_by == "max-minutes"
    assert f"waiting: {waiting} frames need review" in capsys.readouterr().err


def _finish_images(db: Database, out: Path) -> list[str]:
    """Claim and complete every image the lane offers now, each with a (tiny) PNG."""
    done = []
    for lease in engine.claim(db, "w1", ["image"], limit=500, lease_s=60):
        path = out / f"{len(done)}.png"
        path.write_bytes(b"\x89PNG\r\n\x1a\n")
        engine.complete(db, Completion(task_id=lease.task_id, token=lease.token, output_path=str(path)))
        done.append(lease.task_id)
    return done


def test_review_counts_decisions_and_states_in_words(db: Database, tmp_path: Path) -> None:
    """The storyboard, `status` and the monitor count what waits for review (frames and sheets
    apart) and list the last decisions with who and the note; a shot's states read in words;
    work held only by review is not open work. (Two chapters: the first alone has one shot
    without Mara, too few for a frame to wait once one is rejected.)"""
    model = StoryboardModel(db, enter_book(db, 2))
    assert model.split().ok and model.review.set_review(True).ok
    assert model.review.counts().line() == "nothing waits for your review"
    done = _finish_images(db, tmp_path)
    kept = sheet_task_id(model.bookcode, "Mara")  # every sheet but hers approved: the shots without her are drawn
    approved = [t for t in done if t != kept]
    assert kept in done and engine.approve_many(db, approved)
    done = [kept, *_finish_images(db, tmp_path)]
    sheets = [kept]
    counts = model.review.counts()
    assert (counts.frames, counts.sheets) == (len(done) - 1, 1) and counts.frames
    held_shots = {r.shot_id for r in model.page(1, 1000).rows if f"{r.shot_id}/first_frame" not in done}
    assert (
        counts.shots_on_sheets == len(held_shots) and f"{plural(len(held_shots), 'shot')} wait on them" in counts.line()
    )
    assert engine.open_work(db, ["image", "video", "assembly"]) == 0  # only a person can go on

    rows = model.page(1, 1000).rows
    drawn = next(r for r in rows if f"{r.shot_id}/first_frame" in done)
    assert drawn.states["first_frame"] == "waiting for your review"
    assert drawn.states["video"] == "waiting for its frames"
    held = next(r for r in rows if f"{r.shot_id}/first_frame" not in done)
    assert held.states["first_frame"] == "waiting for its character and place sheets"
    assert drawn.states["last_frame"] == "waiting for its first frame and sheets"  # drawn after the first

    assert model.review.approve(sheets[0], by="ana").ok
    assert engine.open_work(db, ["image"]) > 0  # Mara's shots can now be drawn
    assert model.review.reject(f"{drawn.shot_id}/first_frame", NOTE, by="ben").ok
    counts = model.review.counts()
    assert counts.total == len(done) - 2
    newest, older = counts.decisions[:2]
    assert (newest.decision, newest.by, newest.note) == ("reject", "ben", NOTE)
    assert (older.decision, older.by, older.note, older.task_id) == (
        "approve",
        "ana",
        None,
        sheets[0],
    )
    assert (
        next(r for r in model.page(1, 1000).rows if r.shot_id == drawn.shot_id).states["first_frame"]
        == "waiting for a worker"
    )

    view = engine.overview(db, model.bookcode)
    assert view.awaiting_review == counts.total and view.decisions[0].note == NOTE
    assert view.to_json()["decisions"][0]["decision"] == "reject"
    page = render_status(view, bookcode=model.bookcode)
    assert f"waiting for your review: {counts.total}" in page
    assert f"rejected {drawn.shot_id}/first_frame by ben: {NOTE}" in page

    screen = monitor_screen(MonitorModel(db, model.bookcode), auto=False)
    assert (
        f"<b>{counts.total}</b> {'frame' if counts.total == 1 else 'frames'} wait for your review"
        in screen.review.value
    )
    assert "ben" in screen.review.value and "rejected" in screen.review.value


def test_monitor_says_an_idle_worker_waits_for_review(db: Database, tmp_path: Path) -> None:
    """An idle worker whose lanes hold only work that review holds back reads 'waiting for review
    (N frames)' in the monitor, N being what waits; an idle worker of a lane with nothing in it
    stays 'idle', and once the frames are approved the worker is idle again (its work is open)."""
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    _finish_images(db, tmp_path)
    engine.register_worker(db, "pc-1", lanes=["image", "video", "assembly"])
    engine.register_worker(db, "pc-2", lanes=["nothing-here"])
    for worker in ("pc-1", "pc-2"):
        engine.touch_worker(db, worker, "idle")
    waiting = engine.review_count(db)
    rows = {r.worker_id: r for r in MonitorModel(db).snapshot().workers}
    assert rows["pc-1"].state == f"waiting for review ({waiting} frames)" and waiting > 1
    assert rows["pc-2"].state == "idle"
    screen = monitor_screen(MonitorModel(db), auto=False)
    assert f"waiting for review ({waiting} frames)" in screen.workers.value

    assert engine.approve_many(db, [r.task_id for r in model.review.awaiting()])
    rows = {r.worker_id: r for r in MonitorModel(db).snapshot().workers}
    assert rows["pc-1"].state == "idle"
