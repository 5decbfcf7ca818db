"""The OpenAI-compatible images backend against a fake server that bills each image."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image
from servers.openai_fake import FakeOpenAI

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.openai_images import OpenAIImages, provider_size
from pipeline_kit.backends.ratelimit import RateLimiter

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


def test_image_is_written_checked_and_costed(
    backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob
) -> None:
    """A 200 answer becomes a PNG of the asked size, one billed call, its price as cost."""
    job = make_job("first_frame", FRAME)
    output = backend.run(job, ctx())
    with Image.open(job.out_path) as image:
        assert image.size == (640, 360)
    assert output.cost == pytest.approx(0.04) and output.model == "fake-image-1"
    assert len(openai_server.billing) == 1
    assert openai_server.billing[0]["size"] == "640x360"


def test_url_answers_are_fetched(openai_server: FakeOpenAI, backend: OpenAIImages, make_job: MakeJob) -> None:
    """A server that answers with a url instead of b64_json still yields the image."""
    openai_server.use_urls = True
    job = make_job("character_sheet", {"name": "Alice", "prompt": "a knight", "width": 256, "height": 256})
    backend.run(job, ctx())
    with Image.open(job.out_path) as image:
        assert image.size == (256, 256)


def test_key_never_reaches_settings_results_or_repr(backend: OpenAIImages, make_job: MakeJob) -> None:
    """Outputs are stored in the database and shown in notebooks: the key must not be there."""
    output = backend.run(make_job("first_frame", FRAME), ctx())
    assert KEY not in repr(output) and KEY not in repr(backend)


def test_429_is_retryable_and_the_limiter_waits_retry_after(
    backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob
) -> None:
    """A 429 with Retry-After 1 is rate_limited (retryable) and the uid's next call is sent no
    sooner than 1 s later."""
    openai_server.script("429:1", "ok")
    error = assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx()), "rate_limited")
    assert error.retry_after == pytest.approx(1.0)
    backend.run(make_job("first_frame", FRAME), ctx())
    sent = openai_server.request_times
    assert len(sent) == 2 and sent[1] - sent[0] >= 0.95
    assert len(openai_server.billing) == 1


def test_429_with_an_http_date(backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob) -> None:
    """Retry-After given as an HTTP-date is honoured too."""
    openai_server.script("429-date:30")
    error = assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx()), "rate_limited")
    assert error.retry_after is not None and 28 <= error.retry_after <= 30


def test_500_then_200(backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob) -> None:
    """A 500 is retryable and the retry succeeds; only the successful call is billed."""
    openai_server.script("500", "ok")
    assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx()), "server_error")
    backend.run(make_job("first_frame", FRAME), ctx())
    assert len(openai_server.billing) == 1


def test_400_is_permanent(backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob) -> None:
    """A rejected request fails at once: retrying would be refused the same way."""
    openai_server.script("400:content policy violation")
    assert_permanent(
        lambda: backend.run(make_job("first_frame", FRAME), ctx()), "bad_request", "content policy violation"
    )


def test_wrong_key_is_permanent_and_not_echoed(
    openai_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, make_job: MakeJob
) -> None:
    """401 is permanent; the message names the status, never the key."""
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_URL", openai_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key")
    backend = get_backend("openai")
    error = assert_permanent(lambda: backend.run(make_job("first_frame", FRAME), ctx()), "unauthorized", "HTTP 401")
    assert "sk-wrong-key" not in str(error)


@pytest.mark.parametrize("special", ["wrong_size", "not_image"])
def test_bad_images_are_permanent_bad_output(
    backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob, special: str
) -> None:
    """An image of another size, or bytes that are no image, is never accepted as output."""
    openai_server.script(special)
    job = make_job("first_frame", FRAME)
    assert_permanent(lambda: backend.run(job, ctx()), "bad_output")
    assert not job.out_path.exists()


def test_hang_times_out_within_the_timeout(backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob) -> None:
    """A server that never answers costs the caller its timeout (0.5 s), not more: a
    retryable timeout."""
    openai_server.script("hang:5")
    started = time.monotonic()
    assert_transient(lambda: backend.run(make_job("first_frame", FRAME), ctx(0.5)), "timeout")
    assert time.monotonic() - started < 1.5


def test_contract_errors_before_any_call(backend: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob) -> None:
    """A missing prompt or a kind it cannot make fails at once, and nothing is paid."""
    assert_permanent(lambda: backend.run(make_job("first_frame", {"shot_id": "s"}), ctx()), "missing_field", "prompt")
    assert_permanent(lambda: backend.run(make_job("video", FRAME), ctx()), "invalid_kind")
    assert openai_server.billing == [] and openai_server.requests == []


@pytest.fixture
def gpt_image(openai_server: FakeOpenAI) -> OpenAIImages:
    """The backend with OpenAI's own GPT image model against the strict fake."""
    return OpenAIImages(openai_server.url, KEY, "gpt-image-1", 0.04, RateLimiter(100, 100))


