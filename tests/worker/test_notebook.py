"""The worker notebook, executed by papermill as each PC runs it."""

from __future__ import annotations

from pathlib import Path

import papermill as pm
import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec
from pipeline_kit.errors import BadInput
from pipeline_kit.worker.notebook import database_url, notebook_config

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "worker.ipynb"
CANARY = "CANARY-pw-7d1e"


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_worker_notebook_runs_and_never_records_the_password(
    db_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """papermill runs the notebook to completion against the database named by the environment;
    a password in that URL appears nowhere in the executed notebook."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"nb{i}", kind="noop", lane="default") for i in range(5)])
    url = db_url
    if url.startswith("postgresql://"):  # trust auth accepts any password: a perfect canary
        url = url.replace("postgresql://root@", f"postgresql://root:{CANARY}@")
    monkeypatch.setenv("PIPELINE_KIT_DB_NIGHT", url)
    monkeypatch.setenv("PIPELINE_KIT_DB", "sqlite:////nonexistent/never-used.db")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run.ipynb"
    pm.execute_notebook(
        str(NOTEBOOK),
        str(out),
        kernel_name="python3",
        progress_bar=False,
        log_output=False,
        parameters={"worker_id": "PC-9", "lanes": "default", "backend": "noop", "db_profile": "night"},
    )
    executed = out.read_text()
    assert "PC-9: 5 completed" in executed
    assert CANARY not in executed
    with db.engine.connect() as conn:
        assert (
            conn.execute(sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "completed")).scalar()
            == 5
        )


def test_notebook_parameters_are_validated() -> None:
    """Papermill only warns about wrong parameters, so the notebook's config check refuses them."""
    good = dict(
        worker_id="PC-1", lanes="image", backend="sketch", batch=1, until_empty=True, max_tasks=0, max_minutes=0.0
    )
    assert notebook_config(**good).worker_id == "PC-1"
    routing = "character_sheet=sketch,first_frame=sketch,last_frame=sketch,video=sketch"
    assert notebook_config(**{**good, "backend": routing}).backend == routing
    for bad in (
        {"worker_id": 7},
        {"lanes": ""},
        {"batch": 0},
        {"max_tasks": -1},
        {"until_empty": "yes"},
        {"max_minutes": "soon"},
        {"backend": 3},
        {"backend": "poster=sketch"},
    ):
        with pytest.raises(BadInput):
            notebook_config(**{**good, **bad})
    with pytest.raises(BadInput):
        database_url("no_such_profile_xyz")
