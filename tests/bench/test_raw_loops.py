"""The raw ceilings on each real database: the raw loop does the engine's own database work
(one attempt row opened and closed per task), the minimal loop leaves no history, and both
complete every task exactly once."""

from __future__ import annotations

import pytest

from pipeline_kit.bench.raw import MinimalWorker, RawWorker
from pipeline_kit.bench.workload import check, enqueue_tasks
from pipeline_kit.db import create

TASKS = 23  # not a multiple of the batch: the last claim takes fewer rows


@pytest.mark.parametrize("kind", [RawWorker, MinimalWorker])
def test_raw_loops_complete_each_task_once(db_url: str, kind: type[RawWorker]) -> None:
    db = create(db_url)
    try:
        enqueue_tasks(db, TASKS)
        worker = kind(db_url, 10)
        worker.prepare()
        try:
            done = worker.run()
        finally:
            worker.close()
        found = check(db, done)
    finally:
        db.dispose()
    assert done == TASKS
    assert found.exactly_once(expect_attempt_rows=kind.history), found
    assert found.attempt_rows == (TASKS if kind.history else 0)
