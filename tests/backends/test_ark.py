"""The Ark backend against the strict Ark stand-in: images with references, video tasks, errors."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from PIL import Image
from servers.ark_fake import FakeArk

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.ark import Ark, ArkSettings, accepted_duration, parse_durations
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput, GenerationError

from .conftest import FRAME
from .helpers import (
    MakeJob,
    RecordingContext,
    StoppedWhilePolling,
    assert_permanent,
    assert_transient,
)

KEY = "ark-test-key"
VIDEO = {
    "bookcode": "hlm",
    "shot_id": "hlm-003-0012",
    "video_prompt": "She turns to the door",
    "duration_s": 3.4,
    "fps": 12,
    "width": 640,
    "height": 360,
    "seed": 9,
}
SHEET = {
    "bookcode": "hlm",
    "name": "林黛玉",
    "prompt": "character sheet of Lin Daiyu",
    "width": 640,
    "height": 360,
    "seed": 3,
}


def ark(server: FakeArk, key: str = KEY, **changes: object) -> Ark:
    settings = ArkSettings(
        base_url=f"{server.url}/api/v3", image_price=0.03, video_price=0.1, poll_s=0.01, limiter=RateLimiter(100, 100)
    )
    return Ark(key, ArkSettings(**{**settings.__dict__, **changes}))


def png(path: Path, size: tuple[int, int], colour: tuple[int, int, int] = (10, 20, 30)) -> Path:
    Image.new("RGB", size, colour).save(path, format="PNG")
    return path


def frames(tmp_path: Path) -> dict[str, Path]:
    return {
        "first_frame": png(tmp_path / "first.png", (640, 360)),
        "last_frame": png(tmp_path / "last.png", (640, 360), (200, 10, 10)),
    }


# -- images ------------------------------------------------------------------------------------
def test_character_sheet_is_text_to_image_at_a_size_the_model_takes(ark_server: FakeArk, make_job: MakeJob) -> None:
    """A sheet sends no `image`; the 640x360 task asks for 1280x720 (Seedream's minimum), with
    the seed and no watermark; the URL answer is fetched without the key and kept as Seedream drew
    it, 1280x720 (a provider's picture is never shrunk on the way: the film scales it)."""
    job = make_job("character_sheet", SHEET)
    output = ark(ark_server).run(job, LocalContext())
    [bill] = ark_server.billing
    assert (bill["size"], bill["seed"], bill["watermark"], bill["references"]) == ((1280, 720), 3, False, [])
    with Image.open(job.out_path) as image:
        assert (image.format, image.size) == ("PNG", (1280, 720))
    assert (output.result["width"], output.result["asked_width"]) == (1280, 640)
    assert output.cost == pytest.approx(0.03) and ark_server.leaks == []
    assert KEY not in repr(output)


def test_frame_sends_the_shot_character_sheets_as_data_uris(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """A first frame sends each distinct sheet among its inputs as a data URI, re-encoded to
    at most 1024 px a side (a 3000 px sheet is not sent raw); b64_json answers decode too."""
    sheets = {"hlm/char/a": png(tmp_path / "a.png", (3000, 1500)), "hlm/char/b": png(tmp_path / "b.png", (640, 360))}
    inputs = {**sheets, "character_sheet": sheets["hlm/char/a"]}
    job = make_job("first_frame", FRAME, inputs=inputs)
    output = ark(ark_server, response_format="b64_json").run(job, LocalContext())
    assert ark_server.billing[0]["references"] == [(1024, 512), (640, 360)]
    assert output.result["references"] == ["a.png", "b.png"]


def test_an_unreadable_sheet_fails_before_anything_is_paid(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """A dependency output that is not an image is the task's fault: permanent, nothing billed."""
    bad = tmp_path / "sheet.png"
    bad.write_text("not an image")
    job = make_job("last_frame", FRAME, inputs={"hlm/char/a": bad})
    assert_permanent(lambda: ark(ark_server).run(job, LocalContext()), "bad_input")
    assert ark_server.billing == []


# -- video -------------------------------------------------------------------------------------
def test_video_remembers_the_task_first_then_polls_and_fetches(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """The task id is persisted right after the create, before any poll; the create carries
    the prompt with an accepted duration and ratio and both frames with their roles; progress
    reaches the stages; the clip's real length is the result; cost is price x seconds."""
    ctx = RecordingContext(ark_server)
    job = make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4")
    output = ark(ark_server).run(job, ctx)
    [bill] = ark_server.billing
    assert ctx.remote_jobs == [bill["id"]] == [output.remote_job_id]
    assert ctx.seen_at_remember == [[("POST", "/api/v3/contents/generations/tasks")]]
    assert bill["frames"] == {"first_frame": (640, 360), "last_frame": (640, 360)}
    assert bill["prompt"] == "She turns to the door"
    assert (bill["commands"]["duration"], bill["commands"]["ratio"]) == ("3", "16:9")
    assert any("running" in s for s in ctx.stages)
    assert output.result["duration_s"] == pytest.approx(3.0, abs=0.2)
    assert output.cost == pytest.approx(0.3) and job.out_path.read_bytes()[4:8] == b"ftyp"


def test_takeover_repolls_the_same_task_and_pays_nothing(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """An attempt that timed out while the task ran carries the task's cost (it will be
    billed); the next attempt resumes that task by id: no second create, cost 0."""
    backend = ark(ark_server)
    first = StoppedWhilePolling()
    error = assert_transient(
        lambda: backend.run(make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4"), first), "timeout"
    )
    assert error.cost == pytest.approx(0.3) and len(ark_server.billing) == 1
    job = make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4", remote_job_id=first.remote_jobs[0])
    assert backend.quote(job) == 0
    second = LocalContext()
    output = backend.run(job, second)
    assert len(ark_server.billing) == 1 and second.remote_jobs == []
    assert (output.cost, output.result["resumed"]) == (0, True)


def test_a_task_the_service_forgot_or_failed_is_created_again(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """Only a remembered id the service no longer has alive leads to a new (paid) task."""
    job = make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4", remote_job_id="cgt-gone")
    ctx = LocalContext()
    output = ark(ark_server).run(job, ctx)
    assert len(ark_server.billing) == 1 and ctx.remote_jobs == [output.remote_job_id]
    assert output.result["resumed"] is False and output.cost > 0


def test_an_expired_video_url_is_fetched_again_from_a_fresh_poll(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """A result URL that has expired (403) is not a failure: the task is read again for a
    freshly signed URL, without a second create."""
    ark_server.script("expired_url")
    job = make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4")
    ark(ark_server).run(job, LocalContext())
    assert len(ark_server.billing) == 1 and job.out_path.stat().st_size > 0
    assert ark_server.leaks == []


@pytest.mark.parametrize(
    ("code", "kind", "retryable"),
    [
        ("OutputVideoSensitiveContentDetected", "content_policy", False),
        ("InvalidParameter", "bad_request", False),
        ("InternalServiceError", "server_error", True),
    ],
)
def test_failed_task_is_classified_by_its_error_code(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path, code: str, kind: str, retryable: bool
) -> None:
    """A task that failed at the provider is classified by `error.code`, keeps the provider's
    reason in the message, and costs nothing (the service does not bill failed tasks)."""
    ark_server.script(f"fail:{code}")
    job = make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4")
    with pytest.raises(Exception) as info:
        ark(ark_server).run(job, LocalContext())
    error = info.value
    assert (error.error_kind, error.retryable, error.cost) == (kind, retryable, 0.0)
    assert code in str(error)


def test_video_duration_becomes_one_the_model_accepts() -> None:
    """Shot lengths map to the nearest whole second allowed (range or set), ties upward."""
    allowed = parse_durations("2-12")
    assert [accepted_duration(s, allowed) for s in (0.4, 3.4, 3.5, 7.0, 15)] == [2, 3, 4, 7, 12]
    assert [accepted_duration(s, parse_durations("5,10")) for s in (3, 7.5, 8, 30)] == [5, 10, 10, 10]
    with pytest.raises(BadInput):
        parse_durations("five")


def test_video_without_its_frames_is_permanent(ark_server: FakeArk, make_job: MakeJob) -> None:
    """A clip is made from its two frames; without them nothing is created."""
    job = make_job("video", VIDEO, suffix=".mp4")
    assert_permanent(lambda: ark(ark_server).run(job, LocalContext()), "missing_input")
    assert ark_server.billing == []


# -- errors of the create call -----------------------------------------------------------------
def test_429_honours_retry_after_and_500_is_transient(ark_server: FakeArk, make_job: MakeJob) -> None:
    """429 is rate_limited with the server's Retry-After; 500 is a transient server_error."""
    ark_server.script("429:2", "500")
    backend = ark(ark_server)
    error = assert_transient(lambda: backend.run(make_job("character_sheet", SHEET), LocalContext()), "rate_limited")
    assert error.retry_after == pytest.approx(2)
    assert_transient(
        lambda: backend.run(make_job("character_sheet", SHEET), LocalContext(timeout_s=10)), "server_error"
    )
    assert ark_server.billing == []


@pytest.mark.parametrize("code", ["AccountOverdueError", "QuotaExceeded"])
def test_an_exhausted_quota_is_its_own_kind(ark_server: FakeArk, make_job: MakeJob, code: str) -> None:
    """An unpaid account (403) or a used-up quota (429) is `quota_exhausted`, not a rate limit
    nor a permission error, so the worker can pause the paid lane instead of retrying."""
    ark_server.script(f"quota:{code}")
    error = assert_transient(
        lambda: ark(ark_server).run(make_job("character_sheet", SHEET), LocalContext()), "quota_exhausted"
    )
    assert code in str(error)


def test_a_wrong_key_is_permanent_and_never_echoed(ark_server: FakeArk, make_job: MakeJob) -> None:
    """401 is a permanent `unauthorized`; the message does not contain the key."""
    error = assert_permanent(
        lambda: ark(ark_server, key="wrong-secret").run(make_job("character_sheet", SHEET), LocalContext()),
        "unauthorized",
    )
    assert "wrong-secret" not in str(error)


def test_registry_needs_the_key_and_refuses_other_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ark` without ARK_API_KEY is bad input at start; it makes images and video only."""
    monkeypatch.delenv("ARK_API_KEY", raising=False)
    with pytest.raises(BadInput, match="ARK_API_KEY"):
        get_backend("ark")
    monkeypatch.setenv("ARK_API_KEY", "sk-distinctive-42")
    backend = get_backend("ark")
    assert (backend.suffix("first_frame"), backend.suffix("video")) == (".png", ".mp4")
    assert_permanent(lambda: backend.suffix("llm"), "invalid_kind")
    assert "sk-distinctive-42" not in repr(backend)


# -- the stand-in itself -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("images/generations", {"prompt": "p", "size": "1280x720"}, 400, "MissingParameter"),
        ("images/generations", {"model": "m", "size": "1280x720"}, 400, "MissingParameter"),
        ("images/generations", {"model": "m", "prompt": "p", "size": "640x360"}, 400, "InvalidParameter"),
        ("images/generations", {"model": "m", "prompt": "p", "image": ["/tmp/sheet.png"]}, 400, "InvalidParameter"),
        (
            "contents/generations/tasks",
            {
                "model": "m",
                "content": [
                    {"type": "text", "text": "p"},
                    {"type": "image_url", "image_url": {"url": "https://x/a.png"}, "role": "middle_frame"},
                ],
            },
            400,
            "InvalidParameter",
        ),
        (
            "contents/generations/tasks",
            {"model": "m", "content": [{"type": "text", "text": "p --duration 30"}]},
            400,
            "InvalidParameter",
        ),
        ("contents/generations/tasks", {"content": [{"type": "text", "text": "p"}]}, 400, "MissingParameter"),
        (
            "contents/generations/tasks",
            {
                "model": "m",
                "content": [
                    {"type": "text", "text": "--duration 5"},
                    {"type": "image_url", "image_url": {"url": "https://x/a.png"}, "role": "first_frame"},
                ],
            },
            400,
            "MissingParameter",
        ),
    ],
)
def test_stand_in_refuses_what_ark_refuses(ark_server: FakeArk, path: str, body: dict, status: int, code: str) -> None:
    """The stand-in is strict: a request the real service refuses is refused, unbilled."""
    answer = httpx.post(f"{ark_server.url}/api/v3/{path}", json=body, headers={"Authorization": f"Bearer {KEY}"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)
    assert ark_server.billing == []


def test_stand_in_refuses_a_missing_or_wrong_key(ark_server: FakeArk) -> None:
    """No bearer key, or another one, is 401 AuthenticationError."""
    for headers in ({}, {"Authorization": "Bearer other"}):
        answer = httpx.get(f"{ark_server.url}/api/v3/contents/generations/tasks", headers=headers)
        assert (answer.status_code, answer.json()["error"]["code"]) == (401, "AuthenticationError")


# -- cancel ------------------------------------------------------------------------------------
class CanceledAt(LocalContext):
    """An operator cancels the task once the backend reports the remote task in `status`."""

    def __init__(self, status: str) -> None:
        super().__init__()
        self.status = status

    def stage(self, name: str) -> None:
        super().stage(name)
        if name.startswith(f"generating_video: {self.status}"):
            self.cancel = True


def test_canceling_while_queued_cancels_the_remote_task_and_costs_nothing(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """A clip canceled while its Ark task is still queued sends DELETE for that task, stops with
    a permanent `canceled`, and carries no cost (a cancelled task is not billed)."""
    ark_server.queue.set()
    ctx = CanceledAt("queued")
    job = make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4")
    error = assert_permanent(lambda: ark(ark_server).run(job, ctx), "canceled", "cancelled while queued")
    [task_id] = ctx.remote_jobs
    assert ark_server.cancelled == [task_id] and ark_server.tasks[task_id].status == "cancelled"
    assert ("DELETE", f"/api/v3/contents/generations/tasks/{task_id}") in ark_server.requests
    assert error.cost == 0 and not job.out_path.exists()


def test_canceling_a_running_clip_stops_without_a_delete_and_keeps_its_cost(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """Ark cannot stop a running task: the call stops (canceled), sends no DELETE, and the
    attempt keeps the clip's cost, since the service will bill it."""
    ark_server.hold.set()
    ctx = CanceledAt("running")
    error = assert_permanent(
        lambda: ark(ark_server).run(make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4"), ctx),
        "canceled",
        "left running",
    )
    assert ark_server.cancelled == [] and not [r for r in ark_server.requests if r[0] == "DELETE"]
    assert error.cost == pytest.approx(0.3)


def test_the_stand_in_cancels_only_queued_tasks(ark_server: FakeArk, make_job: MakeJob, tmp_path: Path) -> None:
    """DELETE on a running task is refused, as the real service refuses it."""
    ark_server.hold.set()
    first = StoppedWhilePolling()
    with pytest.raises(GenerationError):
        ark(ark_server).run(make_job("video", VIDEO, inputs=frames(tmp_path), suffix=".mp4"), first)
    with httpx.Client(base_url=ark_server.url, headers={"Authorization": f"Bearer {KEY}"}) as client:
        answer = client.delete(f"/api/v3/contents/generations/tasks/{first.remote_jobs[0]}")
    assert answer.status_code == 400 and ark_server.cancelled == []
