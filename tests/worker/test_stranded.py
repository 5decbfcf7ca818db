"""A worker `--until-empty` whose work waits on a lane no worker serves stops and says which lane
to serve, instead of waiting forever (a director's llm lane nobody runs held every frame); while
a live worker serves that lane, it waits on.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.engine import Status, TaskSpec
from pipeline_kit.engine.queries import tasks_by_id
from pipeline_kit.worker import runtime
from pipeline_kit.worker.gateway import EngineGateway
from pipeline_kit.worker.runtime import Worker, WorkerConfig


@pytest.fixture
def held_frame(db: Database) -> Database:
    """A frame (image lane) that waits on a director task in the llm lane."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="direct", kind="noop", lane="llm"),
                TaskSpec(task_id="frame", kind="noop", lane="image", depends_on=["direct"]),
            ],
        )
    return db


def _worker(db: Database, tmp_path: Path, **extra: object) -> Worker:
    cfg = WorkerConfig(
        worker_id="pc1",
        backend="noop",
        lanes=("image",),
        until_empty=True,
        spool=tmp_path / "spool",
        progress=False,
        poll_s=0.05,
        **extra,  # type: ignore[arg-type]
    )
    return Worker(db, cfg)


def test_work_held_by_a_lane_nobody_serves_stops_and_names_it(
    held_frame: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "STRANDED_AFTER_S", 0.3)
    monkeypatch.setattr(runtime, "IDLE_CHECK_S", 0.05)
    summary = _worker(held_frame, tmp_path, max_minutes=0.2).run()  # bounded: waiting forever was the bug
    assert summary.stopped_by == "what is left waits on lanes no worker serves"
    assert summary.waiting == {"llm": 1}
    assert "pipeline-kit work --lanes llm" in summary.line()
    with held_frame.engine.connect() as conn:  # nothing was touched
        assert [r.status for r in tasks_by_id(conn, ["frame", "direct"])] == [Status.PENDING] * 2


def test_a_live_worker_serving_that_lane_keeps_it_waiting(
    held_frame: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another PC serves llm (registered, seen just now): its director task will come, so the
    worker waits on until its own limit."""
    monkeypatch.setattr(runtime, "STRANDED_AFTER_S", 0.3)
    monkeypatch.setattr(runtime, "IDLE_CHECK_S", 0.05)
    engine.register_worker(held_frame, "pc2", lanes=["llm"], lease_s=120)
    summary = _worker(held_frame, tmp_path, max_minutes=0.03).run()
    assert summary.stopped_by == "max-minutes"
    assert engine.unserved_lanes(held_frame, ["image"]) == {}


def test_status_names_a_lane_the_running_fleet_leaves_out(held_frame: Database) -> None:
    """`status` says which lane holds pending work no running worker serves, and how to serve
    it; once a worker serving it runs, the line is gone."""
    engine.register_worker(held_frame, "pc1", lanes=["image", "video"], lease_s=120)
    assert engine.overview(held_frame).unserved == [
        "lane llm: 1 task pending, and no running worker serves it: start one with `pipeline-kit work --lanes llm`"
    ]
    engine.register_worker(held_frame, "pc2", lanes=["llm"], lease_s=120)
    assert engine.overview(held_frame).unserved == []


def test_each_idle_look_counts_the_open_work_once(
    held_frame: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each pass that claims nothing reads the open work once, the look for stranded lanes
    included (it counted it a second time), and stops as before."""
    monkeypatch.setattr(runtime, "STRANDED_AFTER_S", 0.2)
    monkeypatch.setattr(runtime, "IDLE_CHECK_S", 0.0)
    calls: Counter[str] = Counter()
    for name in ("claim", "open_work", "unserved_lanes"):
        real = getattr(EngineGateway, name)

        def counted(self: EngineGateway, *args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            calls[_name] += 1
            return _real(self, *args, **kw)

        monkeypatch.setattr(EngineGateway, name, counted)
    summary = _worker(held_frame, tmp_path, max_minutes=0.2).run()
    assert summary.stopped_by == "what is left waits on lanes no worker serves"
    assert calls["unserved_lanes"] >= 1  # the stranded lanes were looked for
    assert calls["open_work"] == calls["claim"], calls  # every claim came back empty
