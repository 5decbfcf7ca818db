"""Task states, attempt outcomes and the transitions the engine allows between them."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    PENDING = "pending"  # waiting to be claimed (once run_after is due and deps are done)
    PROCESSING = "processing"  # leased to one worker; its token fences every later write
    COMPLETED = "completed"  # result accepted exactly once
    FAILED = "failed"  # permanent error or retries used up; an alert was raised
    CANCELED = "canceled"  # an operator stopped it
    BLOCKED = "blocked"  # a dependency failed for good or was canceled
    AWAITING_REVIEW = "awaiting_review"  # output waits for a person's approval


class Outcome(str, Enum):
    """How an attempt ended; NULL in the database while it runs."""

    COMPLETED = "completed"
    FAILED = "failed"  # failed for good
    RETRIED = "retried"  # failed, task went back to pending with backoff
    LOST = "lost"  # lease expired: the watchdog took it back
    CANCELED = "canceled"


class Ack(str, Enum):
    """What a heartbeat, completion or failure call achieved."""

    ACCEPTED = "accepted"  # this call changed the task
    DUPLICATE = "duplicate"  # already done by this same lease: nothing written twice
    FENCED = "fenced"  # the token is no longer current: rejected, recorded, nothing changed


# from -> the states an engine verb may move a task to
TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.PENDING: frozenset({Status.PROCESSING, Status.CANCELED, Status.BLOCKED}),
    Status.PROCESSING: frozenset(
        {Status.COMPLETED, Status.PENDING, Status.FAILED, Status.CANCELED, Status.AWAITING_REVIEW}
    ),
    Status.COMPLETED: frozenset({Status.PENDING}),  # an edited shot is reset for a re-run
    Status.FAILED: frozenset({Status.PENDING, Status.CANCELED}),
    Status.CANCELED: frozenset({Status.PENDING}),
    Status.BLOCKED: frozenset({Status.PENDING, Status.CANCELED}),
    Status.AWAITING_REVIEW: frozenset({Status.COMPLETED, Status.PENDING, Status.CANCELED}),
}

# A dependent of a task in one of these states can never run until an operator acts.
DEAD_ENDS = frozenset({Status.FAILED, Status.CANCELED, Status.BLOCKED})
