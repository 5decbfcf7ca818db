"""Analysis reads the database only: it never imports the worker or a backend, and DuckDB never
reaches for an extension (which would try the network)."""

from __future__ import annotations

import ast
from pathlib import Path

from pipeline_kit.analysis import duck

PACKAGE = Path(__file__).resolve().parents[2] / "pipeline_kit" / "analysis"


def test_analysis_never_imports_worker_or_backends() -> None:
    """No module under pipeline_kit/analysis imports pipeline_kit.worker or .backends."""
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("pipeline_kit.worker", "pipeline_kit.backends")), path


def test_duckdb_extensions_off() -> None:
    """The DuckDB connection neither installs nor autoloads extensions."""
    con = duck.connect()
    try:
        settings = dict(con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
    finally:
        con.close()
    assert settings == {"autoinstall_known_extensions": "false",
                        "autoload_known_extensions": "false"}
