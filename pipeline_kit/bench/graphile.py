"""graphile-worker's result lines as libs.jsonl run records, so its figures are read like every peer's.

../shared/bench-peers/graphile/bench.sh (read-only, called by bench/peers.sh, never copied) prints one
line per run, e.g. `graphile-worker 0.18.0 run=1 procs=2 conc=24 mode=batched: 14321 jobs/s`.
`python -m pipeline_kit.bench.graphile JOBS` turns those lines (stdin) into the JSON lines that
lib_bench.py writes for the Python peers (stdout); a line that is not one exits 2.
"""

from __future__ import annotations

import json
import platform
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pipeline_kit.errors import BadInput

LINE = re.compile(
    r"(?P<lib>graphile-worker) (?P<version>\S+) run=(?P<run>\d+) procs=(?P<procs>\d+) conc=(?P<conc>\d+) "
    r"mode=(?P<mode>\w+): (?P<rate>\d+(?:\.\d+)?) jobs/s"
)


def record(line: str, jobs: int, at: datetime, host: str) -> dict[str, Any]:
    """One run record with lib_bench.py's keys, from one bench.sh line; BadInput if it is not one.

    bench.sh times the drain until graphile-worker's job table is empty (it deletes finished jobs and
    keeps failed ones), so none is missing; it does not count duplicate executions: `duplicates` is null."""
    found = LINE.fullmatch(line.strip())
    if found is None:
        raise BadInput(f"not a graphile-worker bench.sh result line: {line.strip()[:120]!r}")
    return {
        "lib": found["lib"],
        "version": found["version"],
        "mode": "throughput",
        "procs": int(found["procs"]),
        "conc": int(found["conc"]),
        "jobs": jobs,
        "run": int(found["run"]),
        "status": "ok",
        "jobs_per_s": float(found["rate"]),
        "duplicates": None,
        "missing": 0,
        "config": f"{found['mode']}, concurrency {found['conc']}",
        "ts": at.isoformat(timespec="seconds"),
        "host": host,
    }


def main(argv: Sequence[str]) -> int:
    """stdin lines to stdout JSON lines, stamped with the time each line arrives (bench.sh prints a run as it ends)."""
    try:
        if len(argv) != 1 or not argv[0].isdigit() or int(argv[0]) < 1:
            raise BadInput("usage: python -m pipeline_kit.bench.graphile JOBS  (JOBS: the jobs each run drained)")
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(record(line, int(argv[0]), datetime.now(), platform.node())), flush=True)
    except BadInput as exc:
        print(f"pipeline_kit.bench.graphile: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
