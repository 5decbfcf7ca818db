"""One table that turns any failure of a backend call into a `GenerationError`.

Transient failures (timeouts, 429, 5xx, dropped connections, temporary out-of-memory, a model
that failed to load) are retryable: the same call may succeed later. Permanent failures (400,
401, 403, 404, 422, a missing field, an unknown model, an unsupported size, an invalid kind, a
content-policy rejection, an output that is not what was asked for) are not: retrying would only
spend money again. An exhausted quota or an unpaid account (`quota_exhausted`) is neither the
task's fault nor cured by the next retry: the worker pauses the paid lane and raises an alert.
A call the provider never took (`turned_away`: it could not be reached, no connection, name or
TLS handshake, or it refused the call before any work with 429 or 503) is no fault of the task
either: the worker gives the task back without using an attempt and pauses that provider.
Providers that name their errors (Ark's `{"error": {"code", "message"}}`) are matched by that
code first, whether it came with an HTTP status or from a remote task that failed. The rules are
tried in order; the first that matches decides.
"""

from __future__ import annotations

import functools
import json
import math
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import ParamSpec, TypeVar

import httpx
from PIL import UnidentifiedImageError

from pipeline_kit.errors import GenerationError

P = ParamSpec("P")
T = TypeVar("T")

_OOM = re.compile(r"out of memory|\bOOM\b|cudaMalloc failed", re.IGNORECASE)
_MODEL_LOAD = re.compile(
    r"(failed|unable|error) (to load|loading) (the )?model|"
    r"model failed to load|llama runner process has terminated",
    re.IGNORECASE,
)
_UNKNOWN_MODEL = re.compile(
    r"model .{0,80}not found|unknown model|model_not_found|"
    r"invalid model|value not in list",
    re.IGNORECASE,
)
_SIZE = re.compile(r"\bsize\b|width|height|dimension|resolution", re.IGNORECASE)
# Provider error codes (Ark's public error code table), matched at the start of the code; and
# Volcengine speech's 8-digit codes: 4xxxxxxx the request's fault (a voice the resource does not
# grant, a text over the limit, a bad parameter), 5xxxxxxx the service's own failure, and 45000000
# saying "quota exceeded for types: concurrency" when too many calls run at once.
_QUOTA_CODE = re.compile(r"^(AccountOverdueError|ServiceOverdue|QuotaExceeded|SetLimitExceeded)")
_POLICY_CODE = re.compile(r"SensitiveContentDetected|InputMediaMayContainRealPerson")
_RATE_CODE = re.compile(r"^(RateLimitExceeded|ServerOverloaded)")
_SERVER_CODE = re.compile(r"^(InternalServiceError|InternalError|ServiceUnavailable|5\d{7}$)")
_MODEL_CODE = re.compile(r"^(InvalidEndpointOrModel|ModelNotOpen|ServiceNotOpen)")
_PARAM_CODE = re.compile(
    r"^(InvalidParameter|MissingParameter|InvalidImageURL|PromptEmpty|"
    r"InvalidResolutionParameter|LastFrameNotSupported|4\d{7}$)"
)
_BUSY = re.compile(r"^45000000: quota exceeded for types: concurrency", re.IGNORECASE)


class RemoteError(Exception):
    """A remote service reported that its own run failed (e.g. a ComfyUI execution error)."""


class ProviderError(RemoteError):
    """A remote task failed with the provider's own error code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


def provider_code(exc: BaseException) -> str:
    """The provider's error code: a ProviderError's, or `error.code` of an HTTP error's body."""
    if isinstance(exc, ProviderError):
        return exc.code
    if not isinstance(exc, httpx.HTTPStatusError):
        return ""
    try:
        error = exc.response.json().get("error")
    except (ValueError, AttributeError, httpx.ResponseNotRead, UnicodeDecodeError):
        return ""
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else ""


def unreached(exc: BaseException) -> bool:
    """Whether the request never got to the provider: no connection (refused, no route, name not
    found, TLS handshake failed, connect timed out) or no pooled connection free; nothing was sent."""
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return True
    return isinstance(exc, (ConnectionRefusedError, socket.gaierror))


def refused_before_work(exc: BaseException) -> bool:
    """Whether the provider answered "not now" before doing any work: 429 Too Many Requests, or
    503 Service Unavailable (with or without Retry-After)."""
    return _status(exc) in (429, 503)


@dataclass(frozen=True)
class Rule:
    """If `matches(exc)`, the error is `error_kind`, retryable or not."""

    error_kind: str
    retryable: bool
    matches: Callable[[BaseException], bool]


def _status(exc: BaseException) -> int | None:
    return exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else None


