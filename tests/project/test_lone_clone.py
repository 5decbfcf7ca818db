"""The repository stands alone: a copy of its files, away from any sibling folder, runs the tests
that read the corpus."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS_TESTS = ["tests/text/test_chapters.py", "tests/text/test_corpus_split.py"]


def _repository_files() -> list[str]:
    """The files a clone would hold: tracked ones, plus new ones not yet committed (not ignored)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                            cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file()]


def test_a_lone_copy_of_the_repository_runs_the_corpus_tests(tmp_path: Path) -> None:
    """Nothing a test reads lives outside the repository: the corpus tests pass in a copy of its
    files placed in an empty folder, with no `../shared` beside it."""
    clone = tmp_path / "lone" / "pipeline_kit"
    for name in _repository_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    env = {**os.environ, "PYTHONPATH": str(clone), "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORPUS_TESTS],
                         cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "passed" in run.stdout and "skipped" not in run.stdout
