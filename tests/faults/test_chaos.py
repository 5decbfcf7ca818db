"""The chaos run on each database: random kills, stops, restarts and cut connections.

Invariant protected (design invariants 2-4, 6, 7 under faults): when the run ends no task is
lost, none completed twice, every completion is by the task's current lease, no attempt is left
open, and every output matches its checksum; a killed worker's tasks come back within
lease + watchdog interval (the median; single recoveries may also wait out a database restart).
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import pytest

from pipeline_kit.chaos.profiles import PROFILES
from pipeline_kit.chaos.runner import Settings, run_chaos

RESTART_SLACK_S = 12.0  # a worker's reconnect backoff (1 + 2 + 5 s) around a database restart


@pytest.mark.restarts_servers
def test_chaos_ci_profile(db_url: str, tmp_path: Path) -> None:
    """The CI profile (1,000 tasks, 4 workers as a worker account on servers, 30 kills, 4 stops past
    the lease, a server restart, cut and frozen connections, a full output disk, one worker's clock
    two hours ahead) keeps every invariant, within 5 minutes a database."""
    server = not db_url.startswith("sqlite")  # on a server the workers log in as a worker account
    report = run_chaos(
        Settings(profile=PROFILES["ci"], database=db_url, seed=7, workdir=tmp_path, worker_account=server)
    )
    print(report.render())
    assert report.account == ("pk_chaos_7" if server else None)
    assert report.violations == ()
    assert report.completed == report.tasks
    assert report.faults["kill"] == PROFILES["ci"].kills and report.seconds < 300
    assert report.faults["clock_skew"] == 1
    if not db_url.startswith("sqlite"):
        assert report.faults["restart"] == 1 and report.faults["cut"] >= 1
    assert report.recoveries_s, "some killed worker must have held a task"
    assert statistics.median(report.recoveries_s) <= report.recovery_bound_s, report.recoveries_s
    assert max(report.recoveries_s) <= report.recovery_bound_s + RESTART_SLACK_S, report.recoveries_s


@pytest.mark.soak
@pytest.mark.restarts_servers
@pytest.mark.skipif(
    os.environ.get("PIPELINE_KIT_SOAK") != "1", reason="set PIPELINE_KIT_SOAK=1 for the release profile"
)
def test_chaos_release_profile(db_url: str, tmp_path: Path) -> None:
    """The release profile (10,000 tasks, 8 workers, 200 kills, 3 restarts) keeps every invariant."""
    report = run_chaos(Settings(profile=PROFILES["release"], database=db_url, seed=11, workdir=tmp_path))
    print(report.render())
    assert report.violations == ()
    assert report.completed == report.tasks
