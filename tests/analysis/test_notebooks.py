"""Both analysis notebooks run under papermill, are parameterised by literals and carry no
outputs in the repository."""

from __future__ import annotations

import os
import ast
from pathlib import Path

import nbformat
import papermill
import pytest

from pipeline_kit.db import Database

from .conftest import insert_log

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", ["postmortem.ipynb", "planning.ipynb"])
def test_committed_notebook_is_clean(name: str) -> None:
    """Kernelspec python3, exactly one `parameters` cell of literal assignments, no outputs."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    for stmt in ast.parse(params[0].source).body:
        assert isinstance(stmt, ast.Assign)
        ast.literal_eval(stmt.value)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def _run(
    name: str, out: Path, params: dict, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> nbformat.NotebookNode:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    papermill.execute_notebook(
        str(NOTEBOOKS / name),
        str(out),
        parameters=params,
        kernel_name="python3",
        cwd=str(out.parent),
        progress_bar=False,
    )
    return nbformat.read(out, as_version=4)


def _images(nb: nbformat.NotebookNode) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def test_postmortem_notebook_runs(sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The post-mortem notebook reads the URL from PIPELINE_KIT_DB and shows tables and charts."""
    insert_log(sqlite_db)
    url = sqlite_db.engine.url.render_as_string(hide_password=False)
    nb = _run(
        "postmortem.ipynb",
        tmp_path / "pm.ipynb",
        {"bookcode": "bk1"},
        {"PIPELINE_KIT_DB": url, "MPLBACKEND": "Agg"},
        monkeypatch,
    )
    assert _images(nb) >= 8
    assert url not in str(nb.metadata.get("papermill", {}).get("parameters", {}))


@pytest.mark.db
def test_planning_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planning notebook drives the simulator with small inputs and draws the Gantt chart."""
    nb = _run(
        "planning.ipynb",
        tmp_path / "plan.ipynb",
        {"tasks": 60, "machines": 3, "fail_streak": "A:2"},
        {"MPLBACKEND": "Agg", "PIPELINE_KIT_DB": os.devnull},
        monkeypatch,
    )
    assert _images(nb) == 1
    assert "makespan_minutes" in str([c.get("outputs") for c in nb.cells])
