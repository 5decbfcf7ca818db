"""A provider's address that is down: refusing connections for a while, then answering as a
stand-in; or accepting no connection at all (a connect that times out).

`Outage(FakeComfyUI(), seconds=45)` holds a loopback port with nothing listening on it (each
connect is refused at once, as a stopped server's is) and starts the stand-in on that port once
`seconds` have passed; `answering` is set from then on. `Silent()` listens but never accepts:
its backlog is full, so the kernel drops every new connection attempt and the client's connect
times out, as for an address where nothing answers.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Self

from servers.scripted import FakeServer


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Outage:
    """`server`'s address refuses connections for `seconds`, then `server` answers there."""

    def __init__(self, server: FakeServer, seconds: float) -> None:
        self.server, self.seconds = server, seconds
        self.port = free_port()
        self.answering = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._come_back, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _come_back(self) -> None:
        if not self._stop.wait(self.seconds):
            self.server.start(self.port)
            self.answering.set()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.answering.is_set():
            self.server.stop()


class Silent:
    """A loopback address where nothing ever answers: every connect attempt times out."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)
        self._queued: list[socket.socket] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> Self:
        for _ in range(3):  # fill the accept queue: later SYNs are dropped, not refused
            waiting = socket.socket()
            waiting.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                waiting.connect(self._listener.getsockname())
            self._queued.append(waiting)
        return self

    def __exit__(self, *exc: object) -> None:
        for waiting in self._queued:
            waiting.close()
        self._listener.close()
