"""Open the database a screen works on: always from $PIPELINE_KIT_DB, never from a parameter.

A notebook's kernel runs in notebooks/, so the CLI's relative default (data/production.db)
would silently open a second, empty database there; the screens insist on the variable instead,
and on a schema `pipeline-kit init` made.
"""

from __future__ import annotations

import os

from pipeline_kit.db.connect import ENV_VAR, Database, connect
from pipeline_kit.db.migrate import require_schema
from pipeline_kit.errors import BadInput


def open_database() -> Database:
    """Connect to $PIPELINE_KIT_DB and check its schema; a clear error when it is not set."""
    if not os.environ.get(ENV_VAR):
        raise BadInput(f"set {ENV_VAR} to the database URL before starting Jupyter, e.g. "
                       f"export {ENV_VAR}=sqlite:///$PWD/data/production.db")
    db = connect()
    require_schema(db)
    return db
