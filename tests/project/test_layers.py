"""The layer table in docs/architecture.md is the rule the imports follow: every module of the
package belongs to a row, imports only what its row allows (or a leaf any layer may import), and
no two units import each other, directly or round a longer loop.

Imports are read with `ast` (function-level ones included: a late import is still a dependency),
so the test needs neither the database nor the optional libraries the modules use.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pipeline_kit"
DOC = ROOT / "docs" / "architecture.md"


def _unit_name(path: str) -> str:
    """`pipeline_kit/film/status.py` -> `film.status`, `pipeline_kit/db/` -> `db`, the package's own
    `__init__.py` -> `pipeline_kit`."""
    inner = path.strip("/").removeprefix("pipeline_kit").strip("/").removesuffix(".py").removesuffix("__init__")
    return inner.strip("/").replace("/", ".") or "pipeline_kit"


@cache
def table() -> tuple[dict[str, frozenset[str] | None], frozenset[str]]:
    """The layer table's rows as unit -> the units it may import (None: everything), and the
    leaves any layer may import (the sentence above the table)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    leaves = frozenset(re.findall(r"`(\w+)`", re.search(r"^Any layer may import (.*)$", section, re.M).group(1)))
    rows: dict[str, frozenset[str] | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        allowed = (None if cells[2].startswith("everything")
                   else frozenset(re.findall(r"`([\w.]+)`", cells[2])))
        for path in re.findall(r"`(pipeline_kit[\w/.]*)`", cells[0]):
            rows[_unit_name(path)] = allowed
    return rows, leaves


def unit_of(module: str) -> str:
    """The row a dotted module (`pipeline_kit.film.status`) belongs to: its longest listed prefix."""
    parts = module.split(".")[1:]
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in table()[0]:
            return ".".join(parts[:k])
    return "pipeline_kit"


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(module: str, path: Path) -> set[str]:
    """The package's modules `module` imports (a name imported from a package that is one of its
    submodules counts as that submodule)."""
    known = modules()
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m == "pipeline_kit" or m.startswith("pipeline_kit.")}


@cache
def unit_edges() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> the modules that make that import."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, path in modules().items():
        for target in imports(module, path):
            pair = (unit_of(module), unit_of(target))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{module} -> {target}")
    return edges


def test_every_module_has_a_row() -> None:
    """Each top-level package and module of pipeline_kit is named in the layer table."""
    rows, _ = table()
    tops = {p.name.removesuffix(".py") for p in PACKAGE.iterdir()
            if p.suffix == ".py" or (p / "__init__.py").exists()} - {"__init__"}
    assert tops - set(rows) == set(), "add these to the layer table in docs/architecture.md"
    assert "pipeline_kit" in rows  # the package's own __init__


def test_every_package_is_a_package() -> None:
    """Every folder of Python modules has an __init__.py (a namespace package hides from tools)."""
    missing = [str(d.relative_to(ROOT)) for d in PACKAGE.rglob("*") if d.is_dir()
               and any(d.glob("*.py")) and not (d / "__init__.py").exists()]
    assert missing == []


def test_imports_follow_the_table() -> None:
    """No module imports a unit its row does not allow."""
    rows, leaves = table()
    wrong = [how for (src, dst), hows in unit_edges().items()
             if rows[src] is not None and dst not in rows[src] and dst not in leaves for how in hows]
    assert wrong == []


def test_no_cycle_between_units() -> None:
    """The units' import graph has no loop, so each can be read (and tested) without those above it."""
    graph: dict[str, set[str]] = {}
    for src, dst in unit_edges():
        graph.setdefault(src, set()).add(dst)
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        assert node not in path, "import cycle: " + " -> ".join([*path[path.index(node):], node])
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*path, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])


def test_the_rule_fails_on_a_bad_import() -> None:
    """The checker itself sees a forbidden import: film importing a backend is against the table."""
    rows, leaves = table()
    assert "backends" not in (rows["film"] or ()) and "backends" not in leaves
    assert rows["db"] is not None and "engine" not in rows["db"]


def test_light_imports_load_no_database_layer() -> None:
    """Importing the package, a backend or the film's media modules loads neither the database
    layer nor SQLAlchemy (a backend runs on a PC that may have no database driver at all)."""
    code = ("import sys, pipeline_kit, pipeline_kit.backends.assembly, pipeline_kit.backends.sketch, "
            "pipeline_kit.film.cards; "
            "print(sorted(m for m in sys.modules if m.startswith(('pipeline_kit.db', 'sqlalchemy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert out.stdout.strip() == "[]"
