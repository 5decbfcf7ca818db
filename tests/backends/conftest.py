"""Fixtures for backend tests: job builders and the fake protocol servers, started per test."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline_kit.backends import Job

# tests/ on sys.path, so `servers` imports alike under `pytest` and `python -m pytest`.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.ark_fake import FakeArk
from servers.chat_fake import FakeChat
from servers.comfyui_fake import FakeComfyUI
from servers.ollama_fake import FakeOllama
from servers.openai_fake import FakeOpenAI

FRAME = {
    "bookcode": "hlm",
    "shot_id": "hlm-003-0012",
    "chapter": 3,
    "seq": 12,
    "scene": 2,
    "prompt": "Lin Daiyu enters the Rong mansion at dusk",
    "caption": "林黛玉走进荣国府，贾宝玉在厅上等候。The rain kept falling.",
    "characters": ["林黛玉", "贾宝玉"],
    "location": "荣国府 hall",
    "time_of_day": "黄昏",
    "width": 640,
    "height": 360,
    "seed": 7,
}


@pytest.fixture
def make_job(tmp_path: Path) -> Callable[..., Job]:
    """Build a Job whose out path is a fresh file under tmp_path."""
    counter = iter(range(10_000))

    def build(
        kind: str,
        params: dict[str, Any] | None = None,
        *,
        task_id: str = "t1",
        inputs: dict[str, Path] | None = None,
        suffix: str = ".png",
        remote_job_id: str | None = None,
    ) -> Job:
        return Job(
            task_id=task_id,
            kind=kind,
            lane="gpu",
            params=params or {},
            inputs=inputs or {},
            out_path=tmp_path / f"out{next(counter)}{suffix}",
            remote_job_id=remote_job_id,
        )

    return build


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def comfy_server() -> Iterator[FakeComfyUI]:
    with FakeComfyUI() as server:
        yield server


@pytest.fixture
def ollama_server() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture
def ark_server() -> Iterator[FakeArk]:
    with FakeArk() as server:
        yield server


@pytest.fixture
def chat_server() -> Iterator[FakeChat]:
    with FakeChat() as server:
        yield server
