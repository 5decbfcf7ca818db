"""Assertions shared by the backend tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pipeline_kit.backends import Job, LocalContext
from pipeline_kit.errors import GenerationError

MakeJob = Callable[..., Job]  # the make_job fixture: make_job(kind, params, *, task_id=...)


def _raised(call: Callable[[], Any]) -> GenerationError:
    with pytest.raises(GenerationError) as info:
        call()
    return info.value


def assert_permanent(call: Callable[[], Any], kind: str, mentions: str = "") -> GenerationError:
    """`call` fails with a non-retryable GenerationError of `kind` whose message has `mentions`."""
    error = _raised(call)
    assert (error.error_kind, error.retryable) == (kind, False), str(error)
    assert mentions in str(error)
    return error


def assert_transient(call: Callable[[], Any], kind: str) -> GenerationError:
    """`call` fails with a retryable GenerationError of `kind`."""
    error = _raised(call)
    assert (error.error_kind, error.retryable) == (kind, True), str(error)
    return error


class RecordingContext(LocalContext):
    """Also notes which requests a stand-in server had seen when the remote job id was remembered
    (the server keeps them in `.requests`)."""

    def __init__(self, server: Any, timeout_s: float = 10.0) -> None:
        super().__init__(timeout_s=timeout_s, uid="worker-a")
        self.server = server
        self.seen_at_remember: list[list[tuple[str, str]]] = []

    def remember_remote_job(self, job_id: str) -> None:
        self.seen_at_remember.append(list(self.server.requests))
        super().remember_remote_job(job_id)


class StoppedWhilePolling(LocalContext):
    """Gives up at the first poll of a remote video job, as a worker whose call timed out (or
    that was killed) while the job ran."""

    def stage(self, name: str) -> None:
        super().stage(name)
        if name.startswith("generating_video"):
            raise GenerationError("timeout: gave up while polling", error_kind="timeout", retryable=True)
