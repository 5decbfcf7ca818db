"""ComfyUI over its HTTP protocol: upload inputs, submit a workflow, follow it, fetch its output.

What ComfyUI's server does, and this module relies on:
- `POST /upload/image` takes a multipart form: the file as `image`, and `type` (input), `subfolder`
  and `overwrite` ("true"); it answers `{"name", "subfolder", "type"}`. A LoadImage node takes
  the stored file as `subfolder/name`.
- `POST /prompt` takes `{"prompt": workflow, "client_id"}` and answers `{"prompt_id", "number",
  "node_errors"}` (400 with `error` and `node_errors` when the workflow does not validate).
- `GET /history/{id}` answers `{}` until the run is over, then `{id: {"outputs": {node: {KEY:
  [{"filename", "subfolder", "type"}]}}, "status"}}`, where KEY is whatever the saving node
  calls it (`images`, `gifs` for VideoHelperSuite's combine node, `videos`); `GET /view` with
  `filename`, `subfolder`, `type` returns the file. `GET /queue` lists runs not yet over.
- `/ws?clientId=` streams the client's progress (see comfyui_ws.py).

The prompt id goes to `ctx.remember_remote_job` before anything else, so a worker that takes the
task over resumes that run instead of paying for a second one. Only a run the server no longer
knows (neither in its history nor its queue) is submitted again.

Each kind is made with the user's own workflow from PIPELINE_KIT_COMFYUI_WORKFLOWS (see
workflows.py) when there is one; image kinds without one use the built-in text-to-image graph.

Configuration: PIPELINE_KIT_COMFYUI_URL (default http://127.0.0.1:8188),
PIPELINE_KIT_COMFYUI_WORKFLOWS (a folder), PIPELINE_KIT_COMFYUI_CKPT (checkpoint of the
built-in graph), PIPELINE_KIT_COMFYUI_STEPS (default 20), PIPELINE_KIT_COMFYUI_IMAGE_PRICE (per
image, default 0; `_PRICE` is read when it is not set), PIPELINE_KIT_COMFYUI_VIDEO_PRICE (per
second of video, default 0),
PIPELINE_KIT_COMFYUI_RATE/_BURST.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import Deadline, http_client, json_body, send, send_paid
from pipeline_kit.backends.classify import RemoteError, classified, classify
from pipeline_kit.backends.clip import save_checked_mp4
from pipeline_kit.backends.comfyui_ws import Progress
from pipeline_kit.backends.images import save_checked_png, save_kept_png
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.backends.references import (
    image_inputs,
    input_bytes,
    labelled_references,
    reference_note,
    with_references,
)
from pipeline_kit.backends.workflows import (
    Workflow,
    is_image_name,
    load_workflows,
    placeholders,
    reference_index,
    substitute,
)
from pipeline_kit.errors import BadInput

IMAGES = frozenset(kinds.names(media=kinds.Media.IMAGE))  # made with the built-in graph unless a workflow says
CLIPS = frozenset(kinds.names(kinds.Role.CLIP))

DEFAULT_URL = "http://127.0.0.1:8188"
DEFAULT_CKPT = "v1-5-pruned-emaonly.safetensors"
NEGATIVE = "blurry, low quality, watermark, text"


def text_to_image(
    prompt: str, negative: str, size: tuple[int, int], seed: int, *, ckpt: str, steps: int, prefix: str
) -> dict[str, Any]:
    """A minimal text-to-image workflow in ComfyUI's API format."""
    width, height = size
    return {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": ckpt}},
        "5": {"class_type": "EmptyLatentImage", "inputs": {"width": width, "height": height, "batch_size": 1}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": prompt, "clip": ["4", 1]}},
        "7": {"class_type": "CLIPTextEncode", "inputs": {"text": negative, "clip": ["4", 1]}},
        "3": {
            "class_type": "KSampler",
            "inputs": {
                "seed": seed,
                "steps": steps,
                "cfg": 7.0,
                "sampler_name": "euler",
                "scheduler": "normal",
                "denoise": 1.0,
                "model": ["4", 0],
                "positive": ["6", 0],
                "negative": ["7", 0],
                "latent_image": ["5", 0],
            },
        },
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
        "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": prefix, "images": ["8", 0]}},
    }


