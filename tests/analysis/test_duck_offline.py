"""DuckDB never reaches for an extension (which would try the network). That analysis never
imports the worker or a backend is the layer table's rule, checked by tests/project/test_layers.py."""

from __future__ import annotations

from pipeline_kit.analysis import duck


def test_duckdb_extensions_off() -> None:
    """The DuckDB connection neither installs nor autoloads extensions."""
    con = duck.connect()
    try:
        settings = dict(
            con.execute(
                "SELECT name, value FROM duckdb_settings() WHERE name IN "
                "('autoinstall_known_extensions', 'autoload_known_extensions')"
            ).fetchall()
        )
    finally:
        con.close()
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
