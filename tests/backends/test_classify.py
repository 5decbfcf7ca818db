"""The one classification table: which failures retry and which fail at once."""

from __future__ import annotations

import json
import socket
import time
from email.utils import formatdate

import httpx
import pytest
from PIL import UnidentifiedImageError

from pipeline_kit.backends.classify import RemoteError, classified, classify, describe, parse_retry_after
from pipeline_kit.errors import GenerationError


def http_error(
    status: int, body: str = "", headers: dict[str, str] | None = None, auth: str = "Bearer sk-secret-key"
) -> httpx.HTTPStatusError:
    """An HTTPStatusError as httpx raises it, for a request that carried a key."""
    request = httpx.Request(
        "POST", "https://api.example.com/v1/images/generations?x=1", headers={"Authorization": auth}
    )
    response = httpx.Response(status, text=body, headers=headers or {}, request=request)
    return httpx.HTTPStatusError(f"status {status}", request=request, response=response)


def json_error() -> json.JSONDecodeError:
    try:
        json.loads("<html>")
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError("unreachable")


TRANSIENT = [
    (httpx.ReadTimeout("read timed out"), "timeout"),
    (httpx.ConnectTimeout("connect timed out"), "unreachable"),
    (TimeoutError("slow"), "timeout"),
    (http_error(408), "timeout"),
    (http_error(429, "slow down", {"Retry-After": "3"}), "rate_limited"),
    (http_error(500, "internal"), "server_error"),
    (http_error(502), "server_error"),
    (http_error(503, "overloaded"), "server_error"),
    (http_error(500, '{"error": "CUDA out of memory. Tried to allocate 2.00 GiB"}'), "out_of_memory"),
    (MemoryError(), "out_of_memory"),
    (RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"), "out_of_memory"),
    (http_error(500, '{"error": "llama runner process has terminated: error loading model"}'), "model_load_failed"),
    (RuntimeError("Failed to load model weights"), "model_load_failed"),
    (httpx.ConnectError("connection refused"), "unreachable"),
    (httpx.ConnectError("[Errno -2] Name or service not known"), "unreachable"),
    (httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), "unreachable"),
    (ConnectionRefusedError(111, "Connection refused"), "unreachable"),
    (httpx.RemoteProtocolError("server disconnected"), "connection_error"),
    (ConnectionResetError("reset by peer"), "connection_error"),
    (RemoteError("ComfyUI KSampler failed: something odd"), "remote_error"),
    (OSError(28, "No space left on device"), "io_error"),
]

PERMANENT = [
    (http_error(400, '{"error": "bad prompt"}'), "bad_request"),
    (http_error(422, "unprocessable"), "bad_request"),
    (http_error(401, "Incorrect API key"), "unauthorized"),
    (http_error(403, "forbidden"), "unauthorized"),
    (http_error(404, "no route"), "not_found"),
    (http_error(404, '{"error": "model \\"llama9\\" not found, try pulling it first"}'), "unknown_model"),
    (http_error(400, '{"error": {"code": "model_not_found"}}'), "unknown_model"),
    (RemoteError("Value not in list: ckpt_name: 'x.safetensors' not in []"), "unknown_model"),
    (http_error(400, '{"error": {"message": "Invalid size 640x360", "param": "size"}}'), "unsupported_size"),
    (KeyError("prompt"), "missing_field"),
    (UnidentifiedImageError("cannot identify image file"), "bad_output"),
    (json_error(), "bad_output"),
    (ValueError("a bug in a backend"), "internal_error"),
]


@pytest.mark.parametrize(("exc", "kind"), TRANSIENT, ids=[k for _, k in TRANSIENT])
def test_transient_failures_retry(exc: BaseException, kind: str) -> None:
    """Failures that may pass on a later try are retryable, with a precise error_kind."""
    error = classify(exc)
    assert (error.error_kind, error.retryable) == (kind, True)
    assert error.__cause__ is exc and "\n" not in str(error)


