"""pipeline_kit: AI film production across several PCs, scheduled by one shared task table.

    import pipeline_kit
    db = pipeline_kit.connect()          # --db URL, $PIPELINE_KIT_DB, or sqlite:///data/production.db

Importing the package loads nothing else: `connect` and `Database` load the database layer on
first use, so a backend, a font or an ornament never pulls SQLAlchemy in.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`connect` and `Database`, from the database layer, loaded when first asked for."""
    if name in ("Database", "connect"):
        import importlib

        return getattr(importlib.import_module("pipeline_kit.db.connect"), name)
    raise AttributeError(f"module 'pipeline_kit' has no attribute {name!r}")


__all__ = ["Database", "__version__", "connect"]
