"""The code keeps the lint rules pyproject.toml sets (pycodestyle with its line length, and
pyflakes): a line over the configured length or an unused import fails the suite, not a review."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ruff(*args: str, cwd: Path = ROOT, verb: str = "check") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", verb, "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ruff_finds_nothing() -> None:
    """`ruff check` with the project's settings reports nothing in the package, tests or benchmarks."""
    done = ruff("pipeline_kit", "tests", "bench")
    assert done.returncode == 0, done.stdout + done.stderr


def test_code_is_formatted() -> None:
    """Every file is as `ruff format` writes it, so a diff shows what changed, never layout."""
    done = ruff("--check", "pipeline_kit", "tests", "bench", verb="format")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_format_check_fails_on_unformatted_code(tmp_path: Path) -> None:
    """The format check is not decoration: a file laid out by hand is reported."""
    messy = tmp_path / "messy.py"
    messy.write_text("x = {  'a':1 }\n")
    config = str(ROOT / "pyproject.toml")
    found = ruff("--config", config, "--check", str(messy), cwd=tmp_path, verb="format")
    assert found.returncode == 1 and "messy.py" in found.stdout + found.stderr


def test_the_line_length_rule_is_on(tmp_path: Path) -> None:
    """The configured line length is enforced, not decoration: a line at the limit passes, one
    character more is reported as E501."""
    limit = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["line-length"]
    config = str(ROOT / "pyproject.toml")
    at_limit, over = tmp_path / "at_limit.py", tmp_path / "over.py"
    at_limit.write_text('X = "' + "a" * (limit - 6) + '"\n')
    over.write_text('X = "' + "a" * (limit - 5) + '"\n')
    assert len(at_limit.read_text().rstrip("\n")) == limit
    assert ruff("--config", config, str(at_limit), cwd=tmp_path).returncode == 0
    found = ruff("--config", config, "--output-format", "concise", str(over), cwd=tmp_path)
    assert found.returncode == 1 and "E501" in found.stdout, found.stdout
