"""`pipeline-kit monitor` in a real browser: Debian's Chromium driven by Playwright watches two
workers empty a live SQLite queue, retries the task that failed for good, and saves a screenshot.

Outside CI a machine without /usr/bin/chromium, Playwright or Voilà skips this test; in CI
(CI=true) it fails instead, because the page must have been seen working.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import create
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SCREENSHOT = Path(__file__).resolve().parents[2] / "reports" / "monitor_browser.png"
TASKS = 24
# `pipeline-kit` with the screens' subcommands registered even where cli/__init__ does not list them yet.


def _require_browser() -> None:
    missing = [
        what
        for what, ok in (
            ("/usr/bin/chromium", CHROMIUM.exists()),
            ("playwright", importlib.util.find_spec("playwright") is not None),
            ("voila", importlib.util.find_spec("voila") is not None),
        )
        if not ok
    ]
    if missing:
        message = f"browser test needs {', '.join(missing)}"
        if IN_CI:
            pytest.fail(f"{message} (CI must run it)")
        pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"monitor exited {proc.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    pytest.fail(f"monitor did not listen on {port}: {log.read_text()[-2000:]}")


@contextmanager
def serving(command: list[str], port: int, *, cwd: Path, env: dict[str, str]) -> Iterator[int]:
    """A local web server run by `command` (listening on `port`, started in `cwd`, with `env`
    added to the environment); yields the port once it listens, stops it (SIGTERM) after."""
    log = cwd / f"server-{port}.log"
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=out, env={**os.environ, **env})
    try:
        _wait_for_port(port, server, log)
        yield port
    finally:
        stop(server)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask a process this test started to stop (SIGTERM), killing it if it does not in 30 s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def open_page(pw: Any, address: str, *, height: int = 1000) -> tuple[Any, Any]:
    """Debian's Chromium (headless, through Playwright) showing `address`: (browser, page)."""
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": height})
    page.goto(address, timeout=300_000)  # Voilà sends the page once its notebook has run
    return browser, page


def voila_serving(folder: Path, *, cwd: Path, env: dict[str, str]) -> AbstractContextManager[int]:
    """Voilà itself (`python -m voila FOLDER`) serving the notebooks in `folder` on a free local
    port (its kernels started from `cwd`, with `env` added to the environment)."""
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "voila",
        str(folder),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--Voila.port_retries=0",
    ]
    return serving(command, port, cwd=cwd, env=env)


def notebooks_serving(url: str, *options: str, cwd: Path, env: dict[str, str]) -> AbstractContextManager[int]:
    """`pipeline-kit notebooks` (the creator's server) on a free local port, for the database `url`."""
    port = _free_port()
    command = [sys.executable, "-m", "pipeline_kit", "--db", url, "notebooks", "--port", str(port), "--no-browser"]
    return serving([*command, *options], port, cwd=cwd, env=env)


@pytest.fixture
def live_db(tmp_path: Path) -> Iterator[str]:
    """A SQLite queue: one task failed for good (claimed and failed here), then TASKS pending."""
    url = f"sqlite:///{tmp_path / 'live.db'}"
    db = create(url)
    init(db)
    engine.seed_default_lanes(db)
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="doomed", kind="noop", lane="default", priority=10)])
    (lease,) = engine.claim(db, "tester", ["default"], limit=1)
    engine.fail(
        db,
        lease.task_id,
        lease.token,
        error="the prompt was refused",
        error_kind="bad_request",
        retryable=False,
        worker_id="tester",
    )
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"t{i:03d}", kind="noop", lane="default") for i in range(TASKS)])
    db.dispose()
    yield url


@pytest.mark.timeout(240)
@pytest.mark.db
def test_monitor_page_follows_workers_and_retries(live_db: str, tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    port, log = _free_port(), tmp_path / "monitor.log"
    started: list[subprocess.Popen[bytes]] = []
    with log.open("wb") as out:
        monitor = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pipeline_kit",
                "--db",
                live_db,
                "monitor",
                "--port",
                str(port),
                "--no-browser",
                "--refresh",
                "0.5",
            ],
            cwd=tmp_path,
            stdout=out,
            stderr=out,
        )
    started.append(monitor)
    try:
        _wait_for_port(port, monitor, log)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.goto(f"http://127.0.0.1:{port}/", timeout=90_000)
            count = lambda status: page.locator(f"[data-pk='count-{status}']")  # noqa: E731
            expect(count("pending")).to_have_text(str(TASKS), timeout=90_000)
            expect(count("failed")).to_have_text("1")
            expect(count("completed")).to_have_text("0")

            for i in (1, 2):
                started.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "pipeline_kit",
                            "--db",
                            live_db,
                            "work",
                            "--worker-id",
                            f"w{i}",
                            "--backend",
                            "sleep:0.2",
                            "--lanes",
                            "default",
                            "--until-empty",
                            "--quiet",
                        ],
                        cwd=tmp_path,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
            expect(page.locator("[data-pk='workers']")).to_contain_text("w1", timeout=60_000)
            expect(count("completed")).to_have_text(str(TASKS), timeout=90_000)
            expect(count("pending")).to_have_text("0")
            for worker in started[1:]:
                assert worker.wait(timeout=60) == 0
            expect(page.locator("[data-pk='throughput']")).to_contain_text(f"{TASKS} completed")

            row = page.locator(".pk-problem", has_text="doomed")
            expect(row).to_contain_text("the prompt was refused")
            row.get_by_role("button", name="Retry").click()
            expect(page.locator("[data-pk='message']")).to_have_text("doomed is pending again", timeout=30_000)
            expect(count("pending")).to_have_text("1", timeout=30_000)
            expect(count("failed")).to_have_text("0")
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            browser.close()
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in started:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()

    db = create(live_db)
    with db.engine.connect() as conn:
        status = conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == "doomed")).scalar_one()
    db.dispose()
    assert status == "pending"


@pytest.mark.timeout(300)
@pytest.mark.db
def test_monitor_row_says_the_worker_waits_for_review(tmp_path: Path) -> None:
    """A worker left with nothing but frames to review (it keeps running, idle) reads
    'waiting for review (N frames)' on the monitor page, not 'idle'."""
    _require_browser()
    from playwright.sync_api import expect, sync_playwright

    from pipeline_kit.ui.storyboard import StoryboardModel

    from .conftest import enter_book

    url = f"sqlite:///{tmp_path / 'review.db'}"
    db = create(url)
    init(db)
    engine.seed_default_lanes(db)
    model = StoryboardModel(db, enter_book(db, 1))
    assert model.split().ok and model.review.set_review(True).ok
    worker = subprocess.Popen(
        [sys.executable, "-m", "pipeline_kit", "--db", url, "work", "--worker-id", "pc-1", "--max-minutes", "4"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not engine.review_count(db) or engine.open_work(db, ["image", "video", "assembly"]):
            assert time.monotonic() < deadline and worker.poll() is None, "the worker never got down to review"
            time.sleep(0.5)
        waiting = engine.review_count(db)
        port = _free_port()
        command = [sys.executable, "-m", "pipeline_kit", "--db", url, "monitor", "--port", str(port), "--no-browser"]
        with serving([*command, "--refresh", "0.5"], port, cwd=tmp_path, env={}), sync_playwright() as pw:
            browser, page = open_page(pw, f"http://127.0.0.1:{port}/")
            row = page.locator("[data-pk='workers'] tr", has_text="pc-1")
            expect(row).to_contain_text(f"waiting for review ({waiting} frames)", timeout=90_000)
            browser.close()
    finally:
        stop(worker)
    db.dispose()
