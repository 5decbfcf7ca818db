"""Backends that do nothing but answer: `noop`, and `sleep:SECONDS` for benchmarks.

Both write a tiny JSON record and cost 0, so a benchmark measures the task engine, not
generation.
"""

from __future__ import annotations

import json
import math
import time

from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.errors import BadInput, GenerationError


class NoopBackend:
    """Writes {"task_id", "kind", "backend"} to the out path at once."""

    name = "noop"

    def suffix(self, kind: str) -> str:
        """Always .json: whatever the kind, the output is the record."""
        return ".json"

    def run(self, job: Job, ctx: CallContext) -> Output:
        """Write the record and return it as the result."""
        record = {"task_id": job.task_id, "kind": job.kind, "backend": self.name}
        job.out_path.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
        return Output(path=job.out_path, result=record)


class SleepBackend(NoopBackend):
    """Sleeps `seconds` (bounded by the context's timeout), then behaves like noop."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.name = f"sleep:{seconds:g}"

    def run(self, job: Job, ctx: CallContext) -> Output:
        """Sleep, then write the record; a sleep longer than the timeout is a timeout."""
        ctx.stage("generating_image")
        time.sleep(min(self.seconds, ctx.timeout_s))
        if self.seconds > ctx.timeout_s:
            raise GenerationError(
                f"timeout: sleep {self.seconds:g} s exceeds the {ctx.timeout_s:g} s timeout",
                error_kind="timeout",
                retryable=True,
            )
        return super().run(job, ctx)


def make_noop(arg: str | None) -> NoopBackend:
    """Registry factory for `noop` (takes no argument)."""
    if arg is not None:
        raise BadInput(f"backend 'noop' takes no argument, got 'noop:{arg}'")
    return NoopBackend()


def make_sleep(arg: str | None) -> SleepBackend:
    """Registry factory for `sleep:SECONDS` (a finite number >= 0)."""
    try:
        seconds = float(arg) if arg is not None else math.nan
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise BadInput(f"backend 'sleep' needs seconds >= 0, as in sleep:0.5 (got {arg!r})")
    return SleepBackend(seconds)
