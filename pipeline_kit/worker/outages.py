"""Providers this worker has paused: a call turned away (unreachable, or refused with 429/503
before any work) gives its task back unspent and pauses the provider that turned it away.

While paused, the worker claims none of the kinds that provider makes. After a backoff (doubling
from `Backoff.first_s` up to `max_s`, or the provider's own Retry-After when longer) a probe asks
again: for a provider that could not be reached, the backend's free `check()` when it has one;
else (a provider that refused calls answers its check all along) the next real call. The first turned
away call says so in one line and an alert; the probe that gets through says so in one line; the
calls and probes between them say nothing. The worker's vote that the provider is down is kept in
the database (engine/outages.py), and the providers enough workers agree on are skipped by every
worker (`Outages`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pipeline_kit.engine.outages import DEFAULT_QUORUM, Outage
from pipeline_kit.errors import GenerationError
from pipeline_kit.plural import plural
from pipeline_kit.worker.gateway import EngineGateway

VOTE_MARGIN_S = 30.0  # a vote outlives the next probe by this much: a dead worker's lapses soon after


@dataclass(frozen=True)
class Backoff:
    """Seconds before probing a paused provider: `first_s`, times `factor` after each probe that
    fails, at most `max_s`."""

    first_s: float = 5.0
    factor: float = 2.0
    max_s: float = 300.0

    def delay(self, failures: int) -> float:
        """The wait after the `failures`-th turned away call or failed probe in a row (from 1)."""
        return min(self.max_s, self.first_s * self.factor ** max(0, failures - 1))


@dataclass
class Pause:
    """One paused provider: how it turned calls away (`state`: unreachable, or refusing calls) and
    why, since when (the clock's), how many probes failed, when to probe."""

    provider: str
    error_kind: str  # of the call that paused it: unreachable, rate_limited, server_error (503)
    reason: str
    since: float
    failures: int
    probe_at: float
    probing: bool = False  # its kinds are claimable: the next real call is the probe

    @property
    def state(self) -> str:
        return "unreachable" if self.error_kind == "unreachable" else "refusing calls"

    @property
    def shared(self) -> bool:
        """Whether the fleet meets it too (a rate limit is this worker's identity's own): it votes."""
        return self.error_kind != "rate_limited"


class ProviderPauses:
    """The providers this worker has paused, safe to use from every task's thread."""

    def __init__(
        self,
        worker_id: str,
        backoff: Backoff,
        *,
        clock: Callable[[], float] = time.monotonic,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.worker_id, self.backoff, self._clock = worker_id, backoff, clock
        self._say = say or (lambda line: sys.stderr.write(line + "\n"))
        self._paused: dict[str, Pause] = {}
        self._lock = threading.Lock()

    def turned_away(
        self, provider: str, error_kind: str, reason: str, retry_after: float | None = None
    ) -> tuple[Pause, bool]:
        """A call to `provider` was turned away (`error_kind` unreachable, or refused before any
        work): pause it, or keep it paused (a failed real-call probe waits longer). Returns the
        pause and whether it is new (the caller alerts then)."""
        now = self._clock()
        with self._lock:
            pause = self._paused.get(provider)
            new = pause is None
            if pause is None:
                pause = self._paused[provider] = Pause(provider, error_kind, reason, now, 0, now)
                self._say(f"{self.worker_id}: {provider} {pause.state} ({reason}); its tasks wait, nothing is spent")
            if new or pause.probing:  # the probe's answer is the latest word on the provider
                pause.error_kind, pause.reason = error_kind, reason
                pause.failures += 1
                pause.probing = False
                pause.probe_at = now + max(self.backoff.delay(pause.failures), retry_after or 0.0)
            elif retry_after:  # a call in flight met the outage too: never probe before the provider asked
                pause.probe_at = max(pause.probe_at, now + retry_after)
            return pause, new

    def probe_failed(self, provider: str) -> None:
        """A probe was turned away too: wait longer before the next one."""
        with self._lock:
            pause = self._paused.get(provider)
            if pause is not None:
                pause.failures += 1
                pause.probe_at = self._clock() + self.backoff.delay(pause.failures)

    def probing(self, provider: str) -> None:
        """Let the next real call be the probe (a backend with no free check)."""
        with self._lock:
            if provider in self._paused:
                self._paused[provider].probing = True

    def reached(self, provider: str) -> float | None:
        """A call or probe got through to `provider`: resume it (one line); the seconds it was
        paused, None if it was not."""
        with self._lock:
            pause = self._paused.pop(provider, None)
        if pause is None:
            return None
        away = self._clock() - pause.since
        self._say(f"{self.worker_id}: {provider} answers again after {away:.0f} s; its tasks resume")
        return away

    def due(self) -> list[Pause]:
        """Paused providers whose probe is due."""
        now = self._clock()
        with self._lock:
            return [p for p in self._paused.values() if not p.probing and p.probe_at <= now]

    def held(self) -> list[str]:
        """Providers whose kinds this worker must not claim now (paused and not being probed)."""
        with self._lock:
            return [p.provider for p in self._paused.values() if not p.probing]

    def names(self) -> list[str]:
        """Every provider paused here, probed or not."""
        with self._lock:
            return sorted(self._paused)

    def hold_s(self, pause: Pause) -> float:
        """How long this worker's vote lives: until the next probe, plus a margin."""
        return max(0.0, pause.probe_at - self._clock()) + VOTE_MARGIN_S

    def note(self) -> str | None:
        """What the worker waits for, for its row: "comfyui at ... unreachable" (None: nothing)."""
        with self._lock:
            paused = sorted(self._paused.values(), key=lambda p: p.provider)
        return "; ".join(f"{p.provider} {p.state}" for p in paused) or None


class Outages:
    """A worker's providers that are down, and what it does about them: pauses and probes of its
    own (`pauses`), its votes, and the pauses of the fleet, re-read every `ttl_s`.

    `engine` is the worker's engine gateway (each call retried while the database is away),
    `backends()` gives the worker's backends by provider, `nudge()` has its row written soon (it
    was paused or resumed).
    """

    def __init__(
        self,
        engine: EngineGateway,
        worker_id: str,
        *,
        backoff: Backoff,
        quorum: int = DEFAULT_QUORUM,
        backends: Callable[[], Mapping[str, object]],
        nudge: Callable[[], None],
        ttl_s: float = 2.0,
    ) -> None:
        self.engine, self.worker_id, self.quorum, self.ttl_s = engine, worker_id, quorum, ttl_s
        self.pauses = ProviderPauses(worker_id, backoff)
        self._backends, self._nudge = backends, nudge
        self._down: dict[str, Outage] = {}
        self._read_at = -1e9
        self._fleet: set[str] = set()  # this worker's providers the fleet has paused
        self._voting = threading.Lock()  # tasks in flight vote from their threads; one row per provider

    def turned_away(self, who: str, exc: GenerationError, task_id: str) -> None:
        """A call to `who` was turned away (its task given back): pause it, vote, alert if new."""
        pause, new = self.pauses.turned_away(who, exc.error_kind, str(exc)[:200], exc.retry_after)
        self._vote(pause, new=new, task_id=task_id)

    def reached(self, who: str) -> None:
        """A call got through to `who`: if it was paused here, resume it and withdraw the vote."""
        away = self.pauses.reached(who)
        if away is not None:
            self.engine.vote_up(who, away_s=away)
            self._read_at = -1e9
            self._nudge()

    def probe(self) -> None:
        """Ask each paused provider whose backoff is over whether it answers: one that could not
        be reached, by its backend's free check; else (no check, or a provider that refused calls
        and answers a check all along) by the next real call, its kinds claimed again."""
        for pause in self.pauses.due():
            check = getattr(self._backends().get(pause.provider), "check", None)
            if not callable(check) or pause.error_kind != "unreachable":
                self.pauses.probing(pause.provider)
                continue
            try:
                check()
            except GenerationError as exc:
                if exc.turned_away:
                    self.pauses.probe_failed(pause.provider)
                    self._vote(pause)
                    continue
            self.reached(pause.provider)

    def held(self) -> set[str]:
        """The providers whose kinds the worker must not claim now: paused here or for the fleet
        (a line when a fleet pause of one of its providers begins, one when it ends)."""
        if time.monotonic() - self._read_at > self.ttl_s:
            self._down = self.engine.fleet_down(self.quorum)
            self._read_at = time.monotonic()
        mine = self._backends()
        self._say_fleet({who: o.workers for who, o in self._down.items() if who in mine})
        return set(self.pauses.held()) | self._fleet

    def note(self) -> str | None:
        """What the worker waits for, for its row: its own pauses, then the fleet's it has not met."""
        fleet = sorted(self._fleet - set(self.pauses.names()))
        notes = [self.pauses.note() or "", f"{', '.join(fleet)} unreachable (paused for the fleet)" if fleet else ""]
        return "; ".join(n for n in notes if n) or None

    def _vote(self, pause: Pause, *, new: bool = False, task_id: str | None = None) -> None:
        """Keep this worker's vote that `pause.provider` is down live until after its next probe
        (a rate limit is no vote: it is this worker's own identity's); a new pause is an alert."""
        if new:
            self._nudge()
        if not pause.shared:
            if new:
                self.engine.alert_paused(pause.provider, pause.reason, task_id=task_id)
            return
        hold_s = self.pauses.hold_s(pause)
        with self._voting:
            self.engine.vote_down(
                pause.provider, pause.reason, hold_s=hold_s, quorum=self.quorum, task_id=task_id, new=new
            )
        self._read_at = -1e9

    def _say_fleet(self, down: Mapping[str, int]) -> None:
        for who in sorted(down.keys() - self._fleet):
            sys.stderr.write(
                f"{self.worker_id}: {who} paused for the fleet ({plural(down[who], 'worker')} "
                "find it down); its tasks wait\n"
            )
        for who in sorted(self._fleet - down.keys()):
            sys.stderr.write(f"{self.worker_id}: the fleet's pause of {who} is over; its tasks resume\n")
        if down.keys() != self._fleet:
            self._fleet = set(down)
            self._nudge()
