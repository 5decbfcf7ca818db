"""Survive a database or output store that goes away: retry with backoff 1, 2, 5, 10, 30, 60 s + jitter.

The schedule starts again from the first step for every call, so it resets after a success.
A worker gives up (DatabaseUnavailable, exit 1) only after `max_outage_s` without an answer.
`Reconnecting` is the policy bound to one worker's stop event and pause note: the one place its
engine gateway (gateway.py) and its store calls go through.
"""

from __future__ import annotations

import random
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from pipeline_kit.errors import DatabaseUnavailable, StoreUnavailable

T = TypeVar("T")
P = ParamSpec("P")
SCHEDULE = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


# Words in a driver's message that mean "the server is not there" or "it rolled your transaction
# back, try again" (a deadlock victim), not "your SQL is wrong". Every engine call is one
# transaction guarded by its lease token, so running it again is safe.
_LOSS = re.compile(
    r"connection|connect to|server closed|terminating|shutting down|lost|gone away|broken pipe|"
    r"timeout|timed out|database is locked|unable to open|refused|reset by peer|not accepting|"
    r"starting up|recovery mode|admin shutdown|deadlock|try restarting transaction|could not serialize",
    re.IGNORECASE,
)


def is_connection_loss(exc: DBAPIError) -> bool:
    """True for a lost connection or a rolled-back deadlock victim (worth retrying), False for an
    error in the SQL."""
    if exc.connection_invalidated or isinstance(exc, InterfaceError):
        return True
    return isinstance(exc, OperationalError) and bool(_LOSS.search(str(exc.orig)))


@dataclass(frozen=True)
class Reconnect:
    schedule: Sequence[float] = SCHEDULE
    jitter: float = 0.2
    max_outage_s: float = 900.0

    def call(
        self,
        fn: Callable[[], T],
        *,
        what: str,
        stop: threading.Event | None = None,
        paused: Callable[[str | None], None] = lambda why: None,
    ) -> T:
        """Run `fn`; on a lost connection wait and run it again, until it answers or time is up.
        `paused` hears why the caller waits when a store wait begins, and None once it answered."""
        started = time.monotonic()
        step = 0
        while True:
            try:
                answer = fn()
                if step:
                    paused(None)
                return answer
            except (DBAPIError, StoreUnavailable) as exc:
                if isinstance(exc, DBAPIError) and not is_connection_loss(exc):
                    raise
                away = "store" if isinstance(exc, StoreUnavailable) else "database"
                waited = time.monotonic() - started
                if waited >= self.max_outage_s:
                    raise DatabaseUnavailable(f"{away} away for {waited:.0f} s during {what}; giving up") from None
                delay = self.schedule[min(step, len(self.schedule) - 1)]
                delay *= random.uniform(1 - self.jitter, 1 + self.jitter)
                why = f" ({exc})" if isinstance(exc, StoreUnavailable) else ""
                sys.stderr.write(f"{away} unreachable during {what}{why}; retrying in {delay:.1f} s\n")
                if step == 0 and isinstance(exc, StoreUnavailable):
                    paused(f"store unreachable during {what}")
                step += 1
                if stop is not None and stop.wait(delay):
                    raise DatabaseUnavailable(f"stopped while the {away} was away during {what}") from None
                if stop is None:
                    time.sleep(delay)


@dataclass(frozen=True)
class Reconnecting:
    """A worker's reconnect policy bound to its stop event and pause note: `self(what, fn, ...)`
    runs `fn(...)` through `Reconnect.call`, `what` naming the call in the lines it writes."""

    policy: Reconnect
    stop: threading.Event
    paused: Callable[[str | None], None]

    def __call__(self, what: str, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.policy.call(lambda: fn(*args, **kwargs), what=what, stop=self.stop, paused=self.paused)
