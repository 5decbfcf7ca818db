"""The database layer: schema, connection set-up, the database clock and per-dialect claim SQL.

It knows nothing of the engine, the worker or anything above it.
"""

from pipeline_kit.db.connect import Database, connect, create, resolve_url

__all__ = ["Database", "connect", "create", "resolve_url"]
