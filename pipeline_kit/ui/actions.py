"""What a button press achieved, as plain data: screens show the message, tests check `ok`.

Every view-model action goes through `attempt`, so a mistake a person can fix (an unknown task, a
task in the wrong state) becomes a message on the screen instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pipeline_kit.errors import PipelineKitError

T = TypeVar("T")


@dataclass(frozen=True)
class ActionResult:
    """The outcome of one action: whether it worked and one line for the person who asked."""

    ok: bool
    message: str


class Said(Protocol):
    """What any action returns (an ActionResult, the new-book screen's AddResult): whether it
    worked and one line for the person."""

    @property
    def ok(self) -> bool: ...

    @property
    def message(self) -> str: ...


def attempt(action: Callable[[], T], describe: Callable[[T], str]) -> ActionResult:
    """Run `action`; its result described on success, the package's own error message on failure."""
    try:
        value = action()
    except PipelineKitError as exc:
        return ActionResult(False, str(exc))
    return ActionResult(True, describe(value))
