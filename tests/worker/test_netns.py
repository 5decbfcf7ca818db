"""Three PCs as three network namespaces: each worker reaches the database (and the S3 store)
through one forwarded port on its own link and nothing else, works in its own folder, and the
film still gets made; `export` from a fourth namespace and folder gives it.

Needs root and `ip` (iproute2); skipped, saying which is missing, otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import imageio.v2 as imageio
import pytest
import sqlalchemy as sa

from pipeline_kit import store, text
from pipeline_kit.chaos.proxy import Proxy
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.worker.outputs import file_digest

from .test_processes import ROOT, SMALL_BOOK, finish

IP = shutil.which("ip")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or IP is None,
    reason="network namespaces need root and `ip` (iproute2): "
    + ("not root" if os.geteuid() != 0 else "`ip` not found"),
)

PROBE = """import socket, sys
for host, port in [tuple(a.rsplit(':', 1)) for a in sys.argv[1:]]:
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        print('open')
    except OSError:
        print('closed')
"""


@dataclass(frozen=True)
class Pc:
    """One "PC": a network namespace whose only link ends at `host` (the host side's address)."""

    netns: str
    host: str
    folder: Path

    def run(self, *cmd: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start `cmd` inside this PC's namespace, in its folder."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return subprocess.Popen(
            [IP or "ip", "netns", "exec", self.netns, *cmd],
            cwd=self.folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        )


def _ip(*args: str) -> None:
    subprocess.run([IP or "ip", *args], check=True, capture_output=True, text=True, timeout=30)


@contextmanager
def pcs(n: int, root: Path) -> Iterator[list[Pc]]:
    """`n` network namespaces, each with a veth pair to the host (10.X.i.1 on the host side,
    .2 inside) and no route anywhere else; all removed afterwards, whatever happened."""
    tag = f"{os.getpid() % 100000}"
    net = 100 + os.getpid() % 100  # a /16 of its own per test process
    made: list[Pc] = []
    try:
        for i in range(n):
            ns, outside, inside = f"pk{tag}n{i}", f"pk{tag}h{i}", f"pk{tag}c{i}"
            host, guest = f"10.{net}.{i}.1", f"10.{net}.{i}.2"
            _ip("netns", "add", ns)
            made.append(Pc(ns, host, root / f"pc{i + 1}"))
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", ns)
            _ip("addr", "add", f"{host}/30", "dev", outside)
            _ip("link", "set", outside, "up")
            _ip("-n", ns, "addr", "add", f"{guest}/30", "dev", inside)
            _ip("-n", ns, "link", "set", inside, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield made
    finally:
        for i, pc in enumerate(made):
            subprocess.run([IP or "ip", "netns", "del", pc.netns], check=False, capture_output=True)
            subprocess.run([IP or "ip", "link", "del", f"pk{tag}h{i}"], check=False, capture_output=True)


def _forward(stack: ExitStack, pc: Pc, target: tuple[str, int]) -> int:
    """A port on `pc`'s host-side address forwarding to `target` (a loopback server); its number."""
    proxy = Proxy(target, listen=pc.host).start()
    stack.callback(proxy.close)
    return proxy.port


def _probe(pc: Pc, *addresses: str) -> list[str]:
    proc = pc.run(sys.executable, "-c", PROBE, *addresses)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out.split()


def _make_the_film_in_namespaces(
    db_url: str, db: Database, tmp_path: Path, *, s3_env: dict[str, str] | None = None
) -> None:
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    server = sa.engine.make_url(db_url)
    target = (server.host or "127.0.0.1", int(server.port or (5432 if db.dialect == "postgresql" else 3306)))
    with ExitStack() as stack:
        machines = stack.enter_context(pcs(4, tmp_path))
        urls, envs, ports = [], [], []
        for pc in machines:
            port = _forward(stack, pc, target)
            ports.append(port)
            urls.append(server.set(host=pc.host, port=port).render_as_string(hide_password=False))
            env = {}
            if s3_env is not None:
                s3 = urlparse(s3_env["PIPELINE_KIT_S3_ENDPOINT"])
                s3_port = _forward(stack, pc, (s3.hostname or "127.0.0.1", int(s3.port or 80)))
                env = {**s3_env, "PIPELINE_KIT_S3_ENDPOINT": f"http://{pc.host}:{s3_port}"}
            envs.append(env)
        # inside, the servers' own addresses lead nowhere: only the forwarded port does
        first = machines[0]
        assert _probe(
            first,
            f"{target[0]}:{target[1]}",
            f"{first.host}:{target[1]}",
            f"{machines[1].host}:{ports[1]}",
            f"{first.host}:{ports[0]}",
        ) == ["closed", "closed", "closed", "open"]
        workers = [
            pc.run(
                sys.executable,
                "-m",
                "pipeline_kit",
                "--db",
                url,
                "work",
                "--worker-id",
                f"PC-{i + 1}",
                "--quiet",
                "--until-empty",
                "--lease",
                "60",
                env=env,
            )
            for i, (pc, url, env) in enumerate(zip(machines[:3], urls, envs, strict=False))
        ]
        finish(workers)
        with db.engine.connect() as conn:
            rows = conn.execute(sa.select(tasks)).mappings().all()
        assert rows and {r["status"] for r in rows} == {"completed"}
        assert not list(tmp_path.glob("pc*/data/outputs/**/*.*"))  # nothing on a PC's own disk
        exporter = machines[3].run(
            sys.executable, "-m", "pipeline_kit", "--db", urls[3], "export", book.bookcode, "out", env=envs[3]
        )
        _, err = exporter.communicate(timeout=120)
        assert exporter.returncode == 0, err
    film = machines[3].folder / "out" / "films" / book.bookcode / "film.mp4"
    book_row = next(r for r in rows if r["kind"] == "assemble_book")
    assert file_digest(film)[1] == book_row["result"]["sha256"]
    assert imageio.get_reader(film).count_frames() >= 12
    listed = subprocess.run([IP or "ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(pc.netns in listed for pc in machines)  # all removed


@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_three_namespaced_pcs_make_the_film_with_the_store_in_the_database(
    db_url: str, db: Database, tmp_path: Path
) -> None:
    """Three workers, each in its own network namespace and folder, reaching only the database
    (through one forwarded port), keep outputs in the database store and make the small book into
    a film; `export` from a fourth namespace and folder writes the film the task row names."""
    assert store.effective_url(db)[0] == store.DATABASE_URL
    _make_the_film_in_namespaces(db_url, db, tmp_path)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_three_namespaced_pcs_make_the_film_with_the_store_in_s3(
    db_url: str, db: Database, tmp_path: Path, s3_store_env: dict[str, str]
) -> None:
    """As above with the store in S3 (SeaweedFS on the host's loopback): each namespace reaches
    the database and the S3 endpoint through a forwarded port each, and nothing else."""
    store.set_url(db, f"s3://films/{tmp_path.name}")
    _make_the_film_in_namespaces(db_url, db, tmp_path, s3_env=s3_store_env)
