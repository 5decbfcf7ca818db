"""The chaos worker's clock-skew shim really moves the wall clock, and only the wall clock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_skewed_worker_sees_a_shifted_wall_clock_but_real_monotonic_time() -> None:
    """With PIPELINE_KIT_CHAOS_SKEW_S the worker's time.time and datetime.now run that far ahead,
    while time.monotonic (used for the worker's own timers) is untouched."""
    code = (
        "import time, datetime, pipeline_kit.chaos.worker; "
        "print(time.time() - time.monotonic(), datetime.datetime.now().timestamp() - time.monotonic())"
    )

    def offsets(env: dict[str, str]) -> list[float]:
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**env, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [float(x) for x in out.split()]

    plain = offsets({k: v for k, v in os.environ.items() if k != "PIPELINE_KIT_CHAOS_SKEW_S"})
    skewed = offsets({**os.environ, "PIPELINE_KIT_CHAOS_SKEW_S": "7200"})
    assert abs((skewed[0] - plain[0]) - 7200) < 5 and abs((skewed[1] - plain[1]) - 7200) < 5
