"""The bench's output: one JSON object and a markdown page (with the peers quoted beside)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from pipeline_kit.bench.peers import REPORT_DAY, REPORT_RAW
from pipeline_kit.bench.results import BenchReport, ThroughputRow
from pipeline_kit.plural import plural


def to_json(report: BenchReport) -> dict[str, Any]:
    """A JSON-ready dict; each `results` row has database, workers, batch, tasks_per_s, raw_tasks_per_s, ratio;
    `peers` has the peer figures the goals used (`peers`), their `source` and whether measured `same_day`."""
    return _rounded(dataclasses.asdict(report))


def write(report: BenchReport, out: Path) -> tuple[Path, Path]:
    """Write engine-<timestamp>.json and engine.md under `out`; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    stamp = report.started_at.replace(":", "").replace("-", "")
    json_path = out / f"engine-{stamp}.json"
    json_path.write_text(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path = out / "engine.md"
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path


def markdown(report: BenchReport) -> str:
    m, c, p = report.machine, report.config, report.peers
    lines = [
        "# Engine benchmark: claim-to-complete throughput vs the raw-SQL ceiling",
        "",
        f"Started {report.started_at} UTC, took {report.seconds:.0f} s. {m['cpus']} CPUs, load average "
        f"{m['load_before']} before / {m['load_after']} after; Python {m['python']}, "
        f"SQLAlchemy {m['sqlalchemy']}, {'; '.join(f'{k} {v}' for k, v in m['servers'].items())}.",
        "No-op tasks per run: "
        + ", ".join(f"{n:,} at batch {b}" for b, n in c["tasks_per_run"].items())
        + f"; median of {plural(c['runs'], 'run')}; engine, raw and minimal runs take turns, "
        "so ratios are side by side. Definitions: bench/README.md.",
        "",
        *(f"**Stopped early:** {f}" for f in report.failures),
        *([""] if report.failures else []),
        "## Goals",
        "",
        "| goal | met | detail |",
        "|---|---|---|",
        *(f"| {g.goal} | {_met(g.met)} | {g.detail} |" for g in report.goals),
        "",
        "## Claim-to-complete throughput (tasks/s, median (min–max))",
        "",
        "| database | workers | batch | engine | raw ceiling | engine / raw | minimal, no history | engine / minimal "
        "| CPU ms/task engine / raw | fairness | exactly once |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(_throughput_line(r) for r in report.results),
        "",
        "Raw ceiling: the engine's own claim and completion SQL (attempt rows included) in a bare loop;",
        "minimal: the claim statement without attempt rows and one guarded UPDATE per batch, to show",
        "what the attempt history costs. Same driver, connections, process count and batch for all three.",
        "CPU ms/task: CPU time of the worker processes per task (client side only; the database server's",
        "own CPU is not counted). It does not depend on how busy the machine was, so it is the steadiest",
        "measure of the engine's overhead. Fairness: the smallest worker's share of the tasks times the",
        "worker count (1.00 = even), median of the engine runs.",
        "",
        "## Bulk enqueue (one engine.enqueue call, timed to commit)",
        "",
        "| database | tasks | runs | tasks/s, median (min–max) |",
        "|---|---|---|---|",
        *(
            f"| {e.database} | {e.tasks:,} | {e.runs} | {_rate(e.tasks_per_s, e.tasks_per_s_min, e.tasks_per_s_max)} |"
            for e in report.enqueue
        ),
        "",
        "## Claim latency, one client (claim 1 + commit, ms)",
        "",
        "| database | pending | completed kept | claims | engine p50 | engine p95 | raw p50 | raw p95 | seed s |",
        "|---|---|---|---|---|---|---|---|---|",
        *(
            f"| {x.database} | {x.pending:,} | {x.completed:,} | {x.claims:,} | {x.p50_ms:.3f} | {x.p95_ms:.3f} | "
            f"{x.raw_p50_ms:.3f} | {x.raw_p95_ms:.3f} | {x.seed_s:.1f} |"
            for x in report.latency
        ),
        "",
        f"## Peers, {p.when}",
        "",
        f"Source: {p.source}. Backlog drain of no-op jobs, median of the clean runs; the peer goal takes each",
        "library's best configuration at each process count."
        + ("" if p.same_day else " Measured under other load: compare orders of magnitude, not digits."),
        "",
        "| library | database | processes | configuration | runs | measured | jobs/s |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| {x.library} | {x.database} | {x.processes} | {x.config} | {x.runs} | {x.measured} | "
            f"{x.jobs_per_s:,.0f} |"
            for x in p.peers
        ),
        "",
        f"REPORT.md's own raw ceilings ({REPORT_DAY}, its minimal `jobs` table, not this schema), jobs/s:",
        "",
        "| database | statements | 1 | 2 | 4 | 8 |",
        "|---|---|---|---|---|---|",
        *(
            f"| {db} | {what} | " + " | ".join(f"{by.get(n, 0):,}" if n in by else "–" for n in (1, 2, 4, 8)) + " |"
            for db, what, by in REPORT_RAW
        ),
        "",
    ]
    return "\n".join(lines)


def _throughput_line(r: ThroughputRow) -> str:
    return (
        f"| {r.database} | {r.workers} | {r.batch} | {_rate(r.tasks_per_s, r.tasks_per_s_min, r.tasks_per_s_max)} "
        f"| {_rate(r.raw_tasks_per_s, r.raw_tasks_per_s_min, r.raw_tasks_per_s_max)} | {r.ratio:.2f} "
        f"| {_rate(r.minimal_tasks_per_s, r.minimal_tasks_per_s_min, r.minimal_tasks_per_s_max)} "
        f"| {r.minimal_ratio:.2f} "
        f"| {r.cpu_ms_per_task:.2f} / {r.raw_cpu_ms_per_task:.2f} | {r.fairness:.2f} "
        f"| {'yes' if r.exactly_once else '**NO**'} |"
    )


def _met(met: bool | None) -> str:
    return "not measured" if met is None else ("yes" if met else "**no**")


def _rate(median: float, low: float, high: float) -> str:
    return f"{median:,.0f} ({low:,.0f}–{high:,.0f})"


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value
