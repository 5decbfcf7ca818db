"""Per-uid token buckets, plus the server's own Retry-After, shared by the HTTP backends.

Each uid (a worker's API identity) gets a bucket of `burst` tokens refilled at `rate` tokens a
second; a call takes one token. A 429's Retry-After blocks that uid's next call until the
server's time has passed. A caller that would have to wait longer than it may (its timeout)
gets a retryable `rate_limited` error at once instead of sleeping through its lease; the call
never went out, so it is `turned_away` (no attempt used, the provider paused for that long).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pipeline_kit.errors import BadInput, GenerationError


@dataclass
class _Bucket:
    tokens: float
    updated: float
    blocked_until: float = 0.0


class RateLimiter:
    """A thread-safe token bucket per uid (`rate` calls a second, bursts of `burst`)."""

    def __init__(
        self,
        rate: float,
        burst: int = 1,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not (rate > 0 and burst >= 1):
            raise BadInput(f"rate limit needs rate > 0 and burst >= 1, got {rate}, {burst}")
        self.rate, self.burst = float(rate), int(burst)
        self._clock, self._sleep = clock, sleep
        self._buckets: dict[str | None, _Bucket] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, service: str, rate: float = 1.0, burst: int = 2) -> RateLimiter:
        """Limits from PIPELINE_KIT_<SERVICE>_RATE (calls/s per uid) and _BURST."""
        prefix = f"PIPELINE_KIT_{service.upper()}_"
        try:
            rate = float(os.environ.get(prefix + "RATE", rate))
            burst = int(os.environ.get(prefix + "BURST", burst))
        except ValueError as exc:
            raise BadInput(f"{prefix}RATE/{prefix}BURST must be numbers: {exc}") from None
        return cls(rate, burst)

    def _bucket(self, uid: str | None, now: float) -> _Bucket:
        bucket = self._buckets.get(uid)
        if bucket is None:
            bucket = self._buckets[uid] = _Bucket(tokens=float(self.burst), updated=now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        return bucket

    def acquire(self, uid: str | None, max_wait: float = float("inf")) -> float:
        """Take a token for `uid`, sleeping until one is due; returns the seconds waited.

        Raises a retryable `rate_limited` GenerationError (without taking a token) when the
        wait would exceed `max_wait`.
        """
        with self._lock:
            now = self._clock()
            bucket = self._bucket(uid, now)
            token_wait = max(0.0, (1.0 - bucket.tokens) / self.rate)
            wait = max(token_wait, bucket.blocked_until - now)
            if wait > max_wait:
                raise GenerationError(
                    f"rate_limited: uid {uid!r} may call again in {wait:.1f} s",
                    error_kind="rate_limited",
                    retryable=True,
                    retry_after=wait,
                    turned_away=True,
                )
            bucket.tokens -= 1.0  # may go negative: a reservation that later callers wait behind
        if wait > 0:
            self._sleep(wait)
        return wait

    def defer(self, uid: str | None, seconds: float) -> None:
        """Honour a server's Retry-After: block `uid`'s next call for `seconds`."""
        with self._lock:
            now = self._clock()
            bucket = self._bucket(uid, now)
            bucket.blocked_until = max(bucket.blocked_until, now + max(0.0, seconds))
