"""The database layer: schema, connection set-up, the database clock, and the hot path's per-dialect
claim and completion SQL with the driver-level runner for it.

It knows nothing of the engine, the worker or anything above it.
"""

from pipeline_kit.db.connect import Database, connect, create, resolve_url

__all__ = ["Database", "connect", "create", "resolve_url"]
