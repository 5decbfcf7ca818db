"""Benchmark subcommand: `bench` (engine throughput vs the raw ceiling, enqueue, claim latency)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline_kit.cli.common import positive_int


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `bench` to the parser."""
    p = sub.add_parser(
        "bench",
        help="benchmark the engine against the raw-SQL ceiling (scratch databases only)",
        description="Runs in scratch databases it creates and drops; --db is ignored.",
    )
    p.add_argument("--quick", action="store_true", help="1 run, 1,000 tasks, workers 1,2, small latency backlogs")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the markdown table")
    p.add_argument("--databases", metavar="LIST", help="sqlite,postgresql,mariadb (default: all three)")
    p.add_argument("--workers", metavar="LIST", help="worker process counts (default 1,2,4,8)")
    p.add_argument("--batches", metavar="LIST", help="tasks per claim (default 1,10)")
    p.add_argument(
        "--tasks",
        type=positive_int,
        metavar="N",
        help="tasks per run, at every batch (default: 2,000 claims' worth, so 2,000 at batch 1 and 20,000 at batch 10)",
    )
    p.add_argument("--runs", type=positive_int, metavar="R", help="runs per configuration, median reported (default 3)")
    p.add_argument(
        "--latency-rows",
        metavar="LIST",
        help="pending backlogs for the claim-latency test (default 10000,1000000; 0 skips it)",
    )
    p.add_argument("--out", type=Path, help="where the JSON and markdown go (default reports/bench)")
    p.add_argument(
        "--peers",
        type=Path,
        metavar="DIR",
        help="judge the peer goal against DIR/libs.jsonl, measured the same day by bench/peers.sh "
        "(default: the figures of ../shared/bench-peers/REPORT.md, another day)",
    )
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from pipeline_kit.bench import build_config, run_bench
    from pipeline_kit.bench.report import markdown, to_json, write

    config = build_config(
        quick=args.quick,
        databases=args.databases,
        workers=args.workers,
        batches=args.batches,
        tasks=args.tasks,
        runs=args.runs,
        latency_rows=args.latency_rows,
        out=args.out,
        peers=args.peers,
    )
    report = run_bench(config, progress=lambda line: print(line, file=sys.stderr, flush=True))
    json_path, md_path = write(report, config.out)
    if args.json:
        print(json.dumps(to_json(report), indent=2, ensure_ascii=False))
    else:
        print(markdown(report))
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)
    if report.failures:
        print(f"pipeline-kit: bench incomplete: {report.failures[0]}", file=sys.stderr)
        return 1
    return 0
