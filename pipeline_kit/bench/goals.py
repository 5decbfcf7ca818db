"""The stated goals, judged from what was measured (never assumed): met, missed or not measured."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline_kit.bench.peers import LOOP, LOOP_BATCH, PEER_GOAL_LIBRARIES, PeerFigures, best
from pipeline_kit.bench.results import Goal, LatencyRow, ThroughputRow

RAW_SHARE = 0.8
LATENCY_GROWTH = 1.5
SMALL, LARGE = 10_000, 1_000_000
HISTORY_SHARE = 0.9  # the attempt history may cost at most 10% against the minimal loop ...
HISTORY_AT = tuple((d, n, b) for d in ("postgresql", "sqlite") for n in (1, 2, 4) for b in (10, 100))  # ... in each


@dataclass(frozen=True)
class Versus:
    """A goal against one peer's best: our fastest row over its best configuration reaches `bar` at each count."""

    goal: str  # the goal's name, before where the peer figures come from
    library: str  # as Peer.name
    database: str
    bar: float  # the ratio ours / theirs to reach
    counts: tuple[int, ...]  # process counts, each measured on both sides
    batch: int | None = None  # ours at this batch only; None: at our best batch


VERSUS = (
    Versus(
        "PostgreSQL engine, history kept, ahead of graphile-worker's best at 1 and 2 processes",
        "graphile-worker",
        "postgresql",
        1.0,
        (1, 2),
    ),
    Versus("PostgreSQL engine >= 1.8x pgqueuer's best at 1 and 2 processes", "pgqueuer", "postgresql", 1.8, (1, 2)),
    Versus(
        f"SQLite engine >= 0.5 of {LOOP}'s bare claim-{LOOP_BATCH} loop at batch {LOOP_BATCH}, 1, 2 and 4 processes",
        LOOP,
        "sqlite",
        0.5,
        (1, 2, 4),
        batch=LOOP_BATCH,
    ),
)


def judge(results: Sequence[ThroughputRow], latency: Sequence[LatencyRow], peers: PeerFigures) -> tuple[Goal, ...]:
    return (
        _raw_share(results),
        _peers(results, peers),
        *_latency(latency),
        _exactly_once(results),
        _history(results),
        *(_versus(results, peers, v) for v in VERSUS),
    )


def _raw_share(results: Sequence[ThroughputRow]) -> Goal:
    name = f"engine >= {RAW_SHARE:.0%} of the raw ceiling (its own SQL, bare) at every worker count"
    if not results:
        return Goal(name, None, "no throughput measured")
    worst = min(results, key=lambda r: r.ratio)
    below = [r for r in results if r.ratio < RAW_SHARE]
    detail = (
        f"{len(results) - len(below)} of {len(results)} configurations at or above; lowest "
        f"{worst.ratio:.2f} ({worst.database}, {worst.workers} workers, batch {worst.batch}); against the "
        f"minimal floor with no attempt history {min(r.minimal_ratio for r in results):.2f}"
        f"–{max(r.minimal_ratio for r in results):.2f}"
    )
    return Goal(name, not below, detail)


def _peers(results: Sequence[ThroughputRow], figures: PeerFigures) -> Goal:
    """Our best batch against each goal library's best configuration, per process count both measured at."""
    name = f"ahead of procrastinate, pgqueuer and oban (PostgreSQL, same process count; peers {figures.when})"
    fastest = best(figures.peers)
    ours = [r for r in results if r.database == "postgresql"]
    counts = sorted({n for _, database, n in fastest if database == "postgresql"} & {r.workers for r in ours})
    if not counts:
        return Goal(name, None, f"PostgreSQL not measured at a process count of the peers ({figures.source})")
    parts: list[str] = []
    verdicts: list[bool | None] = []
    for library in PEER_GOAL_LIBRARIES:
        for n in counts:
            peer = fastest.get((library, "postgresql", n))
            if peer is None:
                parts.append(f"{library} x{n}: not in the peer figures")
                verdicts.append(None)
                continue
            top = max((r for r in ours if r.workers == n), key=lambda r: r.tasks_per_s)
            ahead = top.tasks_per_s > peer.jobs_per_s
            verdicts.append(ahead)
            parts.append(
                f"{library} x{n}: {top.tasks_per_s:,.0f} (batch {top.batch}) "
                f"vs {peer.jobs_per_s:,.0f} {'ahead' if ahead else 'BEHIND'}"
            )
    return Goal(name, _all(verdicts), "; ".join(parts) + f" (peers: {figures.source})")


