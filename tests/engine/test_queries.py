"""The engine's query rows are filled straight from their result rows (no __init__): the columns
each query selects must be exactly the row's fields, or a field would be missing at first use."""

from __future__ import annotations

from dataclasses import fields

from pipeline_kit.engine import queries


def test_selected_columns_are_the_rows_fields() -> None:
    """TaskState and TaskOutput read exactly the columns their queries select."""
    assert [c.name for c in queries._STATE] == [f.name for f in fields(queries.TaskState)]
    assert [c.name for c in queries._OUTPUT] == [f.name for f in fields(queries.TaskOutput)]
