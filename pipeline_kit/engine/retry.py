"""Retry policy: a pure value object that turns a failure into a decision. No database here."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    retry: bool
    delay_s: float  # wait before the task is claimable again (0 when not retrying)
    reason: str


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter.

    delay(n) = min(cap_s, base_s * factor ** (n - 1)) * U(1 - jitter, 1 + jitter), at least the
    server's Retry-After when it gave one; n is the number of attempts used so far (1 after
    the first failure). A task retries while n < max_attempts and the error is retryable.
    """

    base_s: float = 5.0
    factor: float = 2.0
    cap_s: float = 600.0
    jitter: float = 0.2

    def delay(self, attempts_used: int, *, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        raw = min(self.cap_s, self.base_s * self.factor ** max(0, attempts_used - 1))
        spread = (rng or random).uniform(1 - self.jitter, 1 + self.jitter)
        return max(raw * spread, retry_after or 0.0)

    def decide(
        self,
        *,
        retryable: bool,
        attempts_used: int,
        max_attempts: int,
        retry_after: float | None = None,
        rng: random.Random | None = None,
    ) -> Decision:
        if not retryable:
            return Decision(False, 0.0, "permanent error")
        if attempts_used >= max_attempts:
            return Decision(False, 0.0, f"gave up after {attempts_used} of {max_attempts} attempts")
        return Decision(
            True,
            self.delay(attempts_used, retry_after=retry_after, rng=rng),
            f"attempt {attempts_used} of {max_attempts} failed",
        )


DEFAULT_POLICY = RetryPolicy()
