"""Serve the admin screen (notebooks/03_monitor.ipynb) as a web page with Voilà on 127.0.0.1.

The notebook is copied with the chosen parameters injected (by papermill, literals only) into a
temporary folder and served from there. The database URL reaches Voilà's kernel through
$PIPELINE_KIT_DB in the environment, never as a parameter; a relative SQLite path is made
absolute first because the kernel runs in that temporary folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook
from sqlalchemy.engine import make_url

from pipeline_kit.db.connect import ENV_VAR, describe_url
from pipeline_kit.errors import BadInput

MONITOR = "03_monitor.ipynb"
HOST = "127.0.0.1"


def notebooks_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "notebooks"


def prepare_monitor(folder: Path, *, bookcode: str = "", refresh_s: float = 5.0,
                    expiring_within_s: float = 30.0) -> Path:
    """Write the monitor notebook, parameters injected, into `folder`; returns its path."""
    source = notebooks_dir() / MONITOR
    if not source.is_file():
        raise BadInput(f"the admin screen's notebook is missing ({source}): run from a pipeline_kit checkout")
    nb = parameterize_notebook(load_notebook_node(str(source)),
                               {"bookcode": bookcode, "refresh_s": float(refresh_s),
                                "expiring_within_s": float(expiring_within_s), "auto_refresh": True})
    target = folder / MONITOR
    nbformat.write(nb, target)
    return target


def absolute_url(url: str) -> str:
    """The same URL, with a relative SQLite file made absolute (other databases unchanged)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return url
    return parsed.set(database=str(Path(parsed.database).resolve())).render_as_string(hide_password=False)


def voila_command(notebook: Path, *, port: int, open_browser: bool) -> list[str]:
    cmd = [sys.executable, "-m", "voila", str(notebook), f"--port={port}", f"--Voila.ip={HOST}",
           "--Voila.port_retries=0", "--theme=light", "--show_tracebacks=False"]
    if not open_browser:
        cmd.append("--no-browser")
    return cmd


def serve_monitor(url: str, *, port: int, open_browser: bool, bookcode: str = "", refresh_s: float = 5.0) -> int:
    """Run Voilà on the admin screen until interrupted; returns Voilà's exit code (0 on Ctrl-C)."""
    with tempfile.TemporaryDirectory(prefix="pk-monitor-") as folder:
        notebook = prepare_monitor(Path(folder), bookcode=bookcode, refresh_s=refresh_s)
        env = {**os.environ, ENV_VAR: absolute_url(url)}
        print(f"admin screen on http://{HOST}:{port}/ watching {describe_url(url)} "
              "(Ctrl-C stops it)", flush=True)
        proc = subprocess.Popen(voila_command(notebook, port=port, open_browser=open_browser), env=env)
        if threading.current_thread() is threading.main_thread():  # SIGTERM stops Voilà and its kernel too
            signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
            return 0
