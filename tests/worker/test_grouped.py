"""The completions of a batch's quick tasks are sent together, never behind a slow task.

Invariants: a quick task's completion waits only for other quick tasks (it is sent before a task
of a kind not yet quick on this worker runs, with a slow task, with a paid one, or at the
batch's end), every task's end is counted once, after its completion was sent; and a group the
database cannot take is spooled one completion at a time, each revealed in a folder store once
the spool is submitted.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.engine import Ack, Completion, TaskSpec
from pipeline_kit.errors import DatabaseUnavailable
from pipeline_kit.store.folder import STAGED, FolderStore
from pipeline_kit.worker import grouped
from pipeline_kit.worker.grouped import QUICK_S, Grouped
from pipeline_kit.worker.reconnect import Reconnect, Reconnecting
from pipeline_kit.worker.spool import Spool
from pipeline_kit.worker.task_end import TaskEnd
from pipeline_kit.worker.task_run import Made, send, spooled_answered

SLOW_S = 3 * QUICK_S


class _Clock:
    """The group's clock: a run moves it on by the time it takes."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Run:
    """A task run that takes `seconds` to make its output and logs when it runs."""

    def __init__(
        self, log: list[Any], clock: _Clock, task_id: str, kind: str, seconds: float = 0.0, *, paid: bool = False
    ) -> None:
        self.lease = SimpleNamespace(task_id=task_id, kind=kind)
        self._log, self._clock, self._seconds, self._paid = log, clock, seconds, paid

    def make(self) -> Any:
        self._log.append(("run", self.lease.task_id))
        self._clock.now += self._seconds
        if self.lease.task_id.startswith("fail"):
            return TaskEnd.FAILED
        return SimpleNamespace(lease=self.lease, paid=self._paid)


def test_quick_completions_wait_only_for_quick_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[Any] = []

    def sent(_shared: object, made: list[Any]) -> list[TaskEnd]:
        if made:
            log.append(("send", [m.lease.task_id for m in made]))
        return [TaskEnd.COMPLETED] * len(made)

    monkeypatch.setattr(grouped, "send", sent)
    clock = _Clock()
    group = Grouped(SimpleNamespace(cfg=SimpleNamespace(quick_s=QUICK_S)), clock)  # type: ignore[arg-type]
    runs = [
        _Run(log, clock, "n1", "noop"),
        _Run(log, clock, "n2", "noop"),
        _Run(log, clock, "fail1", "noop"),
        _Run(log, clock, "s1", "video", SLOW_S),  # a kind never quick here: the group goes before it runs
        _Run(log, clock, "n3", "noop"),
        _Run(log, clock, "p1", "noop", paid=True),  # paid: sent at once, with the group
        _Run(log, clock, "n4", "noop"),
        _Run(log, clock, "n5", "noop", SLOW_S),  # a quick kind turned slow: sent at once, with the group
        _Run(log, clock, "n6", "noop"),  # no longer quick: nothing held behind it
    ]
    ends = [end for run in runs for end in group.run(run)]  # type: ignore[arg-type]
    ends += group.send()
    assert log == [
        ("run", "n1"),
        ("run", "n2"),
        ("run", "fail1"),
        ("send", ["n1", "n2"]),
        ("run", "s1"),
        ("send", ["s1"]),
        ("run", "n3"),
        ("run", "p1"),
        ("send", ["n3", "p1"]),
        ("run", "n4"),
        ("run", "n5"),
        ("send", ["n4", "n5"]),
        ("run", "n6"),
        ("send", ["n6"]),
    ]
    assert sorted(ends) == sorted([TaskEnd.FAILED] + [TaskEnd.COMPLETED] * 8)  # each end counted once


def test_a_group_the_database_cannot_take_is_spooled_one_by_one(sqlite_db: Database, tmp_path: Path) -> None:
    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=t, kind="noop", lane="default") for t in ("a", "b")])
    leases = engine.claim(sqlite_db, "w", ["default"], limit=2)
    (tmp_path / "store").mkdir()
    store = FolderStore(tmp_path / "store")
    made = []
    for lease in leases:
        out = tmp_path / f"{lease.task_id}.txt"
        out.write_text(f"made {lease.task_id}")
        stored = store.publish(f"outputs/{lease.task_id}.txt", out, {}, lease=(lease.task_id, lease.token))
        result = {"sha256": stored.sha256, "bytes": stored.size, "staged": stored.staged}
        completion = Completion(task_id=lease.task_id, token=lease.token, output_path=stored.output_path, result=result)
        made.append(Made(lease=lease, completion=completion, stored=stored, paid=False))

    class Away:
        def complete_many(self, _completions: object) -> dict[str, Ack]:
            raise DatabaseUnavailable("database away for 900 s during complete; giving up")

    spool = Spool(tmp_path / "spool", "w")
    retry = Reconnecting(Reconnect(schedule=(0.01,)), threading.Event(), lambda why: None)
    shared = SimpleNamespace(engine=Away(), spool=spool, store=store, retry=retry, heartbeat=SimpleNamespace(drop=len))
    assert send(shared, made) == [TaskEnd.SPOOLED, TaskEnd.SPOOLED]  # type: ignore[arg-type]
    assert len(spool.pending()) == 2
    assert not store.locate("outputs/a.txt").exists()  # not revealed: nothing accepted it yet
    answered = functools.partial(spooled_answered, shared)
    assert spool.flush(sqlite_db, "w", answered) == {"a": Ack.ACCEPTED, "b": Ack.ACCEPTED}
    for task_id in ("a", "b"):
        assert store.locate(f"outputs/{task_id}.txt").read_text() == f"made {task_id}"
    assert not [p for p in (tmp_path / "store" / "outputs").iterdir() if STAGED in p.name]
