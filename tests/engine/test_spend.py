"""Spend per provider on every database: derived from the attempts ledger (the provider a
backend recorded in the attempt's settings, else the worker's backend), shown by `status`, the
monitor and the report alike."""

from __future__ import annotations

import pytest

from pipeline_kit import engine
from pipeline_kit.analysis import metrics
from pipeline_kit.analysis.load import load
from pipeline_kit.cli import main as cli_main
from pipeline_kit.db import Database
from pipeline_kit.engine import TaskSpec
from pipeline_kit.engine.lease import Completion
from pipeline_kit.engine.spend import provider_spend
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.monitor_view import _spend

EXPECTED = {
    "ark": {"attempts": 2, "cost": 0.75},
    "unknown": {"attempts": 1, "cost": 0.3},
    "comfyui+ark": {"attempts": 1, "cost": 0.2},
    "comfyui": {"attempts": 1, "cost": 0.1},
}


def ledger(db: Database) -> None:
    """Paid attempts of each sort: completed with a recorded provider, failed after paying on a
    worker with one backend, on a worker routing to several, and on a worker never registered;
    plus a free completion, which is no spend."""
    engine.register_worker(db, "pc-ark", lanes=["image"], backend="ark")
    engine.register_worker(db, "pc-mixed", lanes=["image"], backend="comfyui+ark")
    with db.engine.begin() as conn:
        engine.enqueue(
            conn, [TaskSpec(task_id=f"t{i}", kind="first_frame", lane="image", max_attempts=1) for i in range(6)]
        )

    def take(worker: str) -> engine.Lease:
        return engine.claim(db, worker, ["image"], limit=1)[0]

    def done(lease: engine.Lease, cost: float, provider: str) -> None:
        engine.complete(
            db,
            Completion(
                task_id=lease.task_id,
                token=lease.token,
                cost=cost,
                output_path=f"out/{lease.task_id}.png",
                settings={"provider": provider, "seed": 1},
            ),
        )

    def paid_then_failed(lease: engine.Lease, cost: float) -> None:
        engine.record_cost(db, lease.task_id, lease.token, cost)
        engine.fail(db, lease.task_id, lease.token, error="bad_output", retryable=False)

    done(take("pc-ark"), 0.5, "ark")
    paid_then_failed(take("pc-ark"), 0.25)
    done(take("pc-mixed"), 0.1, "comfyui")
    paid_then_failed(take("pc-mixed"), 0.2)
    paid_then_failed(take("ghost"), 0.3)
    done(take("pc-ark"), 0.0, "sketch")


def test_spend_per_provider_in_status_monitor_and_report(
    db: Database, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each paid attempt counts once, for the provider that made the call when its backend said
    so, else for its worker's backend(s), else as unknown; free attempts are not spend. The
    status page, its JSON, the monitor and the report's table agree."""
    ledger(db)
    assert engine.overview(db).spend == EXPECTED
    assert list(engine.overview(db).spend) == ["ark", "unknown", "comfyui+ark", "comfyui"]

    assert cli_main(["--db", db_url, "status"]) == 0
    out = capsys.readouterr().out
    rows = out[out.index("provider") :].splitlines()
    assert rows[1].split() == ["ark", "2", "0.75"] and rows[4].split() == ["comfyui", "1", "0.10"]

    snap = MonitorModel(db).snapshot()
    assert snap.spend == EXPECTED
    assert "comfyui+ark" in _spend(snap) and "0.75" in _spend(snap)

    table = metrics.costs(load(db)).by_provider.set_index("provider")
    paid = table[table["cost"] > 0]
    assert {p: round(float(c), 6) for p, c in paid["cost"].items()} == {p: v["cost"] for p, v in EXPECTED.items()}
    assert float(table.loc["sketch", "cost"]) == 0.0


def test_spend_of_one_book_counts_only_its_attempts(db: Database) -> None:
    """`status BOOK` shows what that book's tasks cost, not the fleet's."""
    ledger(db)
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="b1", kind="video", lane="image", bookcode="bk")])
    lease = engine.claim(db, "pc-ark", ["image"], limit=1)[0]
    engine.record_cost(db, lease.task_id, lease.token, 2.0)
    with db.engine.connect() as conn:
        assert provider_spend(conn, "bk") == {"ark": {"attempts": 1, "cost": 2.0}}