def _history(results: Sequence[ThroughputRow]) -> Goal:
    """Engine against its minimal loop (no attempt history) in every configuration of HISTORY_AT."""
    name = (
        f"history costs at most {1 - HISTORY_SHARE:.0%}: engine >= {HISTORY_SHARE} of its minimal loop on PostgreSQL "
        "and SQLite at 1, 2, 4 processes, batch 10 and 100"
    )
    found = {(r.database, r.workers, r.batch): r for r in results}
    rows = [found[key] for key in HISTORY_AT if key in found]
    if not rows:
        return Goal(name, None, "none of these configurations measured in this run")
    detail = "; ".join(f"{r.database} x{r.workers} b{r.batch}: {r.minimal_ratio:.2f}" for r in rows)
    missing = len(HISTORY_AT) - len(rows)
    if missing:
        detail += f"; {missing} of {len(HISTORY_AT)} configurations not measured"
    return Goal(name, _all([r.minimal_ratio >= HISTORY_SHARE for r in rows] + [None] * missing), detail)


def _versus(results: Sequence[ThroughputRow], figures: PeerFigures, versus: Versus) -> Goal:
    """Our fastest row over the peer's best configuration per process count; met only if every count was
    measured on both sides and reached the bar."""
    fastest = best(figures.peers)
    ours = [r for r in results if r.database == versus.database and versus.batch in (None, r.batch)]
    parts: list[str] = []
    verdicts: list[bool | None] = []
    for n in versus.counts:
        theirs = fastest.get((versus.library, versus.database, n))
        mine = [r for r in ours if r.workers == n]
        if theirs is None or not mine:
            parts.append(f"x{n}: {'ours' if theirs else versus.library} not measured")
            verdicts.append(None)
            continue
        top = max(mine, key=lambda r: r.tasks_per_s)
        ratio = top.tasks_per_s / theirs.jobs_per_s
        verdicts.append(ratio >= versus.bar)
        parts.append(
            f"x{n}: {top.tasks_per_s:,.0f} (batch {top.batch}) / {theirs.jobs_per_s:,.0f} ({theirs.config}) "
            f"= {ratio:.2f}{'' if ratio >= versus.bar else ' BELOW'}"
        )
    detail = "; ".join(parts) + f" (peers: {figures.source})"
    return Goal(f"{versus.goal} (peers {figures.when})", _all(verdicts), detail)


def _all(verdicts: list[bool | None]) -> bool | None:
    """A goal of several parts: missed if one missed, else not measured if one was not, else met."""
    return False if False in verdicts else (None if None in verdicts else True)


def _latency(latency: Sequence[LatencyRow]) -> list[Goal]:
    goals: list[Goal] = []
    for database in dict.fromkeys(r.database for r in latency):
        rows = {(r.pending, r.completed): r for r in latency if r.database == database}
        small = rows.get((SMALL, 0))
        name = f"{database}: claim latency at 1,000,000 pending within {LATENCY_GROWTH}x of 10,000"
        large = rows.get((LARGE, 0))
        if small is None or large is None:
            goals.append(Goal(name, None, "not measured at 10,000 and 1,000,000 pending in this run"))
            continue
        growth = large.p50_ms / small.p50_ms
        detail = (
            f"p50 {small.p50_ms:.3f} -> {large.p50_ms:.3f} ms (x{growth:.2f}); "
            f"p95 {small.p95_ms:.3f} -> {large.p95_ms:.3f} ms (x{large.p95_ms / small.p95_ms:.2f})"
        )
        history = [r for (p, c), r in rows.items() if p == SMALL and c > 0]
        for h in history:
            detail += f"; with {h.completed:,} completed kept: p50 {h.p50_ms:.3f} ms (x{h.p50_ms / small.p50_ms:.2f})"
        goals.append(Goal(name, growth <= LATENCY_GROWTH, detail))
    return goals


def _exactly_once(results: Sequence[ThroughputRow]) -> Goal:
    bad = [r for r in results if not r.exactly_once]
    detail = "every run verified" if not bad else ", ".join(f"{r.database} x{r.workers} b{r.batch}" for r in bad)
    return Goal("every task completed exactly once in every run", not bad if results else None, detail)