def execution_error(entry: dict[str, Any]) -> RemoteError:
    """The failure a history entry with status "error" reports, as one line."""
    for event, data in entry.get("status", {}).get("messages", []):
        if event == "execution_error" and isinstance(data, dict):
            return RemoteError(
                f"ComfyUI {data.get('node_type', 'node')} failed: "
                f"{data.get('exception_type', '')} "
                f"{data.get('exception_message', '')}".strip()
            )
    return RemoteError("ComfyUI reported an execution error without details")


def wan_frames(seconds: float, fps: int) -> int:
    """Frames for a clip of `seconds` at `fps`, as the 4n+1 count Wan-family video models take."""
    return 4 * max(1, round(seconds * fps / 4)) + 1


def saved_file(entry: dict[str, Any], suffixes: tuple[str, ...]) -> dict[str, str] | None:
    """The /view query of the first file a run saved with one of `suffixes`, whatever its node
    calls the list (`images`, `gifs`, `videos`); saved outputs before temporary previews."""
    files = [
        item
        for output in entry.get("outputs", {}).values()
        if isinstance(output, dict)
        for value in output.values()
        if isinstance(value, list)
        for item in value
        if isinstance(item, dict) and "filename" in item
    ]
    files.sort(key=lambda item: item.get("type", "output") != "output")
    for item in files:
        if str(item["filename"]).lower().endswith(suffixes):
            return {
                "filename": str(item["filename"]),
                "subfolder": str(item.get("subfolder", "")),
                "type": str(item.get("type", "output")),
            }
    return None