def _status_in(*codes: int) -> Callable[[BaseException], bool]:
    return lambda exc: _status(exc) in codes


def _text_matches(pattern: re.Pattern[str]) -> Callable[[BaseException], bool]:
    return lambda exc: bool(pattern.search(describe(exc)))


def _code_matches(pattern: re.Pattern[str]) -> Callable[[BaseException], bool]:
    return lambda exc: bool(pattern.search(provider_code(exc)))


def _client_error_with(pattern: re.Pattern[str]) -> Callable[[BaseException], bool]:
    return lambda exc: (
        (_status(exc) in (400, 404, 422) or not isinstance(exc, httpx.HTTPError))
        and bool(pattern.search(describe(exc)))
    )


RULES: tuple[Rule, ...] = (
    Rule("unreachable", True, unreached),
    Rule("timeout", True, lambda e: isinstance(e, (httpx.TimeoutException, TimeoutError)) or _status(e) == 408),
    Rule("quota_exhausted", True, _code_matches(_QUOTA_CODE)),
    Rule("content_policy", False, _code_matches(_POLICY_CODE)),
    Rule(
        "rate_limited",
        True,
        lambda e: _status(e) == 429 or bool(_RATE_CODE.search(provider_code(e))) or bool(_BUSY.search(str(e))),
    ),
    Rule("out_of_memory", True, lambda e: isinstance(e, MemoryError) or bool(_OOM.search(describe(e)))),
    Rule("model_load_failed", True, _text_matches(_MODEL_LOAD)),
    Rule("server_error", True, lambda e: (_status(e) or 0) >= 500 or bool(_SERVER_CODE.search(provider_code(e)))),
    Rule("connection_error", True, lambda e: isinstance(e, (httpx.TransportError, ConnectionError))),
    Rule(
        "unknown_model",
        False,
        lambda e: _client_error_with(_UNKNOWN_MODEL)(e) or bool(_MODEL_CODE.search(provider_code(e))),
    ),
    Rule("unsupported_size", False, lambda e: _status(e) in (400, 422) and bool(_SIZE.search(describe(e)))),
    Rule("unauthorized", False, _status_in(401, 403)),
    Rule("not_found", False, _status_in(404)),
    Rule("bad_request", False, lambda e: 400 <= (_status(e) or 0) < 500 or bool(_PARAM_CODE.search(provider_code(e)))),
    Rule("missing_field", False, lambda e: isinstance(e, KeyError)),
    Rule("bad_output", False, lambda e: isinstance(e, (UnidentifiedImageError, json.JSONDecodeError))),
    Rule("remote_error", True, lambda e: isinstance(e, RemoteError)),
    Rule("io_error", True, lambda e: isinstance(e, OSError)),  # disk full, file busy, ...
)
# Anything else is a defect in the backend: retrying the same code would fail the same way.
FALLBACK = Rule("internal_error", False, lambda e: True)


def describe(exc: BaseException) -> str:
    """One line naming the failure: the HTTP status and the start of the body, or the message."""
    if isinstance(exc, httpx.HTTPStatusError):
        response = exc.response
        try:
            body = response.text
        except (httpx.ResponseNotRead, UnicodeDecodeError):
            body = ""
        detail = " ".join(body.split())[:300]
        return f"HTTP {response.status_code} from {exc.request.url.copy_with(query=None)}" + (
            f": {detail}" if detail else ""
        )
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}" if exc.args else "missing field"
    message = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """The server's Retry-After in seconds (delta-seconds or HTTP-date), None if absent."""
    if not isinstance(exc, httpx.HTTPStatusError):
        return None
    return parse_retry_after(exc.response.headers.get("retry-after"), now)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Parse a Retry-After header value into seconds from `now` (never negative)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return None if math.isnan(seconds) else max(0.0, seconds)


def classify(exc: BaseException) -> GenerationError:
    """The `GenerationError` for `exc`; a GenerationError passes through unchanged."""
    if isinstance(exc, GenerationError):
        return exc
    rule = next((r for r in RULES if r.matches(exc)), FALLBACK)
    error = GenerationError(
        f"{rule.error_kind}: {describe(exc)}",
        error_kind=rule.error_kind,
        retryable=rule.retryable,
        retry_after=retry_after(exc),
        turned_away=unreached(exc) or refused_before_work(exc),
    )
    error.__cause__ = exc
    return error


def classified(call: Callable[P, T]) -> Callable[P, T]:
    """Decorate a backend's `run` so that whatever fails leaves it as a GenerationError."""

    @functools.wraps(call)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # the table decides what each failure is
            raise classify(exc) from exc

    return wrapper
