"""pipeline_kit: AI film production across several PCs, scheduled by one shared task table.

    import pipeline_kit
    db = pipeline_kit.connect()          # --db URL, $PIPELINE_KIT_DB, or sqlite:///data/production.db
"""

from __future__ import annotations

__version__ = "0.1.0"

from pipeline_kit.db.connect import Database, connect  # noqa: E402

__all__ = ["Database", "__version__", "connect"]
