"""02_storyboard in a real browser: Voilà serves `notebooks/` and the book comes from `?bookcode=`
in the address; a sketch worker run from another folder stops by itself when only review is left;
the review panel shows the frame; a rejection with a note queues a redraw whose prompt carries the
note and whose seed is new; after *Save and re-run* the prompt box shows the saved text.

Outputs are published under an absolute folder here: reading frames a worker recorded relative
to its own folder belongs to the output store. Skipped (failed in CI) without Chromium,
Playwright or Voilà, like the monitor's browser test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import create
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.engine.lanes import seed_default_lanes
from pipeline_kit.ui.storyboard import StoryboardModel

from .conftest import enter_book
from .test_monitor_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    _free_port,
    _require_browser,
    _wait_for_port,
)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SCREENSHOT = Path(__file__).resolve().parents[2] / "reports" / "storyboard_browser.png"
NOTE = "make the sea rougher"
PROMPT = "A gull over the harbour at dawn"


@pytest.mark.timeout(300)
def test_storyboard_page_reviews_and_saves(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    url = f"sqlite:///{tmp_path / 'film.db'}"
    db = create(url)
    init(db)
    seed_default_lanes(db)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.set_review(True).ok
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
            "--outputs",
            str(tmp_path / "outputs"),
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert worker.returncode == 0 and "stopped: empty" in worker.stdout, (
        worker.stdout + worker.stderr
    )
    first = model.awaiting()[0]
    with db.engine.connect() as conn:
        old_prompt = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == first.task_id)
        ).scalar_one()["prompt"]
        old_seed = conn.execute(
            sa.select(attempts.c.settings).where(attempts.c.task_id == first.task_id)
        ).scalar_one()["seed"]

    port, log = _free_port(), tmp_path / "voila.log"
    with log.open("wb") as out:
        voila = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "voila",
                str(NOTEBOOKS),
                "--no-browser",
                f"--port={port}",
                "--Voila.ip=127.0.0.1",
                "--Voila.port_retries=0",
            ],
            cwd=tmp_path,
            stdout=out,
            stderr=out,
            env={**os.environ, "PIPELINE_KIT_DB": url},
        )
    try:
        _wait_for_port(port, voila, log)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(
                f"http://127.0.0.1:{port}/voila/render/02_storyboard.ipynb?bookcode={model.bookcode}",
                timeout=120_000,
            )
            expect(page.locator("[data-pk='review-count']")).to_contain_text(
                "waiting for your review", timeout=120_000
            )
            expect(page.locator("[data-pk='bookcode']")).to_have_text(model.bookcode)
            expect(page.locator("img").first).to_be_visible()

            page.get_by_placeholder("what to change (needed to reject)").fill(NOTE)
            page.get_by_role("button", name="Reject").click()
            expect(page.locator("[data-pk='message']")).to_contain_text(
                "redrawn with your note", timeout=30_000
            )
            expect(page.get_by_placeholder("what to change (needed to reject)")).to_have_value("")

            page.locator("textarea").first.fill(f"  {PROMPT}  ")
            page.get_by_role("button", name="Save and re-run").click()
            expect(page.locator("[data-pk='message']")).to_contain_text("saved", timeout=30_000)
            expect(page.locator("textarea").first).to_have_value(PROMPT)
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            browser.close()
    finally:
        voila.send_signal(signal.SIGTERM)
        try:
            voila.wait(timeout=20)
        except subprocess.TimeoutExpired:
            voila.kill()

    with db.engine.connect() as conn:
        params = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == first.task_id)
        ).scalar_one()
    db.dispose()
    assert params["prompt"].startswith(old_prompt) and params["prompt"].endswith(NOTE)
    assert params["seed"] != old_seed
