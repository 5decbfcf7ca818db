"""Progress of a ComfyUI run from the server's websocket (`/ws?clientId=`), when it answers.

ComfyUI sends JSON text messages `{"type", "data"}` to the client id a prompt was queued with:
`progress` (`data.value` of `data.max` steps), `executing` (`data.node` null once the prompt is
done), `execution_success`, `execution_error`, `execution_interrupted`; binary messages are
preview images and are skipped. The socket only says when to look: a run's outputs are always
read from /history, so a socket that does not answer (or the `websockets` package missing)
costs nothing but polling.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

DONE = ("execution_success", "execution_error", "execution_interrupted")


def ws_url(base_url: str, client_id: str) -> str:
    """The websocket address of a ComfyUI server at `base_url` (http -> ws, https -> wss)."""
    scheme, _, rest = base_url.partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/ws?clientId={client_id}"


class Progress:
    """A websocket listening for one client id's messages, used as a context manager; `live` is
    False when it did not open."""

    def __init__(self, base_url: str, client_id: str, open_timeout_s: float = 2.0) -> None:
        self._url, self._open_timeout_s = ws_url(base_url, client_id), open_timeout_s
        self._stack = contextlib.ExitStack()
        self._ws: Any = None

    def __enter__(self) -> Progress:
        try:
            from websockets.sync.client import connect

            self._ws = self._stack.enter_context(
                connect(self._url, open_timeout=self._open_timeout_s, close_timeout=1, compression=None)
            )
        except Exception:  # no package, refused, not a websocket: polling it is
            self._ws = None
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def live(self) -> bool:
        return self._ws is not None

    def wait(self, prompt_id: str, seconds: float, report: Callable[[str], None]) -> bool:
        """Read messages for up to `seconds`, reporting step progress of `prompt_id`; True once
        the server says that prompt is over (look at its history now)."""
        end = time.monotonic() + seconds
        while self._ws is not None and (left := end - time.monotonic()) > 0:
            try:
                message = self._ws.recv(timeout=left)
            except TimeoutError:
                return False
            except Exception:  # closed or broken: fall back to polling
                self.close()
                return False
            if isinstance(message, bytes):
                continue  # a preview image
            try:
                event = json.loads(message)
                kind, data = event["type"], event.get("data") or {}
            except (ValueError, KeyError, TypeError):
                continue
            if not isinstance(data, dict) or data.get("prompt_id") != prompt_id:
                continue
            if kind == "progress" and data.get("max"):
                report(f"{data.get('value', 0)}/{data['max']}")
            elif kind in DONE or (kind == "executing" and data.get("node") is None):
                return True
        return False

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self._ws = None
        try:
            self._stack.close()
        except Exception:  # a socket that broke has nothing left to close cleanly
            pass
