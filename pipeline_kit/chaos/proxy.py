"""A TCP proxy between workers and a server, to cut or freeze connections, or to be the one way
to reach it (from a network namespace: listen on the host side of its veth pair).

`cut()` drops every open connection at once (a network blip, a NAT timeout); `freeze(s)` stops
forwarding bytes either way for `s` seconds and then lets them through (a stalled link). New
connections are accepted throughout; while the server is down they are closed at once.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field


@dataclass
class Proxy:
    target: tuple[str, int]
    listen: str = "127.0.0.1"  # the address it accepts on
    _server: socket.socket = field(init=False)
    _pairs: set[tuple[socket.socket, socket.socket]] = field(default_factory=set, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _flowing: threading.Event = field(default_factory=threading.Event, init=False)
    _closed: threading.Event = field(default_factory=threading.Event, init=False)

    def __post_init__(self) -> None:
        self._server = socket.create_server((self.listen, 0))
        self._flowing.set()

    @property
    def port(self) -> int:
        return int(self._server.getsockname()[1])

    def start(self) -> Proxy:
        threading.Thread(target=self._accept, daemon=True, name="chaos-proxy").start()
        return self

    def close(self) -> None:
        self._closed.set()
        self._flowing.set()
        self._server.close()
        self.cut()

    def cut(self) -> int:
        """Drop every open connection; returns how many were cut."""
        with self._lock:
            pairs, self._pairs = list(self._pairs), set()
        for pair in pairs:
            for sock in pair:
                _shut(sock)
        return len(pairs)

    def freeze(self, seconds: float) -> None:
        """Hold every byte for `seconds` (in a timer: the caller goes on)."""
        self._flowing.clear()
        threading.Timer(seconds, self._flowing.set).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _shut(client)
                continue
            pair = (client, upstream)
            with self._lock:
                self._pairs.add(pair)
            for src, dst in (pair, pair[::-1]):
                threading.Thread(target=self._pump, args=(src, dst, pair), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, pair: tuple[socket.socket, socket.socket]) -> None:
        try:
            while chunk := src.recv(65536):
                self._flowing.wait()
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            with self._lock:
                self._pairs.discard(pair)
            _shut(src)
            _shut(dst)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
