"""Serve the screens as web pages with Voilà on 127.0.0.1: the admin screen alone (`pipeline-kit
monitor`) or the creator's notebooks (`pipeline-kit notebooks`), through one launcher.

The notebooks are copied into a temporary folder (the monitor with its parameters injected by
papermill, literals only) and served from there: the worker notebook is never among them, and
nothing a page does is written into notebooks/ (kernels run in that folder; screens cache what
they fetch per user). The database URL reaches the kernels through $PIPELINE_KIT_DB, never as a
parameter; a relative SQLite path is made absolute first. Kernels are kept in check by
jupyter_server's culler (idle and unconnected for `cull_idle_s`) and by a cap (`voila_server`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import nbformat
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook
from sqlalchemy.engine import make_url

from pipeline_kit.db.connect import ENV_VAR, describe_url
from pipeline_kit.errors import BadInput

MONITOR = "03_monitor.ipynb"
# What a creator opens; the worker notebook (run by papermill on each PC) is left out on purpose.
CREATOR_NOTEBOOKS = ("01_new_book.ipynb", "02_storyboard.ipynb", MONITOR, "postmortem.ipynb", "planning.ipynb")
HOST = "127.0.0.1"
DEFAULT_PORT = 8866  # Voilà's own default
PORTS_TRIED = 50  # after it, when the user names no port


@dataclass(frozen=True)
class KernelLimits:
    """How the server keeps its kernels (one per open page) in check."""

    cull_idle_s: int = 300  # an idle kernel no page is connected to is shut down after this
    cull_interval_s: int = 60  # how often the culler looks
    max_kernels: int = 8  # kernels at once; a page load beyond it first frees a kernel no page uses

    def __post_init__(self) -> None:
        if self.cull_idle_s < 1 or self.cull_interval_s < 1 or self.max_kernels < 1:
            raise BadInput(f"kernel limits must be at least 1, got {self}")

    def options(self) -> list[str]:
        """jupyter_server's culling settings and the cap, as Voilà's command line takes them."""
        return [
            f"--MappingKernelManager.cull_idle_timeout={self.cull_idle_s}",
            f"--MappingKernelManager.cull_interval={self.cull_interval_s}",
            "--MappingKernelManager.cull_connected=False",  # a page still open keeps its kernel
            "--VoilaConfiguration.multi_kernel_manager_class=pipeline_kit.ui.voila_server.CappedKernelManager",
            f"--CappedKernelManager.max_kernels={self.max_kernels}",
        ]


def notebooks_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "notebooks"


def _source(name: str) -> Path:
    source = notebooks_dir() / name
    if not source.is_file():
        raise BadInput(f"the notebook {name} is missing ({source}): run from a pipeline_kit checkout")
    return source


def prepare_monitor(
    folder: Path, *, bookcode: str = "", refresh_s: float = 5.0, expiring_within_s: float = 30.0
) -> Path:
    """Write the monitor notebook, parameters injected, into `folder`; returns its path."""
    nb = parameterize_notebook(
        load_notebook_node(str(_source(MONITOR))),
        {
            "bookcode": bookcode,
            "refresh_s": float(refresh_s),
            "expiring_within_s": float(expiring_within_s),
            "auto_refresh": True,
        },
    )
    target = folder / MONITOR
    nbformat.write(nb, target)
    return target


def prepare_notebooks(folder: Path) -> Path:
    """Copy the creator's notebooks (never the worker's) into `folder`; returns the folder."""
    for name in CREATOR_NOTEBOOKS:
        shutil.copyfile(_source(name), folder / name)
    return folder


def absolute_url(url: str) -> str:
    """The same URL, with a relative SQLite file made absolute (other databases unchanged)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return url
    return parsed.set(database=str(Path(parsed.database).resolve())).render_as_string(hide_password=False)


def voila_command(target: Path, *, port: int, open_browser: bool, limits: KernelLimits) -> list[str]:
    """Voilà (with the kernel cap and list of `voila_server`) serving one notebook or a folder."""
    cmd = [
        sys.executable,
        "-m",
        "pipeline_kit.ui.voila_server",
        str(target),
        f"--port={port}",
        f"--Voila.ip={HOST}",
        "--Voila.port_retries=0",
        "--theme=light",
        "--show_tracebacks=False",
        *limits.options(),
    ]
    if not open_browser:
        cmd.append("--no-browser")
    return cmd


def free_port(first: int = DEFAULT_PORT) -> int:
    """The first port from `first` on that nothing listens on here (a second server, another
    user's, or a test beside it, takes the next one); BadInput when PORTS_TRIED are all taken."""
    for port in range(first, first + PORTS_TRIED):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
            return port
    raise BadInput(f"ports {first} to {first + PORTS_TRIED - 1} are all in use: name a free one with --port")


def serve(target: Path, url: str, *, port: int | None, open_browser: bool, limits: KernelLimits, what: str) -> int:
    """Run Voilà on `target` (kernels started in its folder) until interrupted; returns Voilà's
    exit code (0 on Ctrl-C). The kernels find the database in $PIPELINE_KIT_DB. With no `port`,
    the first free one from 8866 on; a port the user named is used or refused, never changed."""
    port = port or free_port()
    env = {**os.environ, ENV_VAR: absolute_url(url)}
    print(
        f"{what} on http://{HOST}:{port}/ watching {describe_url(url)} "
        f"(at most {limits.max_kernels} pages at once; Ctrl-C stops it)",
        flush=True,
    )
    proc = subprocess.Popen(
        voila_command(target, port=port, open_browser=open_browser, limits=limits),
        env=env,
        cwd=target if target.is_dir() else target.parent,
    )
    if threading.current_thread() is threading.main_thread():  # SIGTERM stops Voilà and its kernels too
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


def serve_monitor(
    url: str,
    *,
    port: int | None,
    open_browser: bool,
    bookcode: str = "",
    refresh_s: float = 5.0,
    limits: KernelLimits = KernelLimits(),
) -> int:
    """The admin screen alone, refreshing itself (`pipeline-kit monitor`)."""
    with tempfile.TemporaryDirectory(prefix="pk-monitor-") as folder:
        notebook = prepare_monitor(Path(folder), bookcode=bookcode, refresh_s=refresh_s)
        return serve(notebook, url, port=port, open_browser=open_browser, limits=limits, what="admin screen")


def serve_notebooks(url: str, *, port: int | None, open_browser: bool, limits: KernelLimits = KernelLimits()) -> int:
    """The creator's notebooks, listed at the root (`pipeline-kit notebooks`)."""
    with tempfile.TemporaryDirectory(prefix="pk-notebooks-") as folder:
        served = prepare_notebooks(Path(folder))
        return serve(served, url, port=port, open_browser=open_browser, limits=limits, what="the creator's notebooks")
