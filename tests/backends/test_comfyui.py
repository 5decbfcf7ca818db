"""The ComfyUI backend against a fake ComfyUI: submit, remember, poll, fetch, resume."""

from __future__ import annotations

import time

import pytest
from PIL import Image
from servers.comfyui_fake import FakeComfyUI

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.comfyui import ComfyUI
from pipeline_kit.backends.ratelimit import RateLimiter

from .conftest import FRAME
from .helpers import MakeJob, RecordingContext, assert_permanent, assert_transient


def comfy(server: FakeComfyUI) -> ComfyUI:
    return ComfyUI(server.url, price=0.01, poll_s=0.02, limiter=RateLimiter(100, 100))


def test_run_submits_remembers_at_once_and_fetches(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """The prompt id is persisted right after the submit, before any polling, so a takeover
    can resume; the image is fetched, checked and costed once."""
    ctx = RecordingContext(comfy_server, timeout_s=5.0)
    job = make_job("first_frame", FRAME)
    output = comfy(comfy_server).run(job, ctx)
    assert ctx.remote_jobs == [output.remote_job_id]
    seen = [[r for r in requests if r[1] != "/ws"] for requests in ctx.seen_at_remember]
    assert seen == [[("POST", "/prompt")]]
    with Image.open(job.out_path) as image:
        assert image.size == (640, 360)
    assert output.cost == pytest.approx(0.01) and len(comfy_server.billing) == 1
    workflow = comfy_server.billing[0]["workflow"]
    nodes = {node["class_type"]: node["inputs"] for node in workflow.values()}
    assert nodes["KSampler"]["seed"] == 7
    assert (nodes["EmptyLatentImage"]["width"], nodes["EmptyLatentImage"]["height"]) == (640, 360)
    assert FRAME["prompt"] in [n["inputs"].get("text") for n in workflow.values()]


def test_takeover_resumes_without_paying_again(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """An attempt that timed out while the run was going is resumed by the next attempt
    from its remote_job_id: no second submit, no second charge, cost 0."""
    comfy_server.polls_to_finish = 1000
    backend = comfy(comfy_server)
    first = LocalContext(timeout_s=0.3)
    assert_transient(lambda: backend.run(make_job("first_frame", FRAME), first), "timeout")
    assert len(first.remote_jobs) == 1 and len(comfy_server.billing) == 1
    prompt_id = first.remote_jobs[0]
    comfy_server.runs[prompt_id].polls_left = 2
    second = LocalContext(timeout_s=5)
    job = make_job("first_frame", FRAME, remote_job_id=prompt_id)
    output = backend.run(job, second)
    assert len(comfy_server.billing) == 1 and output.cost == 0
    assert second.remote_jobs == [] and output.remote_job_id == prompt_id
    assert output.result["resumed"] is True
    assert [r for r in comfy_server.requests if r[0] == "POST"] == [("POST", "/prompt")]


def test_a_run_the_server_forgot_is_submitted_again(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """Only when the server knows nothing of the remembered id (restarted) is it paid again,
    and the new id is remembered."""
    ctx = LocalContext()
    job = make_job("first_frame", FRAME, remote_job_id="lost-123")
    output = comfy(comfy_server).run(job, ctx)
    assert len(comfy_server.billing) == 1 and output.result["resubmitted"] is True
    assert ctx.remote_jobs == [output.remote_job_id] != ["lost-123"]


@pytest.mark.parametrize(
    ("message", "kind", "retryable"),
    [
        ("CUDA out of memory. Tried to allocate 2.00 GiB", "out_of_memory", True),
        ("Value not in list: ckpt_name: 'sdxl.safetensors' not in []", "unknown_model", False),
        ("mat1 and mat2 shapes cannot be multiplied", "remote_error", True),
    ],
)
def test_execution_errors_are_classified(
    comfy_server: FakeComfyUI, make_job: MakeJob, message: str, kind: str, retryable: bool
) -> None:
    """A run that fails inside ComfyUI is classified by its exception message."""
    comfy_server.script(f"exec_error:{message}")
    check = assert_transient if retryable else assert_permanent
    check(lambda: comfy(comfy_server).run(make_job("first_frame", FRAME), LocalContext()), kind)


def test_submit_failures(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """500 on submit is retryable, 400 (invalid workflow) is permanent; neither is billed."""
    comfy_server.script("500", "400:prompt_outputs_failed_validation")
    backend = comfy(comfy_server)
    assert_transient(lambda: backend.run(make_job("first_frame", FRAME), LocalContext()), "server_error")
    assert_permanent(lambda: backend.run(make_job("first_frame", FRAME), LocalContext()), "bad_request")
    assert comfy_server.billing == []


def test_wrong_size_image_is_permanent(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """An image of another size than asked is never accepted."""
    comfy_server.script("wrong_size")
    assert_permanent(lambda: comfy(comfy_server).run(make_job("first_frame", FRAME), LocalContext()), "bad_output")


def test_sizes_must_be_multiples_of_8(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """Stable Diffusion latents are 1/8 size: 641 wide fails before anything is sent."""
    job = make_job("first_frame", {**FRAME, "width": 641})
    assert_permanent(lambda: comfy(comfy_server).run(job, LocalContext()), "unsupported_size")
    assert comfy_server.requests == []


def test_hang_on_submit_times_out(comfy_server: FakeComfyUI, make_job: MakeJob) -> None:
    """A submit that never answers ends at the timeout as a retryable timeout."""
    comfy_server.script("hang:5")
    started = time.monotonic()
    assert_transient(
        lambda: comfy(comfy_server).run(make_job("first_frame", FRAME), LocalContext(timeout_s=0.5)), "timeout"
    )
    assert time.monotonic() - started < 1.5


def test_registry_reads_the_environment(comfy_server: FakeComfyUI, monkeypatch: pytest.MonkeyPatch) -> None:
    """`comfyui` is configured by PIPELINE_KIT_COMFYUI_* variables."""
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_URL", comfy_server.url + "/")
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_CKPT", "sdxl.safetensors")
    backend = get_backend("comfyui")
    assert isinstance(backend, ComfyUI)
    assert (backend.base_url, backend.ckpt) == (comfy_server.url, "sdxl.safetensors")
