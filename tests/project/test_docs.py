"""Documentation as a test: every command, flag, task state, worker summary word and
worker-notebook parameter is written down where a user looks (README.md, docs/, bench/README.md),
and the files docs/architecture.md says a change touches add up to the count it states."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from pipeline_kit.cli import build_parser
from pipeline_kit.engine import Outcome, Status
from pipeline_kit.worker import TaskEnd

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _docs() -> str:
    files = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix}{name}"] = sub
                found.update(_commands(sub, f"{prefix}{name} "))
    return found


def test_every_command_and_flag_is_documented() -> None:
    """Each subcommand and each of its long options appears in the docs."""
    docs = _docs()
    missing = []
    for name, sub in _commands(build_parser()).items():
        if not re.search(rf"\b{re.escape(name.split()[-1])}\b", docs):
            missing.append(name)
        for action in sub._actions:
            missing += [
                f"{name} {o}" for o in action.option_strings if o.startswith("--") and o != "--help" and o not in docs
            ]
    assert missing == []


def test_every_state_and_outcome_is_documented() -> None:
    """The status and outcome words analysts query, and the words a worker's summary counts its
    tasks by, are all written down."""
    docs = _docs()
    assert [s.value for s in Status if f"`{s.value}`" not in docs] == []
    assert [o.value for o in Outcome if f"`{o.value}`" not in docs] == []
    assert [e.value for e in TaskEnd if f"`{e.value}`" not in docs] == []


def touches() -> dict[str, tuple[list[str], int]]:
    """docs/architecture.md's "What a change touches" table: change -> (the files it names, the
    count it states)."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("### What a change touches", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2].isdigit():
            files = [f for f in re.findall(r"`([^`]+)`", cells[1]) if "/" in f or f.endswith(".md")]
            rows[cells[0]] = (files, int(cells[2]))
    return rows


def test_each_change_counts_the_files_it_names() -> None:
    """Each row of "What a change touches" states as many files as it names, no file twice, and
    covers a kind, a backend, an SQL statement and a chart."""
    rows = touches()
    assert set(rows) == {"a new task kind", "a new backend", "a new SQL statement", "a new report chart"}
    assert {change: (len(files), len(set(files))) for change, (files, _) in rows.items()} == {
        change: (count, count) for change, (_, count) in rows.items()
    }


def test_every_worker_notebook_parameter_is_documented() -> None:
    """The worker notebook's parameters are listed in the README."""
    nb = json.loads((ROOT / "notebooks" / "worker.ipynb").read_text())
    (cell,) = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    names = re.findall(r"^(\w+) =", "".join(cell["source"]), re.M)
    readme = (ROOT / "README.md").read_text()
    assert names and [n for n in names if f"`{n}`" not in readme] == []
