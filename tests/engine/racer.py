"""A bare claimer process for race tests: claim, hold, complete until the lanes are empty.

    python -m tests.engine.racer URL WORKER_ID LANES BATCH HOLD_S
Prints one line per accepted completion: `done TASK_ID`.
"""

from __future__ import annotations

import sys
import time

from pipeline_kit import engine
from pipeline_kit.db import create


def main(url: str, worker_id: str, lanes: str, batch: int, hold_s: float) -> None:
    db = create(url)
    cache = engine.LaneCache()
    idle = 0
    while idle < 20:
        leases = engine.claim(db, worker_id, lanes.split(","), limit=batch, lease_s=30, cache=cache)
        if not leases:
            idle += 1
            time.sleep(0.05)
            continue
        idle = 0
        time.sleep(hold_s)
        acks = engine.complete_many(
            db,
            [engine.Completion(task_id=lease.task_id, token=lease.token, result={"by": worker_id}) for lease in leases],
            worker_id=worker_id,
        )
        for task_id, ack in acks.items():
            if ack is engine.Ack.ACCEPTED:
                print(f"done {task_id}", flush=True)
    db.dispose()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
