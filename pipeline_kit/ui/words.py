"""Task states and counts in a creator's words, never the engine's own (`awaiting_review`)."""

from __future__ import annotations

WAITS_ON = {
    "first_frame": "its character sheets",
    "last_frame": "its character sheets",
    "video": "its frames",
    "assemble_chapter": "its clips",
    "assemble_book": "its chapters",
}
STATES = {
    "processing": "drawing",
    "awaiting_review": "waiting for your review",
    "completed": "done",
    "canceled": "canceled",
    "blocked": "stopped: something it needs failed",
}


def state_in_words(
    status: str, kind: str = "", *, waiting: bool = False, error: str | None = None
) -> str:
    """One task's state as a creator reads it: `waiting` means it still waits on other tasks;
    a failure says why."""
    if status == "pending":
        return (
            f"waiting for {WAITS_ON.get(kind, 'other work')}" if waiting else "waiting for a worker"
        )
    if status == "failed":
        return f"failed: {error}" if error else "failed"
    return STATES.get(status, status)


def frames(n: int) -> str:
    """'1 frame', '3 frames'."""
    return f"{n} frame" if n == 1 else f"{n} frames"
