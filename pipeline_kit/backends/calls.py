"""HTTP calls under one deadline, rate limited per uid, failing only with GenerationError.

Every request gets the time left of the job's deadline as its httpx timeout (read, write and
pool alike), so a hung server costs at most the caller's `timeout_s`; connecting gets at most
CONNECT_TIMEOUT_S of it, so an address that answers nothing is known for what it is (the call
never went out: no attempt used) long before the job's deadline.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import ssl
import time
from collections.abc import Callable
from typing import Any

import httpx

from pipeline_kit.backends.classify import classify
from pipeline_kit.backends.params import permanent
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import GenerationError

CONNECT_TIMEOUT_S = 10.0  # a provider that takes longer to accept a connection is unreachable


class KeyedService:
    """A paid HTTP service reached with a key: its address, model, price and rate limit. The key
    stays out of the repr, and so out of any log that shows the backend."""

    def __init__(self, base_url: str, api_key: str, model: str, price: float, limiter: RateLimiter) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.model, self.price, self.limiter = model, price, limiter

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"


@functools.cache
def tls() -> ssl.SSLContext:
    """One TLS context per process: httpx builds a new one (reading the whole CA bundle, ~30 ms)
    for every client otherwise, a third of a short remote call's time with `--inflight`."""
    import certifi

    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())


def http_client(**options: Any) -> httpx.Client:
    """An httpx client sharing the process's TLS context (`options` as httpx.Client takes them)."""
    return httpx.Client(verify=tls(), **options)


class Deadline:
    """The moment a call must be over by; `remaining()` raises a timeout once it has passed."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.seconds = seconds
        self._end = clock() + seconds

    def remaining(self) -> float:
        """Seconds left; a retryable `timeout` GenerationError when none are."""
        left = self._end - self._clock()
        if left <= 0:
            raise GenerationError(f"timeout: no answer within {self.seconds:g} s", error_kind="timeout", retryable=True)
        return left


def send(client: httpx.Client, method: str, url: str, *, deadline: Deadline, **kwargs: Any) -> httpx.Response:
    """One request within the deadline; a non-2xx status or any failure -> GenerationError."""
    try:
        left = deadline.remaining()
        timeout = httpx.Timeout(left, connect=min(left, CONNECT_TIMEOUT_S))
        response = client.request(method, url, timeout=timeout, **kwargs)
        response.raise_for_status()
    except Exception as exc:  # the classify table decides what each failure is
        raise classify(exc) from exc
    return response


def send_paid(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    deadline: Deadline,
    limiter: RateLimiter,
    uid: str | None,
    **kwargs: Any,
) -> httpx.Response:
    """`send` for a call that spends quota: take a token first, honour a 429's Retry-After."""
    limiter.acquire(uid, max_wait=deadline.remaining())
    try:
        return send(client, method, url, deadline=deadline, **kwargs)
    except GenerationError as error:
        if error.retry_after is not None:
            limiter.defer(uid, error.retry_after)
        raise


def json_body(response: httpx.Response) -> Any:
    """The response's JSON; a body that is not JSON is a permanent `bad_output`."""
    try:
        return response.json()
    except ValueError as exc:
        raise classify(exc) from exc


def first_image(answer: Any, deadline: Deadline, on_item: Callable[[dict[str, Any]], None] | None = None) -> bytes:
    """The image in an images answer's `data[0]` (OpenAI's shape, which Ark shares): decoded from
    `b64_json`, or downloaded from its `url` at once (such URLs expire) by a client that carries no
    key. `on_item` may inspect the item first (Ark puts a per-image error there)."""
    try:
        item = answer["data"][0]
    except (KeyError, IndexError, TypeError):
        raise permanent("bad_output", "bad_output: the answer has no data[0]") from None
    if on_item is not None:
        on_item(item)
    if item.get("b64_json"):
        try:
            return base64.b64decode(item["b64_json"], validate=True)
        except (binascii.Error, ValueError):
            raise permanent("bad_output", "bad_output: b64_json is not base64") from None
    if item.get("url"):
        with http_client(follow_redirects=True) as plain:  # the key stays with the provider
            return send(plain, "GET", item["url"], deadline=deadline).content
    raise permanent("bad_output", "bad_output: data[0] has neither b64_json nor url")
