"""Voilà as a creator's server, for real: `pipeline-kit notebooks` serves the creator's notebooks
(never the worker's), keeps its kernels under the cap however many pages are opened and left
(counted through the server's REST API, /api/kernels), shuts down the kernels of pages gone for
a while (jupyter_server's culler), and its post-mortem page plays the films from inside the page
(no link that answers 403) without writing into notebooks/; the worker notebook served by plain
Voilà starts no worker.

Skipped (failed in CI) without Chromium, Playwright or Voilà, like the monitor's browser test.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks, workers
from pipeline_kit.engine import TaskSpec
from pipeline_kit.store import set_url
from pipeline_kit.ui.storyboard import StoryboardModel

from .conftest import enter_book
from .test_film_view import publish_chapter_film
from .test_monitor_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    _require_browser,
    notebooks_serving,
    open_page,
    voila_serving,
)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CAP = 3
LOADS = 40 if os.environ.get("PIPELINE_KIT_SOAK") == "1" else 4 * CAP  # CI: each kernel replaced four times over


def _get(port: int, path: str) -> tuple[int, bytes]:
    """Status and body of a GET on the local server (an error status is returned, not raised)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=120) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _kernels(port: int) -> list[dict[str, object]]:
    status, body = _get(port, "/api/kernels")
    assert status == 200, body
    return json.loads(body)


def _tree(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


@pytest.mark.timeout(2400)  # forty kernels started one after another (PIPELINE_KIT_SOAK=1): minutes
def test_pages_opened_and_left_stay_under_the_cap(sqlite_db: Database, tmp_path: Path) -> None:
    """Forty page loads (twelve in CI), each left without the browser saying goodbye (a closed tab, a killed
    browser): the server never holds more than the cap, every load is served (a kernel no page
    uses makes room), the worker notebook is not served at all, and the post-mortem page plays
    its chapter film from inside the page, with no address on it refused, writing its report
    into the user's cache and nothing into notebooks/."""
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    db = sqlite_db
    url = db.engine.url.render_as_string(hide_password=False)
    set_url(db, "database")
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok
    publish_chapter_film(db, model.bookcode, 1, tmp_path / "assembly-pc")
    before = _tree(NOTEBOOKS)
    cache = tmp_path / "user-cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    options = ("--max-pages", str(CAP), "--cull-after", "3600")  # only the cap may free kernels here
    with notebooks_serving(url, *options, cwd=tmp_path, env=env) as port, sync_playwright() as pw:
        assert _get(port, "/voila/render/worker.ipynb")[0] == 404
        assert _get(port, "/voila/render/01_new_book.ipynb")[0] == 200  # a page never connected to
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context()
        most = 0
        for _ in range(LOADS):
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{port}/voila/render/01_new_book.ipynb", timeout=120_000)
            expect(page.get_by_role("button", name="Add pasted chapter")).to_be_visible(timeout=120_000)
            page.close()  # no beforeunload: Voilà is never told the page is gone
            most = max(most, len(_kernels(port)))
        assert 1 <= most <= CAP

        refused: list[str] = []
        page = context.new_page()
        page.on("response", lambda r: r.status >= 400 and refused.append(f"{r.status} {r.url}"))
        page.goto(f"http://127.0.0.1:{port}/voila/render/postmortem.ipynb?bookcode={model.bookcode}", timeout=180_000)
        video = page.locator("video").first
        expect(video).to_be_attached(timeout=180_000)
        assert (video.get_attribute("src") or "").startswith("data:video/mp4;base64,")
        duration = video.evaluate(
            "v => new Promise(done => v.readyState >= 1 ? done(v.duration)"
            " : v.addEventListener('loadedmetadata', () => done(v.duration)))"
        )
        assert duration > 0
        expect(page.locator("h3", has_text="Static split versus dynamic claiming")).to_be_attached(timeout=180_000)
        expect(page.get_by_text("There was an error when executing cell")).to_have_count(0)
        assert [r for r in refused if "favicon" not in r] == []
        assert len(_kernels(port)) <= CAP
        browser.close()
    report = cache / "pipeline_kit" / "reports" / model.bookcode / "films" / model.bookcode
    assert (report / "chapter-001.mp4").is_file()
    assert _tree(NOTEBOOKS) == before


@pytest.mark.timeout(420)
def test_a_page_beyond_the_cap_is_refused_until_a_kernel_is_culled(sqlite_db: Database, tmp_path: Path) -> None:
    """With room for one page: a second page while the first one's kernel may still be wanted (a
    page not yet connected, idle for less than a minute) is refused with 503 and a line saying
    why; jupyter_server's culler shuts that kernel down once idle for --cull-after seconds, and
    the next page is served."""
    _require_browser()
    url = sqlite_db.engine.url.render_as_string(hide_password=False)
    env = {"XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    with notebooks_serving(url, "--max-pages", "1", "--cull-after", "10", cwd=tmp_path, env=env) as port:
        assert _get(port, "/voila/render/planning.ipynb")[0] == 200
        assert len(_kernels(port)) == 1
        status, body = _get(port, "/voila/render/planning.ipynb")
        assert status == 503 and b"close one" in body
        deadline = time.monotonic() + 120
        while _kernels(port) and time.monotonic() < deadline:
            time.sleep(1)
        assert _kernels(port) == []
        assert _get(port, "/voila/render/planning.ipynb")[0] == 200


@pytest.mark.timeout(300)
def test_worker_notebook_served_by_voila_starts_no_worker(sqlite_db: Database, tmp_path: Path) -> None:
    """Plain Voilà serving notebooks/ (worker.ipynb among them): opening the worker notebook runs
    it with its defaults, which name no worker, so its run stops before any worker starts (the
    page says how to run it) and nothing is registered or claimed."""
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    db = sqlite_db
    url = db.engine.url.render_as_string(hide_password=False)
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="idle-task", kind="noop", lane="image")])
    env = {"PIPELINE_KIT_DB": url, "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    with voila_serving(NOTEBOOKS, cwd=tmp_path, env=env) as port, sync_playwright() as pw:
        browser, page = open_page(pw, f"http://127.0.0.1:{port}/voila/render/worker.ipynb")
        expect(page.get_by_text("starts nothing and says so")).to_be_visible(timeout=120_000)  # the page's note
        expect(page.get_by_text("There was an error when executing cell")).to_be_visible(timeout=120_000)
        browser.close()
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(workers)).scalar_one() == 0
        assert conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == "idle-task")).scalar_one() == "pending"
