"""The user's own ComfyUI workflows: placeholders, uploads, any output key, video, websocket."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from PIL import Image
from servers.comfyui_fake import FakeComfyUI
from servers.scripted import png_bytes

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.clip import clip_seconds
from pipeline_kit.backends.comfyui import ComfyUI, saved_file, wan_frames
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.backends.routing import Router, Routing
from pipeline_kit.backends.workflows import load_workflows, placeholders, substitute
from pipeline_kit.errors import BadInput, GenerationError

from .conftest import FRAME
from .helpers import MakeJob, RecordingContext, StoppedWhilePolling, assert_permanent

EXAMPLES = Path(__file__).resolve().parents[2] / "workflows"
CLIP = {**FRAME, "video_prompt": "she turns to the window", "duration_s": 2.0, "fps": 8, "width": 832, "height": 480}


def comfy(server: FakeComfyUI, **kwargs: object) -> ComfyUI:
    return ComfyUI(
        server.url,
        price=0.02,
        video_price=0.5,
        poll_s=0.02,
        limiter=RateLimiter(100, 100),
        workflows=load_workflows(EXAMPLES),
        **kwargs,
    )  # type: ignore[arg-type]


def png(path: Path, colour: tuple[int, int, int]) -> Path:
    Image.new("RGB", (64, 96), colour).save(path)
    return path


@pytest.fixture
def sheets(tmp_path: Path) -> dict[str, Path]:
    """Inputs as the worker hands them: by kind and by task id (one file may appear twice)."""
    one, two = png(tmp_path / "lin.png", (200, 10, 10)), png(tmp_path / "bao.png", (10, 200, 10))
    return {"character_sheet": one, "sheet-lin": one, "sheet-bao": two}


@pytest.fixture
def frames(tmp_path: Path) -> dict[str, Path]:
    first, last = png(tmp_path / "first.png", (1, 2, 3)), png(tmp_path / "last.png", (9, 8, 7))
    return {"first_frame": first, "last_frame": last, "f1": first, "f2": last}


def test_shipped_examples_load_and_fill_into_workflows_the_server_accepts() -> None:
    """The examples in workflows/ are API format, use only known placeholders, and once filled
    (numbers as numbers, images as uploaded names) pass the stand-in's validation."""
    found = load_workflows(EXAMPLES)
    assert set(found) == {"first_frame", "video"}
    assert "reference_1" in placeholders(found["first_frame"])
    assert {"first_frame", "last_frame", "frames"} <= placeholders(found["video"])
    server = FakeComfyUI()
    server.uploads.update({"pipeline_kit/a.png": b"", "pipeline_kit/b.png": b""})
    values = {
        "prompt": "a hall at dusk",
        "negative_prompt": "blur",
        "seed": 7,
        "width": 832,
        "height": 480,
        "fps": 16,
        "frames": 81,
        "duration_s": 5.0,
        "reference_1": "pipeline_kit/a.png",
        "first_frame": "pipeline_kit/a.png",
        "last_frame": "pipeline_kit/b.png",
    }
    for kind, workflow in found.items():
        filled = substitute(workflow, values, kind)
        assert "{{" not in json.dumps(filled)
        assert server.node_errors(filled) == {}, kind
    wan = substitute(found["video"], values, "video")
    assert wan["8"]["inputs"]["length"] == 81 and wan["10"]["inputs"]["seed"] == 7
    assert server.node_errors(found["video"]) != {}  # unfilled, it is refused


def test_frame_uploads_the_characters_sheet_and_runs_the_users_workflow(
    comfy_server: FakeComfyUI, make_job: MakeJob, sheets: dict[str, Path]
) -> None:
    """A first frame with a reference placeholder uploads the shot's first character sheet as a
    multipart form, fills the LoadImage with the stored name, and only then pays for one run."""
    ctx = RecordingContext(comfy_server, timeout_s=10)
    job = make_job("first_frame", FRAME, inputs=sheets)
    output = comfy(comfy_server).run(job, ctx)
    assert comfy_server.uploads == {"pipeline_kit/t1_reference_1.png": sheets["sheet-lin"].read_bytes()}
    workflow = comfy_server.billing[0]["workflow"]
    assert workflow["4"]["inputs"]["image"] == "pipeline_kit/t1_reference_1.png"
    assert workflow["7"]["inputs"]["text"] == FRAME["prompt"]
    assert (workflow["11"]["inputs"]["width"], workflow["12"]["inputs"]["seed"]) == (640, 7)
    seen = [r for r in ctx.seen_at_remember[0] if r[1] != "/ws"]
    assert seen == [("POST", "/upload/image"), ("POST", "/prompt")]
    with Image.open(job.out_path) as image:
        assert image.size == (640, 360)
    assert output.cost == pytest.approx(0.02) and len(comfy_server.billing) == 1
    assert output.model == "first_frame.json" and output.result["file"].endswith(".png")


