"""The embedded default from any folder, as a creator runs it (issue 24): on SQLite with no
`store set`, two sketch workers in two folders make the book, Voilà serves `notebooks/` from a
third, and `export` runs from a fourth. Every task completes; in the browser every card on the
storyboard shows its thumbnail (none says the frame cannot be shown) and the chapter's film plays
on the page; export writes every output. Skipped (failed in CI) without Chromium, Playwright or Voilà.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.ui.storyboard import StoryboardModel

from .conftest import enter_book
from .test_cast_browser import NOTEBOOKS
from .test_monitor_browser import CHROMIUM, CHROMIUM_ARGS, _require_browser, voila_serving

WAIT = 120_000  # ms: a page's first draw on a busy 2-core machine


def _pc(url: str, folder: Path, worker: str) -> subprocess.Popen[str]:
    """`pipeline-kit work` as a PC's terminal starts it, in that PC's own folder."""
    folder.mkdir()
    command = [sys.executable, "-m", "pipeline_kit", "--db", url, "work", "--worker-id", worker, "--until-empty"]
    return subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(600)
def test_workers_voila_and_export_in_four_folders_share_every_file(sqlite_db: Database, tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    db = sqlite_db
    url = db.engine.url.render_as_string(hide_password=False)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    workers = [_pc(url, tmp_path / f"pc-{name}", name) for name in ("A", "B")]
    outputs = [w.communicate(timeout=420) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [err[-2000:] for _, err in outputs]
    with db.engine.connect() as conn:
        statuses = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())
    assert statuses and set(statuses.values()) == {"completed"}, statuses
    shots = len(model.page(1, 1000).rows)

    served = tmp_path / "served-from"
    served.mkdir()
    env = {"PIPELINE_KIT_DB": url, "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    with voila_serving(NOTEBOOKS, cwd=served, env=env) as port, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        page.goto(f"http://127.0.0.1:{port}/voila/render/02_storyboard.ipynb?bookcode={model.bookcode}", timeout=WAIT)
        cards = page.locator(".pk-card")
        expect(cards.first).to_be_visible(timeout=WAIT)
        shown = cards.count()
        assert 0 < shown <= shots
        thumbs = page.locator(".pk-card img.pk-thumb")
        expect(thumbs).to_have_count(2 * shown, timeout=WAIT)  # both frames of every card shown
        assert all(n > 0 for n in thumbs.evaluate_all("imgs => imgs.map(i => i.naturalWidth)"))
        expect(page.get_by_text("the frame cannot be shown now")).to_have_count(0)
        video = page.locator("video").first
        expect(video).to_be_attached(timeout=WAIT)
        duration = video.evaluate(
            "v => new Promise(done => v.readyState >= 1 ? done(v.duration)"
            " : v.addEventListener('loadedmetadata', () => done(v.duration)))"
        )
        assert duration > 0
        browser.close()

    (tmp_path / "elsewhere").mkdir()
    exported = subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", url, "export", model.bookcode, "out"],
        cwd=tmp_path / "elsewhere",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    with db.engine.connect() as conn:
        names = list(conn.execute(sa.select(tasks.c.output_path).where(tasks.c.output_path.is_not(None))).scalars())
    assert names and all((tmp_path / "elsewhere" / "out" / n).is_file() for n in names)
