"""What image providers receive for a shot's frames (Seedream on Ark, OpenAI images, a ComfyUI
workflow with image inputs): no spoken words in the prompt, a request for no lettering, every
reference image named, and the last frame drawn from the first."""

from __future__ import annotations

import copy
import re
from pathlib import Path

from PIL import Image
from servers.ark_fake import FakeArk
from servers.comfyui_fake import FakeComfyUI
from servers.openai_fake import FakeOpenAI

from pipeline_kit.backends import LocalContext
from pipeline_kit.backends.ark import Ark, ArkSettings
from pipeline_kit.backends.comfyui import ComfyUI
from pipeline_kit.backends.openai_images import OpenAIImages
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.backends.workflows import load_workflow
from pipeline_kit.text.graph import shot_params, shot_task_ids, sheet_task_id
from pipeline_kit.text.prompts import NO_LETTERING
from pipeline_kit.text.records import Shot

from .helpers import MakeJob, RecordingContext

WORKFLOWS = Path(__file__).resolve().parents[2] / "workflows"

TEXT = "Wren set the kettle down on the stove. “We sail at six,” said Wren. “Not before the tide,” Jory answered."
QUOTE = re.compile(r"“|”|sail at six|before the tide")


def _shot() -> Shot:
    return Shot(
        shot_id="bk-c001-s0002",
        bookcode="bk",
        chapter=1,
        seq=2,
        scene=1,
        location="kitchen",
        time_of_day="morning",
        characters=("Wren", "Jory"),
        text=TEXT,
        span_start=0,
        span_end=len(TEXT),
        dialogue=True,
        duration_s=4.0,
        prompt="Storyboard frame. Action: Wren set the kettle down on the stove.",
        video_prompt="v",
    )


def _png(path: Path, colour: tuple[int, int, int]) -> Path:
    Image.new("RGB", (640, 360), colour).save(path, format="PNG")
    return path


def _last_frame_inputs(tmp_path: Path) -> dict[str, Path]:
    """What the worker hands a last frame: its dependencies' outputs by task id and by kind."""
    shot = _shot()
    first = _png(tmp_path / "first.png", (200, 10, 10))
    wren, jory = _png(tmp_path / "wren.png", (10, 200, 10)), _png(tmp_path / "jory.png", (10, 10, 200))
    return {
        "character_sheet": wren,
        "first_frame": first,
        sheet_task_id("bk", "Wren"): wren,
        sheet_task_id("bk", "Jory"): jory,
        shot_task_ids(shot.shot_id)["first_frame"]: first,
    }


def _assert_frame_prompt(prompt: str) -> None:
    assert not QUOTE.search(prompt), prompt
    assert NO_LETTERING in prompt
    assert "Image 1 is the first frame of this shot" in prompt
    assert "image 2 is the character sheet of Wren" in prompt and "image 3 is the character sheet of Jory" in prompt


def test_ark_last_frame_is_drawn_from_the_first_with_named_references(
    ark_server: FakeArk, make_job: MakeJob, tmp_path: Path
) -> None:
    """Seedream gets the first frame as its first reference image, then the sheets, and a prompt
    that says which image is which and carries none of the shot's spoken words."""
    params = shot_params(_shot(), "en")["last_frame"]
    settings = ArkSettings(base_url=f"{ark_server.url}/api/v3", poll_s=0.01, limiter=RateLimiter(100, 100))
    job = make_job("last_frame", params, inputs=_last_frame_inputs(tmp_path))
    Ark(ark_server.api_key, settings).run(job, LocalContext())
    [bill] = ark_server.billing
    _assert_frame_prompt(bill["prompt"])
    assert len(bill["references"]) == 3


def test_openai_last_frame_is_an_edit_of_the_first_with_named_references(
    openai_server: FakeOpenAI, make_job: MakeJob, tmp_path: Path
) -> None:
    """OpenAI's edits endpoint gets the first frame first, then the sheets, and the same prompt rules."""
    params = shot_params(_shot(), "en")["last_frame"]
    job = make_job("last_frame", params, inputs=_last_frame_inputs(tmp_path))
    OpenAIImages(openai_server.url, openai_server.api_key, "gpt-image-1", 0.04, RateLimiter(100, 100)).run(
        job, LocalContext()
    )
    [bill] = openai_server.billing
    _assert_frame_prompt(bill["prompt"])
    assert bill["endpoint"].endswith("/images/edits") and len(bill["images"]) == 3


def _kontext_last_frame() -> dict[str, dict[str, object]]:
    """The shipped Flux Kontext frame workflow with two more reference images chained in: image 1
    (the first frame) is edited, images 2 and 3 (the sheets) are references beside it."""
    graph = copy.deepcopy(load_workflow(WORKFLOWS / "first_frame.json"))
    conditioning: list[object] = ["8", 0]
    for k, node in ((2, 15), (3, 20)):
        graph[str(node)] = {"class_type": "LoadImage", "inputs": {"image": f"{{{{reference_{k}}}}}"}}
        graph[str(node + 1)] = {"class_type": "FluxKontextImageScale", "inputs": {"image": [str(node), 0]}}
        graph[str(node + 2)] = {"class_type": "VAEEncode", "inputs": {"pixels": [str(node + 1), 0], "vae": ["3", 0]}}
        graph[str(node + 3)] = {
            "class_type": "ReferenceLatent",
            "inputs": {"conditioning": conditioning, "latent": [str(node + 2), 0]},
        }
        conditioning = [str(node + 3), 0]
    graph["9"]["inputs"]["conditioning"] = conditioning  # type: ignore[index]
    return graph


def test_comfyui_last_frame_workflow_edits_the_first_with_named_references(
    comfy_server: FakeComfyUI, make_job: MakeJob, tmp_path: Path
) -> None:
    """A ComfyUI workflow with image inputs gets the first frame uploaded as reference 1 and the
    sheets after it, and its prompt text says which image is which, with no spoken words."""
    inputs = _last_frame_inputs(tmp_path)
    params = shot_params(_shot(), "en")["last_frame"]
    job = make_job("last_frame", params, inputs=inputs)
    backend = ComfyUI(
        comfy_server.url,
        price=0.02,
        video_price=0.5,
        poll_s=0.02,
        limiter=RateLimiter(100, 100),
        workflows={"last_frame": _kontext_last_frame()},
    )
    backend.run(job, RecordingContext(comfy_server, timeout_s=10))
    [bill] = comfy_server.billing
    graph = bill["workflow"]
    _assert_frame_prompt(graph["7"]["inputs"]["text"])
    uploaded = [comfy_server.uploads[graph[n]["inputs"]["image"]] for n in ("4", "15", "20")]
    wren, jory = sheet_task_id("bk", "Wren"), sheet_task_id("bk", "Jory")
    assert uploaded == [inputs["first_frame"].read_bytes(), inputs[wren].read_bytes(), inputs[jory].read_bytes()]


def test_first_frame_prompt_has_no_dialogue_and_names_only_sheets() -> None:
    """The first frame's prompt keeps the action (the kettle), not the words; it references sheets only."""
    params = shot_params(_shot(), "en")
    first = params["first_frame"]
    assert "kettle" in first["prompt"] and not QUOTE.search(first["prompt"].split("\nFrame:")[1])
    assert list(first["references"].values()) == ["the character sheet of Wren", "the character sheet of Jory"]
    assert next(iter(params["last_frame"]["references"])) == shot_task_ids(_shot().shot_id)["first_frame"]
