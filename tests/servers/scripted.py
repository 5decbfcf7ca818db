"""A threaded HTTP server on a free loopback port whose answers a test scripts in advance.

`server.script("429:2", "500", "ok")` makes the next billable requests answer 429 with
Retry-After 2, then 500, then normally; an empty script answers normally. `billing` lists the
calls the fake charged for, so a test can assert that nothing was paid twice.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from PIL import Image


@dataclass(frozen=True)
class Action:
    """How to answer one billable request."""

    status: int = 200
    retry_after: str | None = None  # the Retry-After header, as sent
    hang_s: float = 0.0  # sleep this long before answering
    error: str = "scripted failure"  # the error text of a non-200 answer
    special: str = ""  # a protocol-specific twist: wrong_size, not_image, ...


def parse_action(spec: str | Action) -> Action:
    """ok | 429:S | 429-date:S | 500 | 400 | 404 | 401 | hang:S | wrong_size | not_image | ..."""
    if isinstance(spec, Action):
        return spec
    name, _, arg = spec.partition(":")
    if name == "ok":
        return Action()
    if name == "hang":
        return Action(hang_s=float(arg))
    if name == "429":
        return Action(status=429, retry_after=arg or None, error="rate limit exceeded")
    if name == "429-date":
        return Action(
            status=429, retry_after=formatdate(time.time() + float(arg), usegmt=True), error="rate limit exceeded"
        )
    if name.isdigit():
        return Action(status=int(name), error=arg or f"scripted {name}")
    return Action(special=name, error=arg)


def png_bytes(size: tuple[int, int], colour: tuple[int, int, int] = (90, 120, 200)) -> bytes:
    """A real PNG of `size`."""
    buffer = BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


class Request:
    """One request as the handler saw it."""

    def __init__(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        split = urlsplit(handler.path)
        self.method, self.path = handler.command, split.path
        self.query = {k: v[0] for k, v in parse_qs(split.query).items()}
        self.headers = dict(handler.headers.items())
        self.body = body
        self.handler = handler

    def json(self) -> Any:
        return json.loads(self.body or b"null")


def parse_form(request: Request) -> list[tuple[str, str | None, bytes]] | None:
    """A multipart/form-data body as (field name, file name or None, bytes) in order; None if
    the body is not one (a real server answers 400)."""
    content_type = request.headers.get("Content-Type", "")
    if not content_type.startswith("multipart/form-data") or "boundary=" not in content_type:
        return None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + request.body
    )
    if not message.is_multipart():
        return None
    parts = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or not name:
            return None
        parts.append((name, part.get_filename(), part.get_payload(decode=True) or b""))
    return parts


class FakeServer:
    """Base of the fakes: subclasses implement `handle(request)`."""

    def __init__(self) -> None:
        self.billing: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.request_times: list[float] = []  # time.monotonic() of each billable request
        self._script: deque[Action] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    # --- scripting -------------------------------------------------------------------------
    def script(self, *actions: str | Action) -> None:
        """Queue answers for the next billable requests."""
        with self._lock:
            self._script.extend(parse_action(a) for a in actions)

    def next_action(self) -> Action:
        """The next scripted answer (normal when the script is empty); records its time."""
        with self._lock:
            self.request_times.append(time.monotonic())
            return self._script.popleft() if self._script else Action()

    def bill(self, **entry: Any) -> None:
        with self._lock:
            self.billing.append(entry)

    # --- answering -------------------------------------------------------------------------
    def failed(self, request: Request, action: Action) -> bool:
        """Carry out a hang or an error status; True when the request is answered."""
        if action.hang_s:
            self._stopping.wait(action.hang_s)
        if action.status == 200:
            return False
        headers = {"Retry-After": action.retry_after} if action.retry_after else {}
        self.reply_json(request, {"error": {"message": action.error}}, action.status, headers)
        return True

    @staticmethod
    def reply(
        request: Request,
        body: bytes,
        status: int = 200,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        handler = request.handler
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)

    def reply_json(self, request: Request, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.reply(request, json.dumps(obj).encode(), status, headers=headers)

    def handle(self, request: Request) -> None:
        raise NotImplementedError

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self, port: int = 0) -> Self:
        """Serve on `port` of the loopback address (0: a free one)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(self, self.rfile.read(length))
                with fake._lock:
                    fake.requests.append((request.method, request.path))
                # A client that gave up (a timeout test) has nothing left to answer.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    fake.handle(request)

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def do_DELETE(self) -> None:
                self._serve()

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hung up mid-answer is expected in timeout tests

        self._httpd = Server(("127.0.0.1", port), Handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
