"""The cast step of 02_storyboard in a real browser: Voilà serves `notebooks/`, a sketch worker run
from another folder (outputs relative to it) drew the character sheets into the database store;
the page shows each sheet's picture and the shots waiting on it, and *Accept the whole cast*
leaves no frame waiting on a sheet (the storyboard's review counts above follow); a chapter film
in the database store plays on the page and has a download link. Skipped (failed in CI) without
Chromium, Playwright or Voilà.
"""

from __future__ import annotations

import re

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.store import set_url
from pipeline_kit.ui.cast_view import CastModel
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.plural import plural

from .conftest import enter_book
from .test_film_view import publish_chapter_film
from .test_monitor_browser import CHROMIUM, CHROMIUM_ARGS, _require_browser, voila_serving

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SCREENSHOT = Path(__file__).resolve().parents[2] / "reports" / "cast_browser.png"


@pytest.mark.timeout(300)
def test_cast_page_shows_sheets_and_approves_the_cast(sqlite_db: Database, tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    db = sqlite_db
    url = db.engine.url.render_as_string(hide_password=False)
    set_url(db, "database")
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    elsewhere = tmp_path / "worker-pc"
    elsewhere.mkdir()
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
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert worker.returncode == 0 and "stopped: empty" in worker.stdout, worker.stdout + worker.stderr
    sheets = [r.name for r in CastModel(db, model.bookcode).to_review()]
    assert sheets
    film = publish_chapter_film(db, model.bookcode, 1, tmp_path / "assembly-pc")

    served = tmp_path / "served-from"
    served.mkdir()
    env = {"PIPELINE_KIT_DB": url, "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    with voila_serving(NOTEBOOKS, cwd=served, env=env) as port, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        page.goto(
            f"http://127.0.0.1:{port}/voila/render/02_storyboard.ipynb?bookcode={model.bookcode}", timeout=120_000
        )
        review = page.locator("[data-pk='cast-review']")
        expect(review).to_contain_text(
            f"{plural(len(sheets), 'character sheet')} wait for your review", timeout=120_000
        )
        expect(page.locator("[data-pk='sheet-shots']")).to_contain_text(re.compile(r"\d+ shots? wait on it"))
        expect(page.locator("[data-pk='cast']")).to_contain_text(sheets[0])
        expect(page.locator(".jupyter-widgets img, .widget-image").first).to_be_visible()
        page.get_by_role("button", name="Accept the whole cast").click()
        expect(page.locator("[data-pk='message']").filter(has_text="the cast approved")).to_be_visible(timeout=30_000)
        expect(review).to_contain_text("no character sheet waits for your review")
        expect(page.locator("[data-pk='review-count']")).not_to_contain_text("character sheet")
        expect(page.locator("[data-pk='film-state']").first).to_contain_text("clips done")
        expect(page.locator("video")).to_have_count(1)  # chapter 1's film, from the database store
        link = page.locator("[data-pk='download']").first
        expect(link).to_have_attribute("download", f"{model.bookcode}-chapter-001.mp4")
        assert len(link.get_attribute("href") or "") > len(film)  # the film itself, base64
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        browser.close()

    with db.engine.connect() as conn:
        held = conn.execute(
            sa.select(sa.func.count())
            .select_from(tasks)
            .where(tasks.c.kind == "first_frame", tasks.c.deps_remaining > 0)  # a last frame waits on its first
        ).scalar_one()
    assert held == 0 and not CastModel(db, model.bookcode).to_review()
    assert not (NOTEBOOKS / "data").exists()  # fetched sheets went to the user's cache, not the kernel's folder
    assert any((tmp_path / "user-cache" / "pipeline_kit").rglob("*.png"))
