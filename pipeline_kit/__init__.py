"""pipeline_kit: AI film production across several PCs, scheduled by one shared task table.

    import pipeline_kit
    db = pipeline_kit.connect()          # --db URL, $PIPELINE_KIT_DB, or sqlite:///data/production.db

Importing the package loads nothing else: `connect` and `Database` load the database layer on
first use, so a backend, a font or an ornament never pulls SQLAlchemy in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline_kit.db.connect import Database

__version__ = "0.1.0"


def connect(url: str | None = None) -> Database:
    """Open the database at `url` (else $PIPELINE_KIT_DB, else sqlite:///data/production.db) as
    every command but `init` does: a SQLite file that is not there, or a database without this
    version's schema, is refused with NotInitialised (run `pipeline-kit init`, or
    `pipeline_kit.engine.init()`), and nothing is created."""
    from pipeline_kit.db.connect import connect as open_database
    from pipeline_kit.db.migrate import require_schema

    db = open_database(url, existing=True)
    try:
        require_schema(db)
    except Exception:
        db.dispose()
        raise
    return db


def __getattr__(name: str) -> Any:
    """`Database`, from the database layer, loaded when first asked for."""
    if name == "Database":
        import importlib

        return importlib.import_module("pipeline_kit.db.connect").Database
    raise AttributeError(f"module 'pipeline_kit' has no attribute {name!r}")


__all__ = ["Database", "__version__", "connect"]
