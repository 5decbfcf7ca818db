"""The counterfactual replay on a log whose static and dynamic makespans are worked out by hand.

Log (one lane and kind, every completion 600 s, so both paces are 1.0 and every task's work
is 600 s): pc-a completes t1, t3, t4, t5 back to back; pc-b fails t2 after 1200 s, then
completes t2 and t6. Tapes: pc-a [ok, ok, ok, ok]; pc-b [fail 1200 s, ok, ok], repeated.
Static split (t1-t3 to pc-a, t4-t6 to pc-b): pc-a ends at 1800 s; pc-b fails t4 (1200), does it
(1800), t5 (2400), fails t6 again as its tape repeats (3600) and does it (4200): makespan 4200.
Dynamic: pc-b's failure at 1200 s hands t2 back, pc-a takes it at 1200 while pc-b does t4;
everything is done at 2400 s, the real run's own makespan.
"""

from __future__ import annotations

from pipeline_kit.analysis.load import load
from pipeline_kit.analysis.replay import replay
from pipeline_kit.db import Database

from .conftest import insert_log

TASKS = [(f"t{i}", "bk", f"s{i}", "frame", "image", "completed", 40) for i in range(1, 7)]
ATTEMPTS = [
    ("t1", 1, "pc-a", 0, 10, "completed", None, 0.0),
    ("t2", 1, "pc-b", 0, 20, "retried", "timeout", 0.0),
    ("t2", 2, "pc-b", 20, 30, "completed", None, 0.0),
    ("t3", 1, "pc-a", 10, 20, "completed", None, 0.0),
    ("t4", 1, "pc-a", 20, 30, "completed", None, 0.0),
    ("t5", 1, "pc-a", 30, 40, "completed", None, 0.0),
    ("t6", 1, "pc-b", 30, 40, "completed", None, 0.0),
]


def test_static_split_waits_on_the_failing_pc(sqlite_db: Database) -> None:
    """Replayed from the same log, the static split finishes later than dynamic claiming
    (4200 s against 2400 s) because pc-b's failures hold up its own block."""
    insert_log(sqlite_db, TASKS, ATTEMPTS, {}, ("pc-a", "pc-b"))
    got = replay(load(sqlite_db))
    assert got is not None
    assert list(got.machines["pace"]) == [1.0, 1.0]
    assert got.static.makespan == 4200
    assert got.dynamic.makespan == 2400
    assert got.observed_makespan_s == 2400
    assert got.static.completed() == {"pc-a": 3, "pc-b": 3}
    assert got.dynamic.completed() == {"pc-a": 4, "pc-b": 2}
    assert list(got.makespans()["run"]) == ["observed", "dynamic", "static"]


def test_every_task_completes_once_in_both(sqlite_db: Database) -> None:
    """Each replayed task is completed exactly once under each strategy."""
    insert_log(sqlite_db, TASKS, ATTEMPTS, {}, ("pc-a", "pc-b"))
    got = replay(load(sqlite_db))
    assert got is not None
    for sched in (got.static, got.dynamic):
        done = sched.gantt[sched.gantt["outcome"] == "completed"]
        assert sorted(done["task"]) == list(range(6))


def test_no_finished_attempt_no_replay(sqlite_db: Database) -> None:
    """With nothing finished there is nothing to replay: None, not an error."""
    assert replay(load(sqlite_db)) is None
