"""Editing and re-running a shot: its row and its tasks' params change, and only its tasks are reset."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots, task_deps, tasks
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text import edit_shot, rerun_shot, show_shot
from tests.text.helpers import book_all_completed


def _statuses(db: Database) -> dict[str, tuple[str, int]]:
    with db.engine.connect() as conn:
        return {r.task_id: (r.status, r.attempts) for r in conn.execute(sa.select(tasks))}


def test_edit_updates_the_shot_and_resets_only_its_tasks(db: Database) -> None:
    """An edit rewrites the shot and its tasks' params, resets its three tasks (attempts kept) and
    what depends on them (its chapter's film and the book's), nothing else. A name given by its
    alias (Hetty) is stored as the bible's character (Old Hetty)."""
    bookcode = book_all_completed(db)
    sid = f"{bookcode}-c002-s0003"
    before = _statuses(db)
    report = edit_shot(db, sid, prompt="A baker by a smoking lamp", characters=["Hetty", "Mara"], location="Lamp room")
    mine = {
        f"{sid}/first_frame",
        f"{sid}/last_frame",
        f"{sid}/video",
        f"{bookcode}/film/chapter-002",
        f"{bookcode}/film/book",
    }
    assert set(report.reset) == mine
    after = _statuses(db)
    for task_id, (status, attempts) in after.items():
        if task_id in mine:
            assert (status, attempts) == ("pending", 1)
        else:
            assert (status, attempts) == before[task_id]
    shot = show_shot(db, sid)
    assert (shot.prompt, shot.characters, shot.location) == (
        "A baker by a smoking lamp",
        ("Old Hetty", "Mara"),
        "Lamp room",
    )
    with db.engine.connect() as conn:
        params = {r.task_id: r.params for r in conn.execute(sa.select(tasks).where(tasks.c.shot_id == sid))}
        assert conn.execute(sa.select(shots.c.edited_at).where(shots.c.shot_id == sid)).scalar() is not None
    assert params[f"{sid}/first_frame"]["prompt"].startswith("A baker by a smoking lamp")
    assert params[f"{sid}/last_frame"]["characters"] == ["Old Hetty", "Mara"]
    assert params[f"{sid}/first_frame"]["location"] == "Lamp room"
    assert "Lamp room" in params[f"{sid}/video"]["video_prompt"]


def test_rerun_resets_only_that_shot(db: Database) -> None:
    """A re-run sends the shot's tasks and their dependents (its chapter's film, the book's) back
    to pending, nothing else."""
    bookcode = book_all_completed(db)
    sid = f"{bookcode}-c001-s0001"
    before = _statuses(db)
    report = rerun_shot(db, sid)
    assert set(report.reset) == {
        f"{sid}/first_frame",
        f"{sid}/last_frame",
        f"{sid}/video",
        f"{bookcode}/film/chapter-001",
        f"{bookcode}/film/book",
    }
    changed = {t for t, v in _statuses(db).items() if v != before[t]}
    assert changed == set(report.reset)


def test_edit_with_a_new_character_adds_its_sheet(db: Database) -> None:
    """Naming a new character in an edit enqueues that character's sheet (existing sheets untouched)."""
    bookcode = book_all_completed(db)
    edit_shot(db, f"{bookcode}-c003-s0001", characters=["Mara", "The Old Sailor"])
    status = _statuses(db)
    assert status[f"{bookcode}/char/the-old-sailor"] == ("pending", 0)
    assert status[f"{bookcode}/char/mara"] == ("completed", 1)
    with db.engine.connect() as conn:
        deps = set(
            conn.execute(
                sa.select(task_deps.c.depends_on).where(task_deps.c.task_id == f"{bookcode}-c003-s0001/first_frame")
            ).scalars()
        )
        waiting = conn.execute(
            sa.select(tasks.c.deps_remaining).where(tasks.c.task_id == f"{bookcode}-c003-s0001/first_frame")
        ).scalar()
    # the frame now waits on exactly the sheets of the shot's characters, the new one unfinished
    assert deps == {f"{bookcode}/char/mara", f"{bookcode}/char/the-old-sailor"}
    assert waiting == 1


def test_bad_edits_are_refused(db: Database) -> None:
    """Unknown shots are NotFound; an edit with nothing to change or an empty prompt is BadInput."""
    bookcode = book_all_completed(db)
    before = _statuses(db)
    with pytest.raises(NotFound):
        edit_shot(db, "nope", prompt="x")
    with pytest.raises(NotFound):
        rerun_shot(db, "nope")
    with pytest.raises(BadInput):
        edit_shot(db, f"{bookcode}-c001-s0001")
    with pytest.raises(BadInput):
        edit_shot(db, f"{bookcode}-c001-s0001", prompt="   ")
    assert _statuses(db) == before
