"""ComfyUI over its HTTP protocol: submit a workflow, poll its history, fetch the image.

POST /prompt {"prompt": workflow, "client_id"} answers {"prompt_id"}, which is handed to
`ctx.remember_remote_job` before anything else, so a worker that takes the task over resumes
that run (GET /history/{id}, GET /queue) instead of paying for a second one. Only a run the
server no longer knows (neither in its history nor its queue) is submitted again.

Configuration: PIPELINE_KIT_COMFYUI_URL (default http://127.0.0.1:8188),
PIPELINE_KIT_COMFYUI_CKPT (checkpoint file name), PIPELINE_KIT_COMFYUI_STEPS (default 20),
PIPELINE_KIT_COMFYUI_PRICE (cost per run, default 0), PIPELINE_KIT_COMFYUI_RATE/_BURST.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import httpx

from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import Deadline, json_body, send, send_paid
from pipeline_kit.backends.classify import RemoteError, classified, classify
from pipeline_kit.backends.images import save_checked_png
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput

DEFAULT_URL = "http://127.0.0.1:8188"
DEFAULT_CKPT = "v1-5-pruned-emaonly.safetensors"
NEGATIVE = "blurry, low quality, watermark, text"


def text_to_image(prompt: str, negative: str, size: tuple[int, int], seed: int, *, ckpt: str,
                  steps: int, prefix: str) -> dict[str, Any]:
    """A minimal text-to-image workflow in ComfyUI's API format."""
    width, height = size
    return {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": ckpt}},
        "5": {"class_type": "EmptyLatentImage",
              "inputs": {"width": width, "height": height, "batch_size": 1}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": prompt, "clip": ["4", 1]}},
        "7": {"class_type": "CLIPTextEncode", "inputs": {"text": negative, "clip": ["4", 1]}},
        "3": {"class_type": "KSampler",
              "inputs": {"seed": seed, "steps": steps, "cfg": 7.0, "sampler_name": "euler",
                         "scheduler": "normal", "denoise": 1.0, "model": ["4", 0],
                         "positive": ["6", 0], "negative": ["7", 0], "latent_image": ["5", 0]}},
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
        "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": prefix,
                                                    "images": ["8", 0]}},
    }


def execution_error(entry: dict[str, Any]) -> RemoteError:
    """The failure a history entry with status "error" reports, as one line."""
    for event, data in entry.get("status", {}).get("messages", []):
        if event == "execution_error" and isinstance(data, dict):
            return RemoteError(f"ComfyUI {data.get('node_type', 'node')} failed: "
                               f"{data.get('exception_type', '')} "
                               f"{data.get('exception_message', '')}".strip())
    return RemoteError("ComfyUI reported an execution error without details")


