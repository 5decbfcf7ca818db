"""The contract between the worker runtime and a generation backend.

The runtime hands a backend a `Job` and a `CallContext`; the backend writes `job.out_path`
and returns an `Output` with the cost it spent, or raises `GenerationError`. Backends never
touch the database: the context is their only way to report progress and remote job ids.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit


@dataclass(frozen=True, kw_only=True)
class Job:
    """One task as a backend sees it: what to make, from which inputs, and where to write it."""

    task_id: str
    kind: str  # character_sheet | first_frame | last_frame | video | llm | noop
    lane: str
    params: Mapping[str, Any]  # the params contract (see params.py)
    inputs: Mapping[str, Path]  # outputs of the task's dependencies, by their kind
    out_path: Path  # temporary file to write; the runtime moves it into place
    remote_job_id: str | None = None  # recorded by an earlier attempt: resume, do not pay again


@dataclass(frozen=True, kw_only=True)
class Output:
    """What a successful call produced and what it cost."""

    path: Path | None  # the file written (normally job.out_path), None if no file
    cost: float = 0.0  # money spent by this call (0 for offline backends)
    model: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    remote_job_id: str | None = None
    result: Mapping[str, Any] = field(default_factory=dict)  # JSON-able facts
    # side files published next to the main one: suffix (".srt") -> temporary path written
    extras: Mapping[str, Path] = field(default_factory=dict)


@runtime_checkable
class CallContext(Protocol):
    """What the runtime lends a backend for one call."""

    timeout_s: float  # every external call must honour it
    uid: str | None  # the worker's API identity (for rate limiting)

    def stage(self, name: str) -> None:
        """Report progress: loading_model | generating_image | generating_video | generating_audio | uploading
        | finalizing."""

    def remember_remote_job(self, job_id: str) -> None:
        """Persist a remote job id at once, so a takeover can resume instead of paying again."""

    def recall(self, key: str) -> Mapping[str, Any] | None:
        """A chat answer kept under `key` ({answer, model, tokens_in, tokens_out, cost}), or None."""

    def remember(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep a paid chat answer under `key` at once, so no rerun or takeover pays for it again."""

    # Optional: `canceled() -> bool`, whether an operator canceled the task while this call
    # runs (read it with `canceled(ctx)`); a backend polling a remote job then stops, and
    # cancels the remote job if the service still can.


def is_remote(backend: object) -> bool:
    """Whether the backend's calls wait on a remote service (False unless it says `remote = True`)."""
    return bool(getattr(backend, "remote", False))


def provider(backend: object) -> str:
    """Who a backend's calls go to, as outages are kept and shown: its name and the host of its
    `base_url` ("comfyui at 10.0.0.5:8188"); a loopback address is this PC's own service, so it
    names the PC too (two PCs' local ComfyUIs are two providers)."""
    name = str(getattr(backend, "name", type(backend).__name__))
    base_url = getattr(backend, "base_url", None)
    if not base_url:
        return name
    where = urlsplit(str(base_url))
    if where.hostname in ("localhost", "127.0.0.1", "::1") or (where.hostname or "").startswith("127."):
        return f"{name} at {where.netloc} on {socket.gethostname()}"
    return f"{name} at {where.netloc}"


def canceled(ctx: CallContext) -> bool:
    """Whether the task of this call was canceled (False for a context that cannot tell)."""
    check = getattr(ctx, "canceled", None)
    return bool(check()) if callable(check) else False


@runtime_checkable
class Backend(Protocol):
    """A generation backend: one module in this package, one line in the registry."""

    name: str
    # Optional: `remote = True` on a backend whose calls wait on a service (a job submitted, then
    # polled or awaited): a worker may hold several of its tasks at once (`--inflight`).

    def suffix(self, kind: str) -> str:
        """File suffix of this backend's output for `kind` (".png", ".mp4", ".json")."""

    def run(self, job: Job, ctx: CallContext) -> Output:
        """Make the output of `job`; raise `GenerationError` on failure."""


@dataclass
class LocalContext:
    """A CallContext for tests and notebooks: records stages and remote ids in lists, answers in
    a dict."""

    timeout_s: float = 60.0
    uid: str | None = None
    stages: list[str] = field(default_factory=list)
    remote_jobs: list[str] = field(default_factory=list)
    cancel: bool = False  # set it to cancel the task while a call runs
    answers: dict[str, Mapping[str, Any]] = field(default_factory=dict)

    def stage(self, name: str) -> None:
        """Record the stage name."""
        self.stages.append(name)

    def remember_remote_job(self, job_id: str) -> None:
        """Record the remote job id."""
        self.remote_jobs.append(job_id)

    def canceled(self) -> bool:
        """Whether `cancel` was set."""
        return self.cancel

    def recall(self, key: str) -> Mapping[str, Any] | None:
        """The answer kept in `answers`."""
        return self.answers.get(key)

    def remember(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep the answer in `answers` (the first one stays)."""
        self.answers.setdefault(key, dict(record))


def quote(backend: Backend, job: Job) -> float:
    """What a call of `backend` for `job` will cost, to book before it goes out: the backend's
    own `quote(job)` where the price depends on the job (seconds of video), else its `price`."""
    priced = getattr(backend, "quote", None)
    return float(priced(job) if callable(priced) else getattr(backend, "price", 0.0) or 0.0)