def test_video_from_first_and_last_frame_is_an_mp4_of_its_real_length(
    comfy_server: FakeComfyUI, make_job: MakeJob, frames: dict[str, Path]
) -> None:
    """The Wan workflow gets both frames uploaded and 4n+1 frames; its MP4 (under the "gifs"
    key, as VideoHelperSuite names it) is fetched with /view and its real length recorded,
    even when the clip is shorter than asked."""
    backend = comfy(comfy_server)
    assert backend.suffix("video") == ".mp4"
    comfy_server.script("ok", "short_clip")
    job = make_job("video", CLIP, inputs=frames, suffix=".mp4")
    output = backend.run(job, LocalContext(timeout_s=30))
    workflow = comfy_server.billing[0]["workflow"]
    assert workflow["6"]["inputs"]["image"] == "pipeline_kit/t1_first_frame.png"
    assert workflow["7"]["inputs"]["image"] == "pipeline_kit/t1_last_frame.png"
    assert workflow["8"]["inputs"]["length"] == wan_frames(2.0, 8) == 17
    assert workflow["4"]["inputs"]["text"] == "she turns to the window"
    assert clip_seconds(job.out_path) == (17, pytest.approx(17 / 8, abs=0.01))
    assert output.result["duration_s"] == pytest.approx(17 / 8, abs=0.01)
    assert output.cost == pytest.approx(1.0)  # 2 s at 0.5 a second
    short = make_job("video", CLIP, inputs=frames, suffix=".mp4")
    assert backend.run(short, LocalContext(timeout_s=30)).result["duration_s"] == pytest.approx(8 / 8, abs=0.01)


def test_progress_comes_from_the_websocket_else_from_polling(make_job: MakeJob, frames: dict[str, Path]) -> None:
    """With the websocket answering, step progress reaches the heartbeat stage and the history
    is read only when the server says the run is over; without it, polling alone finishes."""
    with FakeComfyUI(polls_to_finish=30) as server:
        ctx = LocalContext(timeout_s=30)
        comfy(server).run(make_job("video", CLIP, inputs=frames, suffix=".mp4"), ctx)
        assert "generating_video: 15/30" in ctx.stages
        assert server.history_polls <= 3
    with FakeComfyUI(polls_to_finish=30, websocket=False) as server:
        ctx = LocalContext(timeout_s=30)
        output = comfy(server).run(make_job("video", CLIP, inputs=frames, suffix=".mp4"), ctx)
        assert server.history_polls >= 30 and output.result["frames"] == 17
        assert not any("/30" in stage for stage in ctx.stages)


def test_a_video_takeover_resumes_without_uploading_or_paying_again(
    comfy_server: FakeComfyUI, make_job: MakeJob, frames: dict[str, Path]
) -> None:
    """A remembered prompt id is followed to its clip: no upload, no second /prompt, cost 0."""
    comfy_server.polls_to_finish = 10_000
    backend = comfy(comfy_server)
    first = StoppedWhilePolling(timeout_s=30)
    with pytest.raises(GenerationError, match="gave up"):
        backend.run(make_job("video", CLIP, inputs=frames, suffix=".mp4"), first)
    [prompt_id] = first.remote_jobs
    comfy_server.runs[prompt_id].polls_left = 1
    comfy_server.requests.clear()
    job = make_job("video", CLIP, inputs=frames, suffix=".mp4", remote_job_id=prompt_id)
    output = backend.run(job, LocalContext(timeout_s=30))
    assert (output.cost, output.result["resumed"], len(comfy_server.billing)) == (0, True, 1)
    assert not [r for r in comfy_server.requests if r[0] == "POST"]


def test_a_placeholder_the_task_cannot_fill_fails_before_anything_is_paid(
    comfy_server: FakeComfyUI, make_job: MakeJob
) -> None:
    """A frame workflow that needs a character sheet, for a shot without one, is permanent."""
    job = make_job("first_frame", FRAME, inputs={})
    assert_permanent(lambda: comfy(comfy_server).run(job, LocalContext()), "missing_input", "reference_1")
    assert comfy_server.billing == [] and comfy_server.uploads == {}


