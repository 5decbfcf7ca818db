"""The bench's own runtime failure (exit 1): a worker process died, a run timed out."""

from __future__ import annotations

from pipeline_kit.errors import PipelineKitError


class BenchFailed(PipelineKitError):
    """A benchmark run could not finish; the message names the run and the cause."""
