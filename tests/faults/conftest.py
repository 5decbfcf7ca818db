"""Fixtures for the fault tests: the fake paid image provider and a worker's environment."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# tests/ on sys.path, so `servers` imports alike under `pytest` and `python -m pytest`.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.openai_fake import FakeOpenAI

PRICE = 0.04


@pytest.fixture
def openai_fake() -> Iterator[FakeOpenAI]:
    """A loopback OpenAI-compatible images endpoint that logs every call it billed."""
    with FakeOpenAI(api_key="test") as server:
        yield server


@pytest.fixture
def worker_env(openai_fake: FakeOpenAI) -> dict[str, str]:
    """Environment for a worker subprocess using the fake provider at PRICE per image."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")}
    env.update(PIPELINE_KIT_OPENAI_URL=openai_fake.url, OPENAI_API_KEY="test", PIPELINE_KIT_OPENAI_PRICE=str(PRICE))
    return env


@pytest.fixture
def cli_main(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`pipeline_kit.cli.main` with the ops commands (chaos, grant-worker) registered."""
    from pipeline_kit import cli
    from pipeline_kit.cli import ops_cmds

    if ops_cmds not in cli.AREAS:
        monkeypatch.setattr(cli, "AREAS", (*cli.AREAS, ops_cmds))
    return cli.main


WORKER_PASSWORD = "s3cr'et%\\x"  # quotes, a percent sign and a backslash must survive the grant


@pytest.fixture
def worker_url(db_url: str, cli_main, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The URL of a fresh worker account made by `grant-worker` on the (server) database under
    test; the account is dropped afterwards (accounts outlive the scratch database)."""
    import uuid

    from sqlalchemy.engine import make_url

    from pipeline_kit.db import create

    if db_url.startswith("sqlite"):
        pytest.skip("SQLite has no roles")
    role = f"pk_w_{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("PK_TEST_PW", WORKER_PASSWORD)
    assert cli_main(["--db", db_url, "grant-worker", role, "--password-env", "PK_TEST_PW"]) == 0
    yield make_url(db_url).set(username=role, password=WORKER_PASSWORD).render_as_string(hide_password=False)
    admin = create(db_url)
    try:
        with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            if admin.dialect == "postgresql":
                conn.exec_driver_sql(f"DROP OWNED BY {role}")
                conn.exec_driver_sql(f"DROP ROLE IF EXISTS {role}")
            else:
                conn.exec_driver_sql(f"DROP USER IF EXISTS '{role}'@'%%'")
    finally:
        admin.dispose()