@pytest.fixture
def sheets(tmp_path: Path) -> dict[str, Path]:
    """Two character sheets as the worker hands them (by kind and by task id)."""
    lin, bao = tmp_path / "lin.png", tmp_path / "bao.jpg"
    Image.new("RGB", (96, 128), (200, 20, 20)).save(lin)
    Image.new("RGB", (96, 128), (20, 200, 20)).save(bao)
    return {"character_sheet": lin, "sheet-lin": lin, "sheet-bao": bao}


def test_a_frame_with_character_sheets_is_an_edit_of_them(
    gpt_image: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob, sheets: dict[str, Path]
) -> None:
    """A first frame sends each of the shot's sheets once as an `image[]` part of a multipart
    edit, at a size the model accepts; the answer is cut to the task's 16:9 shape at the model's
    scale (1536x864: never shrunk to the task's 640x360, the film scales it)."""
    job = make_job("first_frame", FRAME, inputs=sheets)
    output = gpt_image.run(job, ctx())
    bill = openai_server.billing[0]
    assert bill["endpoint"] == "/v1/images/edits" and bill["size"] == "1536x1024"
    assert bill["images"] == [sheets["sheet-lin"].read_bytes(), sheets["sheet-bao"].read_bytes()]
    with Image.open(job.out_path) as image:
        assert image.size == (1536, 864)
    assert output.result["references"] == ["lin.png", "bao.jpg"] and output.cost == 0.04


def test_a_sheet_or_a_frame_without_characters_is_a_generation(
    gpt_image: OpenAIImages, openai_server: FakeOpenAI, make_job: MakeJob, sheets: dict[str, Path]
) -> None:
    """A character sheet is drawn from its prompt even with inputs; so is a frame without any;
    GPT image models get no response_format (the real API refuses it)."""
    gpt_image.run(
        make_job("character_sheet", {"prompt": "Lin Daiyu", "width": 512, "height": 768}, inputs=sheets), ctx()
    )
    gpt_image.run(make_job("last_frame", FRAME), ctx())
    assert [(b["endpoint"], b["size"]) for b in openai_server.billing] == [
        ("/v1/images/generations", "1024x1536"),
        ("/v1/images/generations", "1536x1024"),
    ]


@pytest.mark.parametrize(
    ("model", "size", "asked"),
    [
        ("gpt-image-1", (640, 360), (1536, 1024)),
        ("gpt-image-1", (360, 640), (1024, 1536)),
        ("gpt-image-1", (512, 512), (1024, 1024)),
        ("dall-e-3", (640, 360), (1792, 1024)),
        ("dall-e-2", (256, 256), (256, 256)),
        ("dall-e-2", (300, 300), (512, 512)),
        ("dall-e-2", (640, 360), (1024, 1024)),
        ("some-local-model", (640, 360), (640, 360)),
    ],
)
def test_only_sizes_the_model_accepts_are_asked_for(model: str, size: tuple[int, int], asked: tuple[int, int]) -> None:
    """The accepted size nearest in shape (the smallest that covers the task among equals); a
    model outside OpenAI's table is asked for the task's size."""
    assert provider_size(model, size) == asked


def test_dall_e_3_draws_the_nearest_shape_and_refuses_references(
    openai_server: FakeOpenAI, make_job: MakeJob, sheets: dict[str, Path]
) -> None:
    """DALL-E 3 is asked for 1792x1024 (with b64_json) for a 640x360 frame, and its answer cut to
    16:9 at its scale; a frame with sheets is refused before anything is sent, since it cannot edit."""
    backend = OpenAIImages(openai_server.url, KEY, "dall-e-3", 0.04, RateLimiter(100, 100))
    job = make_job("first_frame", FRAME)
    backend.run(job, ctx())
    with Image.open(job.out_path) as image:
        assert image.size == (1792, 1008)
    assert openai_server.billing[0]["size"] == "1792x1024"
    assert_permanent(
        lambda: backend.run(make_job("first_frame", FRAME, inputs=sheets), ctx()), "unsupported_model", "dall-e-3"
    )
    assert len(openai_server.requests) == 1


def test_the_stand_in_refuses_what_openai_refuses(openai_server: FakeOpenAI) -> None:
    """A size the model does not take, response_format for a GPT image model, an edit that is
    not multipart or has no image[]: 400, nothing billed."""
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=openai_server.url, headers=headers) as client:
        base = {"model": "gpt-image-1", "prompt": "p", "size": "1024x1024"}
        for body in ({**base, "size": "640x360"}, {**base, "response_format": "b64_json"}, {**base, "model": ""}):
            assert client.post("/v1/images/generations", json=body).status_code == 400
        assert client.post("/v1/images/edits", json=base).status_code == 400
        assert client.post("/v1/images/edits", data=base, files=[("image", ("a.png", b"x"))]).status_code == 400
        assert (
            client.post("/v1/images/edits", data=base, files=[("image[]", ("a.png", b"not an image"))]).status_code
            == 400
        )
    assert openai_server.billing == []


def test_the_image_price_comes_from_image_price_else_price(
    backend: OpenAIImages, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profile's `image_price` (PIPELINE_KIT_OPENAI_IMAGE_PRICE) wins over the older `_PRICE`."""
    assert backend.price == 0.04
    monkeypatch.setenv("PIPELINE_KIT_OPENAI_IMAGE_PRICE", "0.07")
    assert get_backend("openai").price == 0.07  # type: ignore[attr-defined]
