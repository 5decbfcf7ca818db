"""What a worker's run of one claimed task ended in: the words its summary counts."""

from __future__ import annotations

from enum import StrEnum

from pipeline_kit.engine import Ack


class TaskEnd(StrEnum):
    """How one task's run on this worker ended, as the summary line and the worker notebook's
    table count it. Not `engine.Outcome`, the word an attempt row keeps in the database
    (`attempts.outcome`): a task end is what the worker saw, and it also names ends that word has
    none for (a task given back, a result the lease no longer covered, a completion still in the
    local spool). A `StrEnum`, so each member prints, compares and hashes as its word."""

    COMPLETED = "completed"  # the engine took the result (or already had it from this lease)
    RETRIED = "retried"  # failed; back to pending after its backoff, an attempt used
    FAILED = "failed"  # failed for good
    FENCED = "fenced"  # the lease was no longer this worker's: the result was dropped
    RELEASED = "released"  # given back unspent: the provider never took the call, or the worker stopped
    PAUSED = "paused"  # given back unspent and its lane paused fleet-wide: the provider's quota is used up
    SPOOLED = "spooled"  # the database could not take the completion: it waits in the local spool
    # A completion an earlier run spooled, submitted when this one started: what the engine answered.
    SPOOLED_ACCEPTED = "spooled-accepted"
    SPOOLED_DUPLICATE = "spooled-duplicate"
    SPOOLED_FENCED = "spooled-fenced"

    @classmethod
    def of_spooled(cls, ack: Ack) -> TaskEnd:
        """The end of a spooled completion the engine answered with `ack`."""
        return cls(f"spooled-{ack.value}")