class ComfyUI:
    """Generates images on a ComfyUI server; resumes a remembered run instead of paying twice."""

    name = "comfyui"

    def __init__(self, base_url: str, *, ckpt: str = DEFAULT_CKPT, steps: int = 20,
                 price: float = 0.0, limiter: RateLimiter | None = None,
                 poll_s: float = 0.5) -> None:
        self.base_url = base_url.rstrip("/")
        self.ckpt, self.steps, self.price, self.poll_s = ckpt, steps, price, poll_s
        self.limiter = limiter or RateLimiter.from_env("comfyui")
        self.client_id = uuid.uuid4().hex

    def suffix(self, kind: str) -> str:
        """.png: this backend makes image kinds only."""
        return params.image_suffix(kind, self.name)

    def describe(self, kind: str) -> dict[str, str]:
        """Where images are made and from which checkpoint (ComfyUI takes no key)."""
        return {"url": self.base_url, "model": self.ckpt}

    @classified
    def check(self) -> None:
        """Read the server's queue: a call that costs nothing."""
        with httpx.Client(base_url=self.base_url) as client:
            send(client, "GET", "/queue", deadline=Deadline(10))

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Submit (or resume) the run, wait for its image, write it as PNG."""
        params.check_kind(job.kind, params.IMAGE_KINDS, self.name)
        prompt = str(params.require(job.params, "prompt"))
        size, seed = params.size(job.params), params.seed(job)
        if size[0] % 8 or size[1] % 8:
            raise params.permanent("unsupported_size", f"unsupported_size: ComfyUI makes "
                                   f"multiples of 8, not {size[0]}x{size[1]}")
        deadline = Deadline(ctx.timeout_s)
        cost, resubmitted = 0.0, False
        with httpx.Client(base_url=self.base_url) as client:
            prompt_id = job.remote_job_id
            if prompt_id is not None and not self._known(client, prompt_id, deadline):
                prompt_id, resubmitted = None, True
            if prompt_id is None:
                ctx.stage("loading_model")
                workflow = text_to_image(
                    prompt, params.text(job.params, "negative_prompt", NEGATIVE), size, seed,
                    ckpt=self.ckpt, steps=self.steps, prefix=f"pipeline_kit/{job.task_id}")
                answer = json_body(send_paid(
                    client, "POST", "/prompt", json={"prompt": workflow,
                                                     "client_id": self.client_id},
                    deadline=deadline, limiter=self.limiter, uid=ctx.uid))
                prompt_id = answer.get("prompt_id") if isinstance(answer, dict) else None
                if not prompt_id:
                    raise params.permanent("bad_output", "bad_output: /prompt gave no prompt_id")
                ctx.remember_remote_job(prompt_id)
                cost = self.price
            ctx.stage("generating_image")
            image = self._wait_for_image(client, prompt_id, deadline)
            ctx.stage("finalizing")
            data = send(client, "GET", "/view", params=image, deadline=deadline).content
        facts = save_checked_png(data, size, job.out_path)
        return Output(path=job.out_path, cost=cost, model=self.ckpt, remote_job_id=prompt_id,
                      settings={"seed": seed, "steps": self.steps, "sampler": "euler",
                                "cfg": 7.0},
                      result={**facts, "prompt_id": prompt_id, "resumed":
                              job.remote_job_id is not None and not resubmitted,
                              "resubmitted": resubmitted})

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

    def _wait_for_image(self, client: httpx.Client, prompt_id: str,
                        deadline: Deadline) -> dict[str, str]:
        """Poll the history until the run has an image; its /view query parameters."""
        while True:
            history = json_body(send(client, "GET", f"/history/{prompt_id}",
                                     deadline=deadline))
            entry = history.get(prompt_id) if isinstance(history, dict) else None
            if entry:
                if entry.get("status", {}).get("status_str") == "error":
                    raise classify(execution_error(entry))
                for output in entry.get("outputs", {}).values():
                    for image in output.get("images", []):
                        return {"filename": image["filename"],
                                "subfolder": image.get("subfolder", ""),
                                "type": image.get("type", "output")}
                if entry.get("status", {}).get("completed"):
                    raise params.permanent("bad_output", "bad_output: the run finished "
                                                         "without an image")
            time.sleep(min(self.poll_s, deadline.remaining()))


def make(arg: str | None) -> ComfyUI:
    """Registry factory for `comfyui` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'comfyui' takes no argument, got 'comfyui:{arg}'")
    env = os.environ
    try:
        steps = int(env.get("PIPELINE_KIT_COMFYUI_STEPS", "20"))
        price = float(env.get("PIPELINE_KIT_COMFYUI_PRICE", "0"))
    except ValueError:
        raise BadInput("PIPELINE_KIT_COMFYUI_STEPS and _PRICE must be numbers") from None
    return ComfyUI(env.get("PIPELINE_KIT_COMFYUI_URL", DEFAULT_URL),
                   ckpt=env.get("PIPELINE_KIT_COMFYUI_CKPT", DEFAULT_CKPT), steps=steps,
                   price=price)