def test_the_stand_in_is_strict_about_uploads_and_workflows(comfy_server: FakeComfyUI) -> None:
    """What the real server refuses, the stand-in refuses: a body that is not a multipart form,
    a form without `image`, a LoadImage naming no upload, a node class it does not have."""
    with httpx.Client(base_url=comfy_server.url) as client:
        assert client.post("/upload/image", json={"image": "x"}).status_code == 400
        assert client.post("/upload/image", data={"type": "input"}, files={"other": ("a.png", b"x")}).status_code == 400
        answer = client.post(
            "/upload/image", data={"type": "input", "subfolder": "s"}, files={"image": ("a.png", png_bytes((8, 8)))}
        )
        assert answer.json() == {"name": "a.png", "subfolder": "s", "type": "input"}
        bad = {
            "1": {"class_type": "LoadImage", "inputs": {"image": "s/missing.png"}},
            "2": {"class_type": "NoSuchNode", "inputs": {}},
        }
        refused = client.post("/prompt", json={"prompt": bad, "client_id": "c"})
        assert refused.status_code == 400 and set(refused.json()["node_errors"]) == {"1", "2"}
    assert comfy_server.billing == []


def test_saved_file_takes_any_output_key_and_prefers_saved_over_previews() -> None:
    """`videos`, `gifs` or `images`: the file with the wanted suffix, an output before a temp."""
    entry = {
        "outputs": {
            "3": {"images": [{"filename": "p.png", "subfolder": "", "type": "temp"}]},
            "4": {"videos": [{"filename": "c.mp4", "subfolder": "v", "type": "output"}]},
            "5": {"images": [{"filename": "s.png", "subfolder": "o", "type": "output"}], "animated": [True]},
        }
    }
    assert saved_file(entry, (".mp4",)) == {"filename": "c.mp4", "subfolder": "v", "type": "output"}
    assert saved_file(entry, (".png",))["filename"] == "s.png"  # type: ignore[index]
    assert saved_file(entry, (".webm",)) is None


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('{"nodes": [], "links": []}', "UI workflow"),
        ('{"1": {"class_type": "X", "inputs": {"a": "{{mood}}"}}}', "mood"),
        ("[1, 2]", "API-format"),
        ("{not json", "workflow"),
    ],
)
def test_bad_workflow_files_are_refused_at_start(tmp_path: Path, body: str, says: str) -> None:
    """A UI export, an unknown placeholder or a file that is not a workflow: BadInput, one line."""
    (tmp_path / "video.json").write_text(body)
    with pytest.raises(BadInput, match=says):
        load_workflows(tmp_path)


def test_a_kind_with_neither_workflow_nor_built_in_graph_is_refused_at_worker_start(
    comfy_server: FakeComfyUI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """video=comfyui needs a video.json: without one the routing is refused at start; with the
    examples' folder it starts, and image kinds without a workflow keep the built-in graph."""
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_URL", comfy_server.url)
    routing = Routing.parse("character_sheet=comfyui,first_frame=comfyui,video=comfyui")
    with pytest.raises(BadInput, match="cannot make kind 'video'"):
        Router(routing).check()
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_WORKFLOWS", str(EXAMPLES))
    router = Router(routing)
    router.check()
    backend = router.backend_for("video")
    assert isinstance(backend, ComfyUI) and backend.describe("video")["model"] == "video.json"
    assert backend.describe("character_sheet")["model"] == backend.ckpt
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_WORKFLOWS", str(tmp_path / "nowhere"))
    with pytest.raises(BadInput, match="not a folder"):
        get_backend("comfyui")


def test_prices_per_image_and_per_video_second_come_from_the_environment(
    make_job: MakeJob, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profile's `image_price` and `video_price` (PIPELINE_KIT_COMFYUI_*) price each run: an
    image at its price, a clip at its seconds times the video price, a resumed run at nothing;
    the older `_PRICE` still prices images when `_IMAGE_PRICE` is not set."""
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_PRICE", "0.5")
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_VIDEO_PRICE", "0.25")
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_WORKFLOWS", str(EXAMPLES))
    backend = get_backend("comfyui")
    assert backend.quote(make_job("first_frame", FRAME)) == 0.5  # type: ignore[attr-defined]
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_IMAGE_PRICE", "0.02")
    backend = get_backend("comfyui")
    assert backend.quote(make_job("character_sheet", FRAME)) == 0.02  # type: ignore[attr-defined]
    assert backend.quote(make_job("video", CLIP)) == 0.5  # type: ignore[attr-defined]
    assert backend.quote(make_job("video", CLIP, remote_job_id="p1")) == 0  # type: ignore[attr-defined]
