"""A worker publishes a small JPEG beside each image it makes, and the storyboard shows it from any
PC without fetching the whole frame: a thumbnail comes through the store in a few kilobytes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from PIL import Image

from pipeline_kit import store, thumbnail
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.store import Store, open_store
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.ui.thumbnails import Thumbnails
from pipeline_kit.worker import WorkerConfig, run_worker

from .conftest import enter_book


class Counting:
    """A store that counts what is fetched through it (whole outputs and side files apart)."""

    def __init__(self, inner: Store) -> None:
        self.inner, self.whole, self.sides = inner, 0, 0

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        self.whole += 1
        return self.inner.fetch(output_path, result)

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        self.sides += 1
        return self.inner.fetch_side(output_path, result, suffix)


def test_worker_publishes_a_thumbnail_that_screens_show_without_the_frame(db: Database, tmp_path: Path) -> None:
    """Sheets and frames drawn by a sketch worker in one folder carry a `.thumb.jpg` side (a JPEG that fits
    256x144) in the store the database names (the database itself on servers); a screen in another
    folder gets each thumbnail through the store without fetching a single whole frame, and a
    second look fetches nothing at all."""
    if db.dialect != "sqlite":
        store.set_url(db, store.DATABASE_URL)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    made_on = tmp_path / "worker-pc"
    run_worker(
        db,
        WorkerConfig(
            worker_id="w1",
            lanes=("image",),
            backend="sketch",
            max_tasks=3,
            progress=False,
            outputs=made_on / "data" / "outputs",
            spool=made_on / "spool",
            poll_s=0.05,
        ),
    )
    with db.engine.connect() as conn:
        done = conn.execute(sa.select(tasks.c.output_path, tasks.c.result).where(tasks.c.status == "completed")).all()
    assert len(done) == 3 and all(thumbnail.SUFFIX in (r.result.get("sides") or {}) for r in done)

    viewer = Counting(open_store(db, cache=tmp_path / "viewer" / "cache"))
    thumbs = Thumbnails(tmp_path / "viewer" / "thumbnails")
    shown = [thumbs.of(viewer, r.output_path, r.result) for r in done]
    assert all(p is not None and p.is_file() for p in shown)
    for path in shown:
        with Image.open(path) as im:
            assert im.format == "JPEG" and im.width <= 256 and im.height <= 144 and max(im.size) >= 144
    assert (viewer.whole, viewer.sides, thumbs.made) == (0, 3, 3)
    assert [thumbs.of(viewer, r.output_path, r.result) for r in done] == shown
    assert (viewer.whole, viewer.sides) == (0, 3)  # seen again: nothing fetched


def test_a_frame_without_a_published_thumbnail_is_drawn_here(sqlite_db: Database, tmp_path: Path) -> None:
    """A frame published without a thumbnail (before workers made them) still gets one, drawn on
    this PC from the whole frame."""
    frame = tmp_path / "frame.png"
    Image.new("RGB", (1280, 720), (200, 120, 40)).save(frame)
    folder = open_store(sqlite_db, cache=tmp_path / "cache")
    stored = folder.publish("outputs/x/first_frame.png", frame, {})
    viewer = Counting(folder)
    thumbs = Thumbnails(tmp_path / "thumbnails")
    path = thumbs.of(viewer, stored.output_path, {"sha256": stored.sha256})
    assert path is not None and (viewer.whole, viewer.sides, thumbs.made) == (1, 0, 1)
    with Image.open(path) as im:
        assert im.size == (256, 144)
