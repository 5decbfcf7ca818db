"""Task states and counts in a creator's words, never the engine's own (`awaiting_review`)."""

from __future__ import annotations

from pipeline_kit import kinds
from pipeline_kit.engine.states import Status

STATES = {
    Status.PROCESSING: "drawing",
    Status.AWAITING_REVIEW: "waiting for your review",
    Status.COMPLETED: "done",
    Status.CANCELED: "canceled",
    Status.BLOCKED: "stopped: something it needs failed",
}


def state_in_words(status: str, kind: str = "", *, waiting: bool = False, error: str | None = None) -> str:
    """One task's state (a `Status`, or its word) as a creator reads it: `waiting` means it still
    waits on other tasks; a failure says why."""
    if status == Status.PENDING:
        if not waiting:
            return "waiting for a worker"
        found = kinds.get(kind)
        return f"waiting for {found.waits_for if found else 'other work'}"
    if status == Status.FAILED:
        return f"failed: {error}" if error else "failed"
    return STATES[Status(status)]


def frames(n: int) -> str:
    """'1 frame', '3 frames'."""
    return f"{n} frame" if n == 1 else f"{n} frames"


def kind_words(kind: str) -> str:
    """What screens call a task of `kind` ('first frame', 'clip'); an unknown kind as it is spelt."""
    found = kinds.get(kind)
    return found.words if found else kind.replace("_", " ")


def describe_task(task_id: str) -> str:
    """A task id as a creator reads it: 'the first frame of shot X', 'the character sheet (Y)'."""
    head, _, last = task_id.rpartition("/")
    if head.endswith("/char"):
        return f"the character sheet ({last})"
    if head.endswith("/place"):
        return f"the place sheet ({last})"
    return f"the {kind_words(last)} of shot {head}" if last in kinds.per_shot() else task_id


def place(chapter: int, seq: int) -> str:
    """Where a shot is, as the cards and lists name it: '2.14' (chapter 2, shot 14)."""
    return f"{chapter}.{seq}"


def cut(text: str, n: int) -> str:
    """`text` at most `n` characters long, an ellipsis saying it was cut."""
    return text if len(text) <= n else text[: n - 1] + "…"
