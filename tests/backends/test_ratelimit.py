"""The per-uid token bucket and the server's Retry-After."""

from __future__ import annotations

import threading
import time

import pytest

from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput, GenerationError


class FakeClock:
    """A clock that only moves when the limiter sleeps (deterministic tests)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def limiter(rate: float, burst: int) -> tuple[RateLimiter, FakeClock]:
    clock = FakeClock()
    return RateLimiter(rate, burst, clock=clock, sleep=clock.sleep), clock


def test_bucket_allows_a_burst_then_the_rate() -> None:
    """A uid gets `burst` calls at once, then one every 1/rate seconds."""
    bucket, clock = limiter(rate=2.0, burst=2)
    waits = [bucket.acquire("u1") for _ in range(5)]
    assert waits == pytest.approx([0, 0, 0.5, 0.5, 0.5])
    assert clock.now == pytest.approx(101.5)


def test_uids_have_separate_buckets() -> None:
    """One worker's API identity exhausting its quota does not slow another's."""
    bucket, _ = limiter(rate=1.0, burst=1)
    assert bucket.acquire("a") == 0 and bucket.acquire("b") == 0
    assert bucket.acquire("a") == pytest.approx(1.0)


def test_idle_time_refills_up_to_burst() -> None:
    """Tokens come back with time but never pile up beyond the burst."""
    bucket, clock = limiter(rate=1.0, burst=2)
    bucket.acquire("u"), bucket.acquire("u")
    clock.now += 60
    assert [bucket.acquire("u") for _ in range(3)] == pytest.approx([0, 0, 1.0])


def test_retry_after_blocks_the_uid_until_then() -> None:
    """After a 429 with Retry-After S, the uid's next call waits at least S."""
    bucket, _ = limiter(rate=100.0, burst=10)
    bucket.acquire("u")
    bucket.defer("u", 3.0)
    assert bucket.acquire("u") == pytest.approx(3.0)
    assert bucket.acquire("other") == 0


def test_a_wait_longer_than_allowed_fails_fast_without_taking_a_token() -> None:
    """A caller is told to retry later (rate_limited, retry_after) instead of sleeping past its
    timeout, and the refused call does not use up quota: it never went out, so it is turned
    away (the worker spends no attempt on it)."""
    bucket, clock = limiter(rate=1.0, burst=1)
    bucket.defer("u", 30.0)
    with pytest.raises(GenerationError) as info:
        bucket.acquire("u", max_wait=1.0)
    assert info.value.retryable and info.value.error_kind == "rate_limited" and info.value.turned_away
    assert info.value.retry_after == pytest.approx(30.0)
    clock.now += 30
    assert bucket.acquire("u") == 0


def test_threads_sharing_a_uid_respect_its_rate() -> None:
    """Concurrent callers on one uid together get no more than burst + rate * elapsed calls."""
    bucket = RateLimiter(rate=40.0, burst=1)
    start = time.monotonic()
    times: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            bucket.acquire("shared")
            with lock:
                times.append(time.monotonic() - start)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(times) == 20
    assert max(times) >= 19 / 40 * 0.95  # 20 calls at 40/s with a burst of 1: >= 0.475 s
    for count, moment in enumerate(sorted(times), start=1):
        assert count <= 1 + 40 * moment + 1  # one token of slack for clock granularity


@pytest.mark.parametrize(("rate", "burst"), [(0, 1), (-1, 1), (1, 0)])
def test_invalid_limits_are_bad_input(rate: float, burst: int) -> None:
    """A zero or negative limit is a configuration mistake, reported in one line."""
    with pytest.raises(BadInput):
        RateLimiter(rate, burst)


def test_limits_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """PIPELINE_KIT_<SERVICE>_RATE/_BURST configure a service's limiter."""
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_RATE", "0.5")
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_BURST", "4")
    bucket = RateLimiter.from_env("openai")
    assert (bucket.rate, bucket.burst) == (0.5, 4)
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_RATE", "fast")
    with pytest.raises(BadInput):
        RateLimiter.from_env("openai")
