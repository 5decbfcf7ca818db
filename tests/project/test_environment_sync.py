"""environment.yml (conda users) must ask for exactly what pyproject.toml asks for."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_matches_pyproject() -> None:
    """Every dependency and extra in pyproject.toml is in environment.yml with the same pin, and
    nothing else is; Python is 3.11 on both."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted.update(extra)
    env = (ROOT / "environment.yml").read_text()
    pip_lines = {m.group(1).strip().strip('"') for m in re.finditer(r"^\s{6}- (.+)$", env, re.M)}
    assert {_name(r): r for r in pip_lines} == {_name(r): r for r in wanted}
    assert "python=3.11" in env and project["requires-python"] == ">=3.11"
