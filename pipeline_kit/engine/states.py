"""Task states, attempt outcomes and the transitions the engine allows between them."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Move:
    """One engine verb: the states it takes a task from, the states it may leave it in, the
    function (in pipeline_kit.engine) that does it, and the verbs that function runs in turn."""

    verb: str
    sources: frozenset[Status]
    targets: frozenset[Status]
    does: str  # "module:function" under pipeline_kit.engine
    then: tuple[str, ...] = ()


_ANY = frozenset(Status)
_P, _R, _C, _F = Status.PENDING, Status.PROCESSING, Status.COMPLETED, Status.FAILED
_X, _B, _W = Status.CANCELED, Status.BLOCKED, Status.AWAITING_REVIEW

# The state machine, whole: every status change the engine's SQL makes is one of these.
MOVES: tuple[Move, ...] = (
    Move("claim", frozenset({_P}), frozenset({_R}), "claim:claim"),
    Move("complete", frozenset({_R}), frozenset({_C, _W}), "lease:complete_many"),
    Move("fail", frozenset({_R}), frozenset({_P, _F}), "lease:fail", then=("block",)),
    Move("release", frozenset({_R}), frozenset({_P}), "lease:release_many"),
    Move("reclaim", frozenset({_R}), frozenset({_P, _F}), "watchdog:reclaim_expired", then=("block",)),
    Move("cancel", _ANY - {_C, _X}, frozenset({_X}), "operator:cancel_tasks", then=("block",)),
    Move("retry", frozenset({_F, _X}), frozenset({_P}), "operator:retry_tasks", then=("unblock",)),
    Move("reset", _ANY, frozenset({_P}), "operator:reset_tasks"),  # an edited shot, a re-split, a rejection
    Move("block", frozenset({_P}), frozenset({_B}), "dependents:block_dependents"),
    Move("unblock", frozenset({_B}), frozenset({_P}), "dependents:unblock_dependents"),
    Move("approve", frozenset({_W}), frozenset({_C}), "review:approve"),
    Move("reject", frozenset({_W}), frozenset({_P}), "review:reject", then=("reset",)),
)
VERBS = {m.verb: m for m in MOVES}

# from -> the states an engine verb may move a task to (MOVES read by state)
TRANSITIONS: dict[Status, frozenset[Status]] = {
    state: frozenset(t for m in MOVES if state in m.sources for t in m.targets) - {state} for state in Status
}

# A dependent of a task in one of these states can never run until an operator acts.
DEAD_ENDS = frozenset({Status.FAILED, Status.CANCELED, Status.BLOCKED})
