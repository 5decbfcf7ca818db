"""02_storyboard in a real browser: Voilà serves `notebooks/` and the book comes from `?bookcode=`
in the address; sketch workers run from another folder publish into the database store and stop
by themselves when only review is left; thumbnails of their frames appear in the grid; a frame is
approved from the grid; the review panel shows the frame large and moves with next and previous;
a rejection with a note queues a redraw whose prompt carries the note and whose seed is new; after
*Save and re-run* the prompt box shows the saved text.

Skipped (failed in CI) without Chromium, Playwright or Voilà, like the monitor's browser test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import store
from pipeline_kit.db import create
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.engine import last_decisions
from pipeline_kit.engine.lanes import seed_default_lanes
from pipeline_kit.ui.review import SHEETS
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.ui.words import describe_task

from .conftest import enter_book
from .test_monitor_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    _require_browser,
    voila_serving,
)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SCREENSHOT = Path(__file__).resolve().parents[2] / "reports" / "storyboard_browser.png"
NOTE = "make the sea rougher"
PROMPT = "A gull over the harbour at dawn"


@pytest.mark.timeout(300)
@pytest.mark.db
def test_storyboard_page_reviews_and_saves(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    url = f"sqlite:///{tmp_path / 'film.db'}"
    db = create(url)
    init(db)
    seed_default_lanes(db)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    store.set_url(db, store.DATABASE_URL)  # what another PC's worker makes reaches this one
    elsewhere = tmp_path / "worker-pc"
    elsewhere.mkdir()
    _work(url, elsewhere)  # the character sheets, then only review is left
    for sheet in model.review.awaiting(kinds=SHEETS):  # the cast step approves them
        assert model.review.approve(sheet.task_id).ok
    _work(url, elsewhere)  # the frames
    queue = model.review.awaiting(kinds=("first_frame", "last_frame"))
    assert len(queue) >= 3
    with db.engine.connect() as conn:  # each frame's prompt and the seed it was drawn with
        before = {
            r.task_id: (
                conn.execute(sa.select(tasks.c.params).where(tasks.c.task_id == r.task_id)).scalar_one()["prompt"],
                conn.execute(sa.select(attempts.c.settings).where(attempts.c.task_id == r.task_id)).scalar_one()[
                    "seed"
                ],
            )
            for r in queue
        }

    with voila_serving(NOTEBOOKS, cwd=tmp_path, env={"PIPELINE_KIT_DB": url}) as port:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(
                f"http://127.0.0.1:{port}/voila/render/02_storyboard.ipynb?bookcode={model.bookcode}",
                timeout=120_000,
            )
            expect(page.locator("[data-pk='review-count']")).to_contain_text("waiting for your review", timeout=120_000)
            expect(page.locator("[data-pk='bookcode']")).to_have_text(model.bookcode)
            thumbs = page.locator("img.pk-thumb")
            expect(thumbs.first).to_be_visible(timeout=30_000)
            assert thumbs.count() >= 2
            assert thumbs.first.evaluate("img => img.naturalWidth") == 256  # a thumbnail, not the frame
            page.locator(".pk-card").first.scroll_into_view_if_needed()
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT.with_name("storyboard_grid.png")))

            large = page.locator("img[width='640']")  # the frame under review, large
            expect(large).to_be_visible()
            assert large.evaluate("img => img.naturalWidth") == 640
            position = page.locator("[data-pk='review-position']")
            expect(position).to_have_text(f"frame 1 of {len(queue)}")
            page.get_by_role("button", name="Next frame ▶").click()
            expect(position).to_have_text(f"frame 2 of {len(queue)}")
            page.get_by_role("button", name="◀ Previous frame").click()
            expect(position).to_have_text(f"frame 1 of {len(queue)}")

            grid_approve = page.locator("button.pk-grid-approve").first
            approved = grid_approve.get_attribute("title") or ""
            grid_approve.click()
            expect(page.locator("[data-pk='message']")).to_contain_text("approved", timeout=30_000)
            expect(position).to_have_text(f"frame 1 of {len(queue) - 1}", timeout=30_000)

            page.get_by_placeholder("what to change (needed to reject)").fill(NOTE)
            page.locator("button.pk-reject").click()
            expect(page.locator("[data-pk='message']")).to_contain_text("redrawn with your note", timeout=30_000)
            expect(page.get_by_placeholder("what to change (needed to reject)")).to_have_value("")

            page.locator(".pk-card").last.get_by_role("button", name="Edit").click()  # not the shot rejected above
            expect(page.locator("textarea").first).to_be_focused(timeout=30_000)
            page.locator("textarea").first.fill(f"  {PROMPT}  ")
            page.get_by_role("button", name="Save and re-run").click()
            expect(page.locator("[data-pk='message']")).to_contain_text("saved", timeout=30_000)
            expect(page.locator("textarea").first).to_have_value(PROMPT)
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            browser.close()

    with db.engine.connect() as conn:
        after = {
            task_id: conn.execute(sa.select(tasks.c.params).where(tasks.c.task_id == task_id)).scalar_one()
            for task_id in before
        }
    approvals = [
        d.task_id for d in last_decisions(db, model.bookcode) if d.decision == "approve" and d.task_id in before
    ]
    db.dispose()
    (redrawn,) = [t for t, params in after.items() if params["prompt"].endswith(NOTE)]
    old_prompt, old_seed = before[redrawn]
    assert after[redrawn]["prompt"].startswith(old_prompt) and after[redrawn]["seed"] != old_seed
    (by_grid,) = approvals  # the frame approved from the grid
    assert approved == f"approve {describe_task(by_grid)}"


def _work(url: str, folder: Path) -> None:
    """A sketch worker on the image lane, run in `folder` (another PC's), until only review is left."""
    worker = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline_kit",
            "--db",
            url,
            "work",
            "--worker-id",
            "w1",
            "--lanes",
            "image",
            "--until-empty",
            "--quiet",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert worker.returncode == 0 and "stopped: empty" in worker.stdout, worker.stdout + worker.stderr