@pytest.mark.parametrize(("exc", "kind"), PERMANENT, ids=[k for _, k in PERMANENT])
def test_permanent_failures_fail_at_once(exc: BaseException, kind: str) -> None:
    """Failures that would repeat (and be paid again) are not retryable."""
    error = classify(exc)
    assert (error.error_kind, error.retryable) == (kind, False)
    assert "\n" not in str(error)


TURNED_AWAY = [
    httpx.ConnectError("connection refused"),
    httpx.ConnectError("[Errno -2] Name or service not known"),
    httpx.ConnectError("[SSL: WRONG_VERSION_NUMBER] wrong version number"),
    httpx.ConnectTimeout("connect timed out"),
    httpx.PoolTimeout("no connection free"),
    ConnectionRefusedError(111, "Connection refused"),
    socket.gaierror(-2, "Name or service not known"),
    http_error(429, "slow down"),
    http_error(429, "slow down", {"Retry-After": "3"}),
    http_error(503, "overloaded"),
    http_error(503, "overloaded", {"Retry-After": "5"}),
]
TAKEN = [
    httpx.ReadTimeout("read timed out"),
    httpx.WriteTimeout("write timed out"),
    httpx.RemoteProtocolError("server disconnected"),
    ConnectionResetError("reset by peer"),
    http_error(500, "internal"),
    http_error(502),
    http_error(400, '{"error": {"code": "InvalidParameter"}}'),
    RemoteError("ComfyUI KSampler failed"),
]


@pytest.mark.parametrize("exc", TURNED_AWAY, ids=[describe(e) for e in TURNED_AWAY])
def test_calls_the_provider_never_took_are_turned_away(exc: BaseException) -> None:
    """Invariant 10: a call that never reached the provider (no connection, name, TLS, connect
    timeout) or was refused before any work (429, 503, Retry-After or not) is marked turned away,
    so the worker spends no attempt on it."""
    assert classify(exc).turned_away


@pytest.mark.parametrize("exc", TAKEN, ids=[describe(e) for e in TAKEN])
def test_errors_after_the_request_went_out_count(exc: BaseException) -> None:
    """A request that was sent (a read timeout, a dropped answer, 5xx other than 503, a refused
    parameter, a failed run) may have been taken and billed: it costs an attempt as before."""
    assert not classify(exc).turned_away


def test_generation_error_passes_through_unchanged() -> None:
    """A backend's own decision is never reclassified."""
    original = GenerationError("x", error_kind="bad_output", retryable=False)
    assert classify(original) is original


def test_retry_after_seconds_and_http_date() -> None:
    """429's Retry-After is honoured whether given in seconds or as an HTTP-date."""
    assert classify(http_error(429, headers={"Retry-After": "7"})).retry_after == 7
    date = formatdate(time.time() + 30, usegmt=True)
    seconds = classify(http_error(429, headers={"Retry-After": date})).retry_after
    assert seconds is not None and 28 <= seconds <= 30
    assert classify(http_error(429)).retry_after is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("soon", None),
        ("2.5", 2.5),
        ("-4", 0.0),
        ("nan", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    """Malformed hints are ignored, past dates and negatives mean 'now'."""
    assert parse_retry_after(value) == expected


def test_messages_never_carry_the_key_or_query() -> None:
    """The error text goes to the attempts table: no credential may leak into it."""
    message = str(classify(http_error(401, "Incorrect API key provided")))
    assert "sk-secret-key" not in message and "x=1" not in message and "HTTP 401" in message


def test_classified_decorator_leaves_only_generation_errors() -> None:
    """A backend's run decorated with @classified raises nothing but GenerationError."""

    @classified
    def run() -> None:
        raise KeyError("shot_id")

    with pytest.raises(GenerationError, match="shot_id") as info:
        run()
    assert info.value.error_kind == "missing_field"
