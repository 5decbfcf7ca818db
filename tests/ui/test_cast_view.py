"""The cast in notebook 02, on every database: the bible listed with its sheets, an edit that
re-queues exactly that character's sheet and frames (and says so in a creator's words), and the
character sheets approved in their own step, which is what lets the waiting shots be drawn."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots, tasks
from pipeline_kit.store import set_url
from pipeline_kit.text.graph import sheet_task_id
from pipeline_kit.ui.cast_view import CastModel, CastScreen, shots_line
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.plural import plural

from .conftest import enter_book
from .test_review import _sketch_images

INTERNAL = ("awaiting_review", "task", "pending", "reset", "character_sheet")


def _book(db: Database, *, review: bool = False) -> str:
    model = StoryboardModel(db, enter_book(db, 2))
    assert model.split().ok
    if review:
        assert model.review.set_review(True).ok
    return model.bookcode


def _naming(db: Database, bookcode: str, name: str) -> set[str]:
    with db.engine.connect() as conn:
        return {
            r.shot_id
            for r in conn.execute(sa.select(shots.c.shot_id, shots.c.characters).where(shots.c.bookcode == bookcode))
            if name in (r.characters or ())
        }


def _statuses(db: Database) -> dict[str, str]:
    with db.engine.connect() as conn:
        return dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())


def _creator_words(text: str) -> None:
    assert not [w for w in INTERNAL if w in text.lower()], text


def test_the_bible_is_listed_with_its_sheets_and_waiting_shots(db: Database) -> None:
    """Each character shows its canonical name, aliases, first and last shot, and its sheet in
    words; the shots waiting on a sheet are the shots naming that character."""
    bookcode = _book(db)
    rows = {r.name: r for r in CastModel(db, bookcode).rows()}
    assert {"Mara", "Tobias", "Old Hetty"} <= set(rows)
    assert "Hetty" in rows["Old Hetty"].aliases
    mara = rows["Mara"]
    with db.engine.connect() as conn:
        places = sorted(
            (r.chapter, r.seq)
            for r in conn.execute(
                sa.select(shots.c.chapter, shots.c.seq, shots.c.characters).where(shots.c.bookcode == bookcode)
            )
            if "Mara" in (r.characters or ())
        )
    assert mara.first_shot and mara.last_shot and not mara.locked
    assert mara.appears == f"{places[0][0]}.{places[0][1]} to {places[-1][0]}.{places[-1][1]}"
    assert (mara.sheet_task, mara.sheet_state) == (sheet_task_id(bookcode, "Mara"), "waiting for a worker")
    assert len(mara.waiting_shots) == len(_naming(db, bookcode, "Mara")) > 0
    screen = CastScreen(CastModel(db, bookcode))
    assert "Old Hetty" in screen.table.value and "Hetty" in screen.table.value
    assert [v for _, v in screen.who.options] == [r.name for r in CastModel(db, bookcode).rows()]
    _creator_words(screen.table.value)


def test_an_edit_requeues_exactly_that_characters_sheet_and_frames(db: Database) -> None:
    """Describing a character sends back its sheet and the frames, clips and films of the shots
    naming it, nothing else, and says so in words; renaming before anything was drawn says it
    will be drawn with the change; a bad edit is a message, not an exception."""
    bookcode = _book(db)
    tobias = _naming(db, bookcode, "Tobias")
    renamed = CastModel(db, bookcode).rename("Tobias", "Tobias Wren")
    assert renamed.ok and renamed.message == (
        f"Tobias is now called Tobias Wren; nothing was drawn yet: the character sheet of Tobias Wren and "
        f"the frames and clips of {plural(len(tobias), 'shot')} will be drawn with the change"
    )
    assert _naming(db, bookcode, "Tobias Wren") == tobias

    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).values(status="completed", attempts=1, deps_remaining=0))
    model = CastModel(db, bookcode)
    mara = _naming(db, bookcode, "Mara")
    result = model.describe("Mara", "a girl of twelve in a red oilskin coat")
    assert result.ok, result.message
    pending = {t for t, s in _statuses(db).items() if s == "pending"}
    frames = {f"{s}/{k}" for s in mara for k in ("first_frame", "last_frame", "video")}
    films = {t for t in pending if "/film/" in t}
    assert pending == {sheet_task_id(bookcode, "Mara")} | frames | films and films
    assert result.message == (
        f"Mara's description saved; the character sheet of Mara and the frames and "
        f"clips of {plural(len(mara), 'shot')} and the films made from them will be redrawn"
    )
    _creator_words(result.message)
    screen = CastScreen(model)
    screen.who.value = "Mara"
    assert screen.description.value == "a girl of twelve in a red oilskin coat"
    refused = model.merge("Nobody", "Mara")
    assert not refused.ok and "no character 'Nobody'" in refused.message


def test_approving_the_cast_lets_the_waiting_shots_be_drawn(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With review on, drawn sheets wait for the creator and every shot naming that character
    waits on its sheet; a rejected sheet is redrawn with the note and a new seed while its shots
    keep waiting; approving the cast leaves no frame waiting on a sheet. Sheet pictures are
    fetched through the database store from another folder (the notebook's)."""
    set_url(db, "database")
    bookcode = _book(db, review=True)
    assert _sketch_images(db, tmp_path).stopped_by == "empty"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    model = CastModel(db, bookcode)
    waiting = model.to_review()
    assert waiting and all(r.sheet_state == "waiting for your review" and r.shown for r in waiting)
    assert all(Path(r.sheet_path or "").resolve().is_relative_to(tmp_path / "user-cache") for r in waiting)
    mara = next(r for r in waiting if r.name == "Mara")
    assert len(mara.waiting_shots) == len(_naming(db, bookcode, "Mara"))
    screen = CastScreen(model)
    assert f"{plural(len(waiting), 'character sheet')} wait for your review" in screen.review_line.value
    screen.waiting.value = "Mara"
    assert shots_line(mara.waiting_shots) in screen.waiting_shots.value
    assert screen.waiting_sheet.children  # the sheet shown large beside its shots

    screen.note.value = "give her a red coat"
    rejected = screen.reject_selected()
    assert rejected is not None and rejected.ok and screen.note.value == ""
    assert rejected.message.endswith(f"{plural(len(mara.waiting_shots), 'shot')} keep waiting for it")
    with db.engine.connect() as conn:
        params = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == sheet_task_id(bookcode, "Mara"))
        ).scalar_one()
    assert "give her a red coat" in params["prompt"]
    assert "Mara" not in [v for _, v in screen.waiting.options]

    approved = model.approve_all()
    assert approved.ok and approved.message.startswith("the cast approved")
    _creator_words(approved.message + screen.review_line.value)
    held = {r.shot_id for r in _held(db, bookcode)}
    assert {r.name for r in model.rows() if r.waiting_shots} == {"Mara"}  # approved sheets hold nothing
    assert held == _naming(db, bookcode, "Mara")  # only the redrawn sheet's shots still wait
    assert _sketch_images(db, tmp_path).stopped_by == "empty"
    last = model.approve("Mara")
    assert last.ok and last.message == (
        f"the character sheet of Mara approved: {plural(len(_naming(db, bookcode, 'Mara')), 'shot')} can now be drawn"
    )
    assert not _held(db, bookcode) and not any(r.waiting_shots for r in model.rows())


def _held(db: Database, bookcode: str) -> list[sa.Row]:  # type: ignore[type-arg]
    """First frames still waiting on another task (a sheet not yet approved); a last frame also
    waits on its shot's first frame."""
    with db.engine.connect() as conn:
        return conn.execute(
            sa.select(tasks.c.shot_id).where(
                tasks.c.bookcode == bookcode,
                tasks.c.kind == "first_frame",
                tasks.c.deps_remaining > 0,
            )
        ).all()
