"""The OpenAI-compatible images backend against a fake server that bills each image."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from PIL import Image
from servers.openai_fake import FakeOpenAI

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.openai_images import OpenAIImages

from .conftest import FRAME
from .helpers import MakeJob, assert_permanent, assert_transient

KEY = "sk-test-secret"


@pytest.fixture
def backend(openai_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIImages]:
    """The registry's `openai` backend, configured from the environment to use the fake."""
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_URL", openai_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_MODEL", "fake-image-1")
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_PRICE", "0.04")
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_RATE", "100")
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_BURST", "100")
    backend = get_backend("openai")
    assert isinstance(backend, OpenAIImages)
    yield backend


def ctx(timeout_s: float = 5.0) -> LocalContext:
    return LocalContext(timeout_s=timeout_s, uid="worker-a")


def test_image_is_written_checked_and_costed(backend: OpenAIImages, openai_server: FakeOpenAI,
                                             make_job: MakeJob) -> None:
    """A 200 answer becomes a PNG of the asked size, one billed call, its price as cost."""
    job = make_job("first_frame", FRAME)
    output = backend.run(job, ctx())
    with Image.open(job.out_path) as image:
        assert image.size == (640, 360)
    assert output.cost == pytest.approx(0.04) and output.model == "fake-image-1"
    assert len(openai_server.billing) == 1
    assert openai_server.billing[0]["size"] == "640x360"


def test_url_answers_are_fetched(openai_server: FakeOpenAI, backend: OpenAIImages,
                                 make_job: MakeJob) -> None:
    """A server that answers with a url instead of b64_json still yields the image."""
    openai_server.use_urls = True
    job = make_job("character_sheet", {"name": "Alice", "prompt": "a knight", "width": 256,
                                       "height": 256})
    backend.run(job, ctx())
    with Image.open(job.out_path) as image:
        assert image.size == (256, 256)


def test_key_never_reaches_settings_results_or_repr(backend: OpenAIImages,
                                                    make_job: MakeJob) -> None:
    """Outputs are stored in the database and shown in notebooks: the key must not be there."""
    output = backend.run(make_job("first_frame", FRAME), ctx())
    assert KEY not in repr(output) and KEY not in repr(backend)


def test_429_is_retryable_and_the_limiter_waits_retry_after(
        backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob) -> None:
    """A 429 with Retry-After 1 is rate_limited (retryable) and the uid's next call is sent no
    sooner than 1 s later."""
    openai_server.script("429:1", "ok")
    error = assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx()),
                             "rate_limited")
    assert error.retry_after == pytest.approx(1.0)
    backend.run(make_job("first_frame", FRAME), ctx())
    sent = openai_server.request_times
    assert len(sent) == 2 and sent[1] - sent[0] >= 0.95
    assert len(openai_server.billing) == 1


def test_429_with_an_http_date(backend: OpenAIImages, openai_server: FakeOpenAI,
                               make_job: MakeJob) -> None:
    """Retry-After given as an HTTP-date is honoured too."""
    openai_server.script("429-date:30")
    error = assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx()),
                             "rate_limited")
    assert error.retry_after is not None and 28 <= error.retry_after <= 30


def test_500_then_200(backend: OpenAIImages, openai_server: FakeOpenAI,
                      make_job: MakeJob) -> None:
    """A 500 is retryable and the retry succeeds; only the successful call is billed."""
    openai_server.script("500", "ok")
    assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx()), "server_error")
    backend.run(make_job("first_frame", FRAME), ctx())
    assert len(openai_server.billing) == 1


def test_400_is_permanent(backend: OpenAIImages, openai_server: FakeOpenAI,
                          make_job: MakeJob) -> None:
    """A rejected request fails at once: retrying would be refused the same way."""
    openai_server.script("400:content policy violation")
    assert_permanent(lambda: backend.run(make_job("first_frame", FRAME), ctx()), "bad_request",
                     "content policy violation")


def test_wrong_key_is_permanent_and_not_echoed(openai_server: FakeOpenAI,
                                               monkeypatch: pytest.MonkeyPatch,
                                               make_job: MakeJob) -> None:
    """401 is permanent; the message names the status, never the key."""
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_URL", openai_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key")
    backend = get_backend("openai")
    error = assert_permanent(lambda: backend.run(make_job("first_frame", FRAME), ctx()),
                             "unauthorized", "HTTP 401")
    assert "sk-wrong-key" not in str(error)


@pytest.mark.parametrize("special", ["wrong_size", "not_image"])
def test_bad_images_are_permanent_bad_output(backend: OpenAIImages, openai_server: FakeOpenAI,
                                             make_job: MakeJob, special: str) -> None:
    """An image of another size, or bytes that are no image, is never accepted as output."""
    openai_server.script(special)
    job = make_job("first_frame", FRAME)
    assert_permanent(lambda: backend.run(job, ctx()), "bad_output")
    assert not job.out_path.exists()


def test_hang_times_out_within_the_timeout(backend: OpenAIImages, openai_server: FakeOpenAI,
                                           make_job: MakeJob) -> None:
    """A server that never answers costs the caller its timeout (0.5 s), not more: a
    retryable timeout."""
    openai_server.script("hang:5")
    started = time.monotonic()
    assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx(0.5)), "timeout")
    assert time.monotonic() - started < 1.5


def test_contract_errors_before_any_call(backend: OpenAIImages, openai_server: FakeOpenAI,
                                         make_job: MakeJob) -> None:
    """A missing prompt or a kind it cannot make fails at once, and nothing is paid."""
    assert_permanent(lambda: backend.run(make_job("first_frame", {"shot_id": "s"}), ctx()),
                     "missing_field", "prompt")
    assert_permanent(lambda: backend.run(make_job("video", FRAME), ctx()), "invalid_kind")
    assert openai_server.billing == [] and openai_server.requests == []
