"""Rows that leave the engine: frozen dataclasses, never tuples or dicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    """A task to enqueue. `task_id` is the business key: enqueueing it again is a no-op."""

    task_id: str
    kind: str
    lane: str
    priority: int = 0
    params: Mapping[str, Any] | None = None
    max_attempts: int | None = None  # None: the lane's, else the engine default
    depends_on: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()  # those of depends_on whose failure lets this task go ahead without them
    bookcode: str | None = None
    shot_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class Lease:
    """A claimed task as its worker holds it: every later write names (task_id, token)."""

    task_id: str
    token: str
    kind: str
    lane: str
    attempt_no: int
    generation: int = 0  # bumped when the task is reset for a re-run
    params: Mapping[str, Any] = field(default_factory=dict)
    bookcode: str | None = None
    shot_id: str | None = None
    priority: int = 0
    expires_at: datetime | None = None
    remote_job_id: str | None = None  # left by an earlier attempt: resume it instead of paying again

    @classmethod
    def from_row(cls, row: Mapping[str, Any], remote_job_id: str | None = None) -> Lease:
        """The lease of one claimed row. Filled in directly: a claim builds one per task, and the
        frozen __init__ (an object.__setattr__ per field) took three times as long."""
        lease = object.__new__(cls)
        lease.__dict__.update(
            task_id=row["task_id"],
            token=row["lease_token"],
            kind=row["kind"],
            lane=row["lane"],
            attempt_no=row["attempts"],
            generation=row["generation"],
            params=row["params"] or {},
            bookcode=row["bookcode"],
            shot_id=row["shot_id"],
            priority=row["priority"],
            expires_at=row["lease_expires_at"],
            remote_job_id=remote_job_id,
        )
        return lease


@dataclass(frozen=True)
class EnqueueResult:
    created: int
    existing: int  # business keys already present: left as they were
