"""The worker's pause of a provider that turned calls away, as a pure state machine on a clock
the test moves: no database, no server, no sleeping."""

from __future__ import annotations

import pytest

from pipeline_kit.worker.outages import VOTE_MARGIN_S, Backoff, ProviderPauses

COMFY = "comfyui at 10.0.0.5:8188"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _pauses() -> tuple[ProviderPauses, Clock, list[str]]:
    clock, said = Clock(), []
    return ProviderPauses("pc-1", Backoff(first_s=5, factor=2, max_s=30), clock=clock, say=said.append), clock, said


def test_backoff_doubles_up_to_its_cap() -> None:
    """delay(n) = min(max_s, first_s * factor ** (n - 1))."""
    assert [Backoff(first_s=5, factor=2, max_s=30).delay(n) for n in range(1, 6)] == [5, 10, 20, 30, 30]


def test_one_line_at_the_pause_and_one_at_the_resume_however_many_calls_and_probes_between() -> None:
    """The first turned away call pauses the provider (one line, `new`); calls still in flight
    and failed probes say nothing and only push the next probe out; the probe that gets through
    resumes it with one line saying how long it was away."""
    pauses, clock, said = _pauses()
    pause, new = pauses.turned_away(COMFY, "unreachable", "connection refused")
    assert new and pauses.held() == [COMFY] and pauses.note() == f"{COMFY} unreachable"
    assert said == [f"pc-1: {COMFY} unreachable (connection refused); its tasks wait, nothing is spent"]
    assert not pauses.turned_away(COMFY, "unreachable", "connection refused")[1], (
        "a second call in flight is no new pause"
    )
    assert pauses.due() == []
    clock.now += 5
    assert [p.provider for p in pauses.due()] == [COMFY]
    pauses.probe_failed(COMFY)
    assert pauses.due() == [] and pause.probe_at == clock.now + 10
    clock.now += 10
    pauses.probe_failed(COMFY)
    assert pause.probe_at == clock.now + 20
    assert pauses.hold_s(pause) == 20 + VOTE_MARGIN_S
    clock.now += 20
    assert pauses.reached(COMFY) == pytest.approx(35)
    assert said[1:] == [f"pc-1: {COMFY} answers again after 35 s; its tasks resume"]
    assert pauses.held() == [] and pauses.note() is None and pauses.reached(COMFY) is None


def test_a_retry_after_longer_than_the_backoff_is_waited_out() -> None:
    """A 429 or 503 asking for 60 s is not probed after 5 s, and a call in flight that hears a
    longer Retry-After pushes the probe out too."""
    pauses, clock, _ = _pauses()
    pause, _ = pauses.turned_away(COMFY, "rate_limited", "HTTP 429", retry_after=60)
    assert pause.probe_at == clock.now + 60
    pauses.turned_away(COMFY, "rate_limited", "HTTP 429", retry_after=90)
    assert pause.probe_at == clock.now + 90


def test_a_refusal_is_told_apart_from_an_outage() -> None:
    """A provider that answered 429 or 503 is shown `refusing calls`, not `unreachable`; a rate
    limit is this worker's identity's own (no vote for a fleet pause), an outage or a 503 is not."""
    pauses, _, said = _pauses()
    limited, _ = pauses.turned_away(COMFY, "rate_limited", "rate_limited: HTTP 429")
    down, _ = pauses.turned_away("ark at ark.example.com", "unreachable", "unreachable: ConnectError")
    busy, _ = pauses.turned_away("openai at api.example.com", "server_error", "server_error: HTTP 503")
    assert pauses.note() == (
        f"ark at ark.example.com unreachable; {COMFY} refusing calls; openai at api.example.com refusing calls"
    )
    assert said[0] == f"pc-1: {COMFY} refusing calls (rate_limited: HTTP 429); its tasks wait, nothing is spent"
    assert (limited.shared, down.shared, busy.shared) == (False, True, True)
    pauses.probing(COMFY)
    pauses.turned_away(COMFY, "server_error", "server_error: HTTP 503")
    assert limited.shared and limited.reason == "server_error: HTTP 503", "the probe's answer is the latest word"


def test_without_a_free_check_the_next_real_call_is_the_probe() -> None:
    """A provider being probed by a real call is claimable again (not held); turned away once
    more, it is held again with a longer wait and no new line; got through, it resumes."""
    pauses, clock, said = _pauses()
    pause, _ = pauses.turned_away(COMFY, "unreachable", "connection refused")
    clock.now += 5
    pauses.probing(COMFY)
    assert pauses.held() == [] and pauses.due() == []
    assert not pauses.turned_away(COMFY, "unreachable", "connection refused")[1]
    assert pauses.held() == [COMFY] and pause.probe_at == clock.now + 10 and len(said) == 1
    clock.now += 10
    pauses.probing(COMFY)
    assert pauses.reached(COMFY) == pytest.approx(15) and len(said) == 2
