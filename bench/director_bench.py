"""Benchmark: the director pass on the sample book through the chat stand-in.

Per run: a fresh SQLite database, the sample book ingested and split with `--director
openai:director-1`, one in-process worker draining the `llm` lane against the stand-in
(tests/servers/chat_fake.py, which bills tokens as characters / 4), then every director task reset
and run again. Reports calls, tokens and cost per 100 shots for two context sizes, and the calls
of the rerun (the goal: 0). Prices are illustrative (money per million tokens, in and out).
Writes reports/bench/director.json and director.md.

    python bench/director_bench.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
PRICE_IN, PRICE_OUT = 0.27, 1.10
CONTEXTS = (8192, 2048)
COLUMNS = (
    ("shots", "shots", ".0f"),
    ("director tasks", "director_tasks", ".0f"),
    ("calls", "calls", ".0f"),
    ("calls /100 shots", "calls_per_100_shots", ".1f"),
    ("tokens /100 shots", "tokens_per_100_shots", ".0f"),
    ("cost /100 shots", "cost_per_100_shots", ".5f"),
    ("first pass s", "first_s", ".2f"),
    ("rerun calls", "rerun_calls", ".0f"),
    ("rerun s", "rerun_s", ".2f"),
)  # (header, result key, format)


def one_run(context: int) -> dict[str, float]:
    """Split with the director, drain the llm lane, reset the director tasks, drain again."""
    import sqlalchemy as sa
    from servers.chat_fake import FakeChat

    from pipeline_kit import engine
    from pipeline_kit.db import create
    from pipeline_kit.db.migrate import init
    from pipeline_kit.db.schema import attempts, tasks
    from pipeline_kit.engine.lanes import seed_default_lanes
    from pipeline_kit.text import ingest_file, sample_book_path, sample_book_title, split_book
    from pipeline_kit.text.direct import DirectorSettings
    from pipeline_kit.worker.runtime import WorkerConfig, run_worker

    with tempfile.TemporaryDirectory(dir="/tmp") as tmp, FakeChat() as chat:
        os.environ.update(
            PIPELINE_KIT_CHAT_URL=f"{chat.url}/v1",
            PIPELINE_KIT_CHAT_API_KEY=chat.api_key,
            PIPELINE_KIT_CHAT_PRICE_IN=str(PRICE_IN),
            PIPELINE_KIT_CHAT_PRICE_OUT=str(PRICE_OUT),
        )
        db = create(f"sqlite:///{tmp}/bench.db")
        init(db)
        seed_default_lanes(db)
        bookcode = ingest_file(db, sample_book_path(), sample_book_title(), progress=False).bookcode
        report = split_book(
            db, bookcode, director=DirectorSettings("openai", "director-1", "en", context), progress=False
        )

        def drain(name: str) -> float:
            cfg = WorkerConfig(
                worker_id=name,
                lanes=("llm",),
                backend="noop",
                until_empty=True,
                progress=False,
                outputs=Path(tmp) / name,
                spool=Path(tmp) / f"{name}-spool",
                poll_s=0.05,
            )
            started = time.perf_counter()
            run_worker(db, cfg)
            return time.perf_counter() - started

        first_s = drain("first")
        calls = len(chat.billing)
        with db.engine.connect() as conn:
            ids = conn.execute(sa.select(tasks.c.task_id).where(tasks.c.kind.like("direct_%"))).scalars().all()
            cost = conn.execute(sa.select(sa.func.sum(attempts.c.cost))).scalar() or 0.0
        with db.engine.begin() as conn:
            engine.reset_tasks(conn, list(ids), reason="bench rerun")
        rerun_s = drain("rerun")
        db.dispose()
    shots = report.shots_created
    per100 = 100 / shots
    return {
        "shots": shots,
        "director_tasks": len(ids),
        "calls": calls,
        "tokens_in": sum(b["tokens_in"] for b in chat.billing[:calls]),
        "tokens_out": sum(b["tokens_out"] for b in chat.billing[:calls]),
        "cost": cost,
        "calls_per_100_shots": calls * per100,
        "tokens_per_100_shots": sum(b["tokens_in"] + b["tokens_out"] for b in chat.billing[:calls]) * per100,
        "cost_per_100_shots": cost * per100,
        "rerun_calls": len(chat.billing) - calls,
        "first_s": first_s,
        "rerun_s": rerun_s,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = {}
    for context in CONTEXTS:
        runs = [one_run(context) for _ in range(args.runs)]
        medians = {f"median_{k}": statistics.median(r[k] for r in runs) for k in runs[0]}
        results[str(context)] = {"runs": runs, **medians}
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "director.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Director pass on the sample book, through the chat stand-in (median of runs)",
        "",
        f"Runs: {args.runs}. Tokens are the stand-in's count (characters / 4); prices are illustrative, "
        f"{PRICE_IN} in and {PRICE_OUT} out per million tokens. Goal: 0 calls on a rerun.",
        "",
        "| context tokens | " + " | ".join(h for h, _, _ in COLUMNS) + " |",
        "|---" * (len(COLUMNS) + 1) + "|",
    ]
    lines += [
        f"| {context} | " + " | ".join(format(r[f"median_{key}"], spec) for _, key, spec in COLUMNS) + " |"
        for context, r in results.items()
    ]
    (out / "director.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
