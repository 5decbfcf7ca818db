"""Every committed notebook is clean: no outputs, no papermill traces, kernelspec python3, and at
most one `parameters` cell holding literal assignments only (what papermill can override)."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    names = {p.name for p in NOTEBOOKS}
    assert {"01_new_book.ipynb", "02_storyboard.ipynb", "03_monitor.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_clean(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", "kernelspec must be python3"
    assert "papermill" not in nb.metadata, "executed by papermill: commit the clean notebook"
    params = []
    for index, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags", [])
        assert "papermill" not in cell.metadata, f"cell {index} carries papermill metadata"
        assert "injected-parameters" not in tags, f"cell {index} is papermill's injected parameters"
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} has outputs"
            assert cell.execution_count is None, f"cell {index} has an execution count"
        if "parameters" in tags:
            params.append(cell)
    assert len(params) <= 1, "more than one parameters cell"
    for cell in params:
        for stmt in ast.parse(cell.source).body:
            assert isinstance(stmt, ast.Assign), f"parameters cell: only assignments, got {ast.dump(stmt)[:60]}"
            ast.literal_eval(stmt.value)