class ComfyUI:
    """Makes images (and, with a workflow, clips) on a ComfyUI server; resumes a remembered run
    instead of paying twice."""

    name = "comfyui"
    remote = True  # calls wait on the service: `--inflight` may hold several

    def __init__(
        self,
        base_url: str,
        *,
        ckpt: str = DEFAULT_CKPT,
        steps: int = 20,
        price: float = 0.0,
        video_price: float = 0.0,
        workflows: Mapping[str, Workflow] | None = None,
        limiter: RateLimiter | None = None,
        poll_s: float = 0.5,
        ws_wait_s: float = 5.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.ckpt, self.steps, self.poll_s, self.ws_wait_s = ckpt, steps, poll_s, ws_wait_s
        self.price, self.video_price = price, video_price
        self.workflows = dict(workflows or {})
        self.limiter = limiter or RateLimiter.from_env("comfyui")

    def kinds(self) -> frozenset[str]:
        """The kinds this server makes: image kinds (built-in graph) and any kind with a workflow."""
        return frozenset(k for k in kinds.made_by(self.name) if k in IMAGES or k in self.workflows)

    def suffix(self, kind: str) -> str:
        """.png for images, .mp4 for a video workflow; any other kind is refused."""
        params.check_kind(kind, self.kinds(), self.name)
        return params.suffix_for(kind)

    def quote(self, job: Job) -> float:
        """A run's price: per image, or per second of video (0 to resume a run)."""
        if job.kind not in CLIPS:
            return self.price
        return 0.0 if job.remote_job_id else self.video_price * params.duration_s(job.params)

    def describe(self, kind: str) -> dict[str, str]:
        """Where `kind` is made and with what: its workflow file, else the checkpoint."""
        return {"url": self.base_url, "model": f"{kind}.json" if kind in self.workflows else self.ckpt}

    @classified
    def check(self) -> None:
        """Read the server's queue: a call that costs nothing."""
        with http_client(base_url=self.base_url) as client:
            send(client, "GET", "/queue", deadline=Deadline(10))

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Submit (or resume) the run, follow it, fetch and check its image or clip."""
        params.check_kind(job.kind, self.kinds(), self.name)
        video = job.kind in CLIPS
        size, seed = params.size(job.params), params.seed(job)
        if job.kind not in self.workflows and (size[0] % 8 or size[1] % 8):
            raise params.permanent(
                "unsupported_size", f"unsupported_size: ComfyUI makes multiples of 8, not {size[0]}x{size[1]}"
            )
        deadline = Deadline(ctx.timeout_s)
        client_id = uuid.uuid4().hex
        cost, resubmitted = 0.0, False
        with (
            Progress(self.base_url, client_id, min(2.0, deadline.remaining())) as progress,
            http_client(base_url=self.base_url) as client,
        ):
            prompt_id = job.remote_job_id
            if prompt_id is not None and not self._known(client, prompt_id, deadline):
                prompt_id, resubmitted = None, True
            if prompt_id is None:
                workflow = self._workflow(client, job, size, seed, deadline, ctx)
                ctx.stage("loading_model")
                prompt_id = self._submit(client, workflow, client_id, deadline, ctx)
                cost = self.quote(job)
            entry = self._wait(
                client, prompt_id, progress, deadline, ctx, "generating_video" if video else "generating_image"
            )
            ctx.stage("finalizing")
            wanted = (".mp4",) if video else (".png", ".jpg", ".jpeg", ".webp")
            found = saved_file(entry, wanted)
            if found is None:
                raise params.permanent("bad_output", f"bad_output: the run saved no {' or '.join(wanted)} file")
            data = send(client, "GET", "/view", params=found, deadline=deadline).content
        facts = self._save(job, data, size)
        return Output(
            path=job.out_path,
            cost=cost,
            remote_job_id=prompt_id,
            model=self.describe(job.kind)["model"],
            settings={
                "provider": self.name,
                "seed": seed,
                "workflow": job.kind in self.workflows,
                **({} if job.kind in self.workflows else {"steps": self.steps, "sampler": "euler", "cfg": 7.0}),
            },
            result={
                **facts,
                "prompt_id": prompt_id,
                "file": found["filename"],
                "resumed": job.remote_job_id is not None and not resubmitted,
                "resubmitted": resubmitted,
            },
        )

    def _save(self, job: Job, data: bytes, size: tuple[int, int]) -> dict[str, Any]:
        """The output checked and written: a clip that decodes (its real length), or an image of
        the size asked (a user's workflow may draw it larger, in the same shape)."""
        if job.kind in CLIPS:
            return save_checked_mp4(data, job.out_path)
        if job.kind in self.workflows:
            return save_kept_png(data, size, job.out_path)
        return save_checked_png(data, size, job.out_path)

    def _workflow(
        self, client: httpx.Client, job: Job, size: tuple[int, int], seed: int, deadline: Deadline, ctx: CallContext
    ) -> Workflow:
        """The graph to run: the user's workflow with its inputs uploaded and placeholders
        filled, else the built-in text-to-image graph."""
        p = job.params
        prompt = params.text(p, "video_prompt") if job.kind in CLIPS else ""
        prompt = prompt or str(params.require(p, "prompt"))
        negative = params.text(p, "negative_prompt", NEGATIVE)
        if job.kind not in self.workflows:
            return text_to_image(
                prompt, negative, size, seed, ckpt=self.ckpt, steps=self.steps, prefix=f"pipeline_kit/{job.task_id}"
            )
        workflow = self.workflows[job.kind]
        values: dict[str, Any] = {
            "prompt": prompt,
            "negative_prompt": negative,
            "seed": seed,
            "width": size[0],
            "height": size[1],
            "fps": params.fps(p),
        }
        if job.kind in CLIPS:
            seconds = params.duration_s(p)
            values.update(duration_s=seconds, frames=wan_frames(seconds, params.fps(p)))
        wanted = sorted(n for n in placeholders(workflow) if is_image_name(n))
        ranks = [i for n in wanted if (i := reference_index(n)) is not None]
        if ranks:  # say which uploaded picture is whom
            used = self._references(job, max(ranks))
            values["prompt"] = with_references(prompt, reference_note(p, job.inputs, used))
        if wanted:
            ctx.stage("uploading")
        for name in wanted:
            values[name] = self._upload(client, job, name, self._input(job, name), deadline)
        return substitute(workflow, values, f"{job.kind}.json")

    @staticmethod
    def _references(job: Job, limit: int) -> list[Path]:
        """A job's reference pictures by rank: a frame's as its params name them (the shot's first
        frame before the sheets), any other kind's image inputs in order."""
        return labelled_references(job.kind, job.params, job.inputs, limit) or image_inputs(job.inputs, limit)

    @staticmethod
    def _input(job: Job, name: str) -> Path:
        """The input image a placeholder names: a frame by its kind, a reference by its rank
        among the job's image inputs (the shot's character sheets)."""
        index = reference_index(name)
        if index is None:
            path = job.inputs.get(name)
        else:
            references = ComfyUI._references(job, index)
            path = references[index - 1] if len(references) == index else None
        if path is None:
            raise params.permanent(
                "missing_input",
                f"missing_input: workflow {job.kind}.json needs {{{{{name}}}}}, which this task does not have",
            )
        return Path(path)

    def _upload(self, client: httpx.Client, job: Job, name: str, path: Path, deadline: Deadline) -> str:
        """Upload one input image; the name a LoadImage node takes (`subfolder/name`)."""
        data = input_bytes(path)
        stored = f"{job.task_id}_{name}{path.suffix.lower()}"
        answer = json_body(
            send(
                client,
                "POST",
                "/upload/image",
                files={"image": (stored, data, "image/png")},
                data={"type": "input", "subfolder": "pipeline_kit", "overwrite": "true"},
                deadline=deadline,
            )
        )
        if not isinstance(answer, dict) or not answer.get("name"):
            raise params.permanent("bad_output", "bad_output: /upload/image gave no name")
        subfolder = str(answer.get("subfolder") or "")
        return f"{subfolder}/{answer['name']}" if subfolder else str(answer["name"])

    def _submit(
        self, client: httpx.Client, workflow: Workflow, client_id: str, deadline: Deadline, ctx: CallContext
    ) -> str:
        """Queue the graph (a paid call); its prompt id, remembered at once."""
        answer = json_body(
            send_paid(
                client,
                "POST",
                "/prompt",
                json={"prompt": workflow, "client_id": client_id},
                deadline=deadline,
                limiter=self.limiter,
                uid=ctx.uid,
            )
        )
        prompt_id = answer.get("prompt_id") if isinstance(answer, dict) else None
        if not prompt_id:
            raise params.permanent("bad_output", "bad_output: /prompt gave no prompt_id")
        ctx.remember_remote_job(prompt_id)
        return str(prompt_id)

    def _known(self, client: httpx.Client, prompt_id: str, deadline: Deadline) -> bool:
        """Whether the server still has the run, finished (history) or not (queue)."""
        history = json_body(send(client, "GET", f"/history/{prompt_id}", deadline=deadline))
        if isinstance(history, dict) and prompt_id in history:
            return True
        queue = json_body(send(client, "GET", "/queue", deadline=deadline))
        if not isinstance(queue, dict):
            return False
        waiting = [*queue.get("queue_running", []), *queue.get("queue_pending", [])]
        return any(len(item) > 1 and item[1] == prompt_id for item in waiting)

    def _wait(
        self, client: httpx.Client, prompt_id: str, progress: Progress, deadline: Deadline, ctx: CallContext, stage: str
    ) -> dict[str, Any]:
        """The run's history entry once it is over: the websocket says when to look (and how
        far it got), else the history is polled."""
        ctx.stage(stage)
        while True:
            history = json_body(send(client, "GET", f"/history/{prompt_id}", deadline=deadline))
            entry = history.get(prompt_id) if isinstance(history, dict) else None
            if entry:
                status = entry.get("status", {})
                if status.get("status_str") == "error":
                    raise classify(execution_error(entry))
                if status.get("completed", True) or entry.get("outputs"):
                    return entry
            if progress.live:
                progress.wait(
                    prompt_id, min(self.ws_wait_s, deadline.remaining()), lambda steps: ctx.stage(f"{stage}: {steps}")
                )
            else:
                time.sleep(min(self.poll_s, deadline.remaining()))


def make(arg: str | None) -> ComfyUI:
    """Registry factory for `comfyui` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'comfyui' takes no argument, got 'comfyui:{arg}'")
    env = os.environ
    try:
        steps = int(env.get("PIPELINE_KIT_COMFYUI_STEPS", "20"))
        price = float(env.get("PIPELINE_KIT_COMFYUI_IMAGE_PRICE", env.get("PIPELINE_KIT_COMFYUI_PRICE", "0")))
        video_price = float(env.get("PIPELINE_KIT_COMFYUI_VIDEO_PRICE", "0"))
    except ValueError:
        raise BadInput(
            "PIPELINE_KIT_COMFYUI_STEPS, _IMAGE_PRICE (or _PRICE) and _VIDEO_PRICE must be numbers"
        ) from None
    folder = env.get("PIPELINE_KIT_COMFYUI_WORKFLOWS")
    return ComfyUI(
        env.get("PIPELINE_KIT_COMFYUI_URL", DEFAULT_URL),
        ckpt=env.get("PIPELINE_KIT_COMFYUI_CKPT", DEFAULT_CKPT),
        steps=steps,
        price=price,
        video_price=video_price,
        workflows=load_workflows(Path(folder)) if folder else None,
    )
