"""The repository stands alone: a copy of its files, away from any sibling folder, runs the text
suite (the tests that read the corpus among them)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# On SQLite only: the server runs of the same tests would prove nothing more about the files.
TEXT_SUITE = ["tests/text", "-k", "not postgresql and not mariadb"]


def _repository_files() -> list[str]:
    """The files a clone would hold: tracked ones, plus new ones not yet committed (not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file()]


@pytest.mark.db  # it makes and runs databases of its own
def test_a_lone_copy_of_the_repository_runs_the_text_suite(tmp_path: Path) -> None:
    """Nothing a test reads lives outside the repository: the text suite passes in a copy of its
    files placed in an empty folder, with nothing beside it."""
    clone = tmp_path / "lone" / "pipeline_kit"
    for name in _repository_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    env = {**os.environ, "PYTHONPATH": str(clone), "MPLBACKEND": "Agg"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TEXT_SUITE],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "passed" in run.stdout and "skipped" not in run.stdout


def test_no_test_reaches_outside_the_repository() -> None:
    """No test climbs above the repository from its own file (`Path(__file__).parents[N]` with N
    at or past the repository root's level), the way the corpus used to be read."""
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        root_level = len(path.relative_to(ROOT).parts) - 1  # parents[root_level] is ROOT
        climbs = [int(n) for n in re.findall(r"parents\[(\d+)\]", path.read_text(encoding="utf-8"))]
        if any(n > root_level for n in climbs):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
