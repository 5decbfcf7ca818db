"""Fixtures for worker tests: a real S3-compatible server on loopback (SeaweedFS), once a session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# tests/ on sys.path, so `servers` imports alike under `pytest` and `python -m pytest`.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.seaweed import seaweed_s3

BUCKET = "films"


@pytest.fixture(scope="session")
def s3_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment a PC needs to reach the S3 store (endpoint, keys, region)."""
    with seaweed_s3(tmp_path_factory.mktemp("seaweed"), BUCKET) as endpoint:
        yield {
            "PIPELINE_KIT_S3_ENDPOINT": endpoint,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }


@pytest.fixture
def s3_store_env(s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`s3_env`, also set in this process (for stores opened by the test itself)."""
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    return s3_env


CHECKED_KEYS = ("pk-owner", "pk-owner-secret")


@pytest.fixture(scope="session")
def checked_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An S3 server that accepts only CHECKED_KEYS; the environment with those keys."""
    with seaweed_s3(tmp_path_factory.mktemp("seaweed-checked"), BUCKET, keys=CHECKED_KEYS, checked=True) as endpoint:
        yield {
            "PIPELINE_KIT_S3_ENDPOINT": endpoint,
            "AWS_ACCESS_KEY_ID": CHECKED_KEYS[0],
            "AWS_SECRET_ACCESS_KEY": CHECKED_KEYS[1],
            "AWS_DEFAULT_REGION": "us-east-1",
        }
