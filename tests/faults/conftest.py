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
    env.update(PIPELINE_KIT_OPENAI_URL=openai_fake.url, OPENAI_API_KEY="test",
               PIPELINE_KIT_OPENAI_PRICE=str(PRICE))
    return env


@pytest.fixture
def cli_main(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`pipeline_kit.cli.main` with the ops commands (chaos, grant-worker) registered."""
    from pipeline_kit import cli
    from pipeline_kit.cli import ops_cmds
    if ops_cmds not in cli.AREAS:
        monkeypatch.setattr(cli, "AREAS", (*cli.AREAS, ops_cmds))
    return cli.main
