"""The layer table in docs/architecture.md is the rule the imports follow: every module of the
package belongs to a row, imports only what its row allows (or a leaf any layer may import), and
no two units import each other, directly or round a longer loop.

Imports are read with `ast` (function-level ones included: a late import is still a dependency;
so are modules loaded by name, `importlib.import_module("pipeline_kit.x")` and registry entries
`"pipeline_kit.x:factory"`), so the test needs neither the database nor the optional libraries the
modules use. The tables the engine owns are queried only where the sentence under the table says.
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


def _section() -> str:
    return DOC.read_text(encoding="utf-8").split("## Layers", 1)[1].split("\n## ", 1)[0]


@cache
def table() -> tuple[dict[str, frozenset[str] | None], frozenset[str]]:
    """The layer table's rows as unit -> the units it may import (None: everything), and the
    leaves any layer may import (the sentence above the table)."""
    section = _section()
    leaves = frozenset(re.findall(r"`(\w+)`", re.search(r"^Any layer may import (.*)$", section, re.M).group(1)))
    rows: dict[str, frozenset[str] | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        allowed = None if cells[2].startswith("everything") else frozenset(re.findall(r"`([\w.]+)`", cells[2]))
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


@cache
def owners() -> tuple[frozenset[str], frozenset[str]]:
    """The tables the engine owns and the units that may query them (the sentence under the table)."""
    sentence = re.search(r"^The engine owns the tables (.*?): (.*)$", _section(), re.M)
    assert sentence, "docs/architecture.md: the sentence naming the tables the engine owns is missing"
    tables = frozenset(re.findall(r"`(\w+)`", sentence.group(1)))
    units = frozenset(re.findall(r"`([\w.]+)`", sentence.group(2))) & set(table()[0])
    return tables, units


def _named_modules(tree: ast.AST) -> set[str]:
    """Modules loaded by name: `import_module("pipeline_kit.x")` (an f-string up to its first
    field names its package) and `"pipeline_kit.x:factory"` registry entries."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                found.add(str(arg.values[0].value).rsplit(".", 1)[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name, colon, attr = node.value.partition(":")
            if colon and attr.isidentifier() and name.startswith("pipeline_kit."):
                found.add(name)
    return found


def imports(module: str, path: Path) -> set[str]:
    """The package's modules `module` imports (a name imported from a package that is one of its
    submodules counts as that submodule), and those it loads by name."""
    known = modules()
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = _named_modules(tree)
    for node in ast.walk(tree):
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
    tops = {
        p.name.removesuffix(".py") for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
    } - {"__init__"}
    assert tops - set(rows) == set(), "add these to the layer table in docs/architecture.md"
    assert "pipeline_kit" in rows  # the package's own __init__


def test_every_package_is_a_package() -> None:
    """Every folder of Python modules has an __init__.py (a namespace package hides from tools)."""
    missing = [
        str(d.relative_to(ROOT))
        for d in PACKAGE.rglob("*")
        if d.is_dir() and any(d.glob("*.py")) and not (d / "__init__.py").exists()
    ]
    assert missing == []


def test_imports_follow_the_table() -> None:
    """No module imports a unit its row does not allow."""
    rows, leaves = table()
    wrong = [
        how
        for (src, dst), hows in unit_edges().items()
        if rows[src] is not None and dst not in rows[src] and dst not in leaves
        for how in hows
    ]
    assert wrong == []


def test_no_cycle_between_units() -> None:
    """The units' import graph has no loop, so each can be read (and tested) without those above it."""
    graph: dict[str, set[str]] = {}
    for src, dst in unit_edges():
        graph.setdefault(src, set()).add(dst)
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        assert node not in path, "import cycle: " + " -> ".join([*path[path.index(node) :], node])
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


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def owned_sql(source: str, tables: frozenset[str]) -> list[str]:
    """How `source` reaches the owned `tables`: an import of one from the schema, `schema.NAME`,
    `sa.table("NAME")`, or SQL text naming one after FROM, JOIN, UPDATE or INTO."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    words = re.compile(rf"\b(?:FROM|JOIN|UPDATE|INTO)\s+({'|'.join(sorted(tables))})\b", re.I)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("db.schema"):
            found += [f"imports {a.name}" for a in node.names if a.name in tables]
        elif isinstance(node, ast.Attribute) and node.attr in tables and getattr(node.value, "id", "") == "schema":
            found.append(f"schema.{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "table":
            found += [f"table({a.value!r})" for a in node.args if isinstance(a, ast.Constant) and a.value in tables]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found += [f"SQL on {m}" for m in words.findall(node.value)]
    return found


def test_only_the_engine_queries_its_tables() -> None:
    """No module outside the units the layer table names writes SQL on `tasks`, `attempts` or
    `task_deps`: screens, text, the film and the store ask the engine's queries."""
    tables, units = owners()
    assert {"tasks", "attempts", "task_deps"} <= tables and {"db", "engine"} <= units
    wrong = {
        module: how
        for module, path in modules().items()
        if unit_of(module) not in units and (how := owned_sql(path.read_text(encoding="utf-8"), tables))
    }
    assert wrong == {}


def test_the_table_rule_sees_every_way_in() -> None:
    """The checker sees each way a module could reach an owned table (so the rule above can fail)."""
    tables, _ = owners()
    snippets = {
        "from pipeline_kit.db.schema import books, tasks": ["imports tasks"],
        "from pipeline_kit.db import schema\nq = schema.attempts.c.outcome": ["schema.attempts"],
        "import sqlalchemy as sa\nt = sa.table('task_deps')": ["table('task_deps')"],
        "q = 'SELECT COUNT(*) FROM tasks WHERE status = 1'": ["SQL on tasks"],
        "q = 'update attempts set outcome = NULL'": ["SQL on attempts"],
        '"""Reads rows FROM tasks: a docstring, not SQL."""\nq = "SELECT 1 FROM books"': [],
    }
    assert {code: owned_sql(code, tables) for code in snippets} == snippets


def test_modules_loaded_by_name_count_as_imports() -> None:
    """`importlib.import_module` strings and registry entries are imports the table checks."""
    assert "pipeline_kit.db.connect" in imports("pipeline_kit", PACKAGE / "__init__.py")
    assert "pipeline_kit.film" in imports("pipeline_kit.film", PACKAGE / "film" / "__init__.py")
    assert "pipeline_kit.backends.sketch" in imports("pipeline_kit.backends", PACKAGE / "backends" / "__init__.py")


def test_light_imports_load_no_database_layer() -> None:
    """Importing the package, a backend or the film's media modules loads neither the database
    layer nor SQLAlchemy (a backend runs on a PC that may have no database driver at all)."""
    code = (
        "import sys, pipeline_kit, pipeline_kit.backends.assembly, pipeline_kit.backends.sketch, "
        "pipeline_kit.film.cards; "
        "print(sorted(m for m in sys.modules if m.startswith(('pipeline_kit.db', 'sqlalchemy'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert out.stdout.strip() == "[]"
