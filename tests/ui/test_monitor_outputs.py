"""The monitor shows what was made through the output store, on every database: the latest frames
and character sheets appear from another folder after the worker's own files are gone, newest
first, and a refresh does not send a picture to the page twice."""

from __future__ import annotations

import shutil
from pathlib import Path

import ipywidgets as w
import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.store import set_url
from pipeline_kit.ui.monitor import LATEST, MonitorModel
from pipeline_kit.ui.monitor_view import monitor_screen
from pipeline_kit.ui.storyboard import StoryboardModel

from .conftest import enter_book
from .test_review import _sketch_images


def test_latest_pictures_come_through_the_store(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a sketch worker drew a chapter into the database store and its folder is deleted,
    the monitor (run from another folder) shows the last pictures drawn, newest first, fetched
    into its own cache; pictures already shown keep their widgets on refresh."""
    set_url(db, "database")
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    assert _sketch_images(db, tmp_path).stopped_by == "empty"
    shutil.rmtree(tmp_path / "out")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")

    with db.engine.connect() as conn:
        newest = list(
            dict.fromkeys(
                conn.execute(
                    sa.select(attempts.c.task_id)
                    .join(tasks, tasks.c.task_id == attempts.c.task_id)
                    .where(
                        attempts.c.outcome == "completed",
                        tasks.c.kind.in_(["first_frame", "last_frame", "character_sheet"]),
                    )
                    .order_by(attempts.c.id.desc())
                ).scalars()
            )
        )[:LATEST]
    monitor = MonitorModel(db, model.bookcode)
    latest = monitor.latest()
    assert [p.task_id for p in latest] == newest and len(newest) == LATEST
    assert all(p.ready and Path(p.path or "").resolve().is_relative_to(tmp_path / "user-cache") for p in latest)
    assert not any((tmp_path / "elsewhere").iterdir())  # nothing written under the notebook's folder
    assert Path(latest[0].path or "").read_bytes().startswith(b"\x89PNG")

    screen = monitor_screen(monitor, auto=False)
    pictures = screen.latest.children
    assert len(pictures) == LATEST and all(isinstance(p.children[0], w.Image) for p in pictures)
    assert "of shot" in pictures[0].children[1].value or "character sheet" in pictures[0].children[1].value
    screen.refresh_now()
    assert screen.latest.children == pictures
    assert "no film made yet" in screen.films.children[0].value
