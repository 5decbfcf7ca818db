"""Volcengine Ark (火山方舟): Seedream images and Seedance first+last-frame video clips.

What the Ark API reference documents, and this module relies on (JSON over HTTPS, header
`Authorization: Bearer <key>`, base URL ending in /api/v3):

- `POST /images/generations` takes `model`, `prompt`, `size` ("WxH"; Seedream 4.0 wants between
  1280x720 and 4096x4096 pixels in all), `seed`, `watermark` (on by default), `response_format`
  (`url`, valid 24 h, or `b64_json`) and `image`: one or a list of reference images (up to 10),
  each a URL or `data:image/<fmt>;base64,...`. The answer's `data[0]` has `url` or `b64_json`
  (a JPEG), or an `error` of its own.
- `POST /contents/generations/tasks` takes `model` and `content`: a `text` item (the prompt, with
  text commands such as `--ratio 16:9 --duration 5` appended; Seedance takes whole seconds 2-12)
  and `image_url` items `{"image_url": {"url": ...}, "role": "first_frame" | "last_frame"}`
  (frames with sides between 300 and 6000 px). It answers `{"id": ...}`.
- `GET /contents/generations/tasks/{id}` answers `status` (queued, running, succeeded, failed,
  cancelled, expired), `error` (`code`, `message`) and, once succeeded, `content.video_url` (an
  MP4, cleaned up after 24 h) and the clip's `duration`. Tasks can be read back for 7 days.
- `GET /contents/generations/tasks?page_num=1&page_size=1` lists tasks: a call that costs nothing,
  used by `pipeline-kit providers --check`.
- Errors come as an HTTP status with `{"error": {"code", "message"}}`; the codes are classified
  in classify.py (AccountOverdueError and QuotaExceeded are `quota_exhausted`).

A video task's id goes to `ctx.remember_remote_job` before anything else; a takeover re-polls
that task (for a fresh URL too) and creates a new one only when the service no longer has it
alive. An image is kept as Seedream drew it (1280x720 for a 640x360 frame: a provider's picture
is never shrunk, the film scales it). Result URLs are downloaded at once with a plain client: the
key never leaves for another host, and never reaches settings, results, messages or logs.

Configuration: ARK_API_KEY (or the variable named by PIPELINE_KIT_ARK_KEY_ENV),
PIPELINE_KIT_ARK_URL, PIPELINE_KIT_ARK_IMAGE_MODEL, PIPELINE_KIT_ARK_VIDEO_MODEL,
PIPELINE_KIT_ARK_IMAGE_PRICE (per image), PIPELINE_KIT_ARK_VIDEO_PRICE (per video second),
PIPELINE_KIT_ARK_DURATIONS (seconds the video model accepts: "2-12" or "5,10"),
PIPELINE_KIT_ARK_POLL (seconds between polls), PIPELINE_KIT_ARK_RATE/_BURST (calls per uid).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output, canceled
from pipeline_kit.backends.calls import Deadline, first_image, http_client, json_body, send, send_paid
from pipeline_kit.backends.classify import ProviderError, RemoteError, classified, classify
from pipeline_kit.backends.clip import save_checked_mp4
from pipeline_kit.backends.images import save_kept_png
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.backends.references import data_uri, labelled_references, reference_note, with_references
from pipeline_kit.errors import BadInput, GenerationError

DEFAULT_URL = "https://ark.cn-beijing.volces.com/api/v3"
DEFAULT_IMAGE_MODEL = "doubao-seedream-4-0-250828"
DEFAULT_VIDEO_MODEL = "doubao-seedance-1-0-lite-i2v-250428"
KINDS = kinds.made_by("ark")
CLIPS = frozenset(kinds.names(kinds.Role.CLIP))
MIN_PIXELS, MAX_PIXELS = 1280 * 720, 4096 * 4096
MAX_REFERENCES = 10
RATIOS = {"16:9": 16 / 9, "4:3": 4 / 3, "1:1": 1.0, "3:4": 3 / 4, "9:16": 9 / 16, "21:9": 21 / 9}
ALIVE = ("queued", "running", "succeeded")
GONE = (403, 404, 410)  # a result URL that expired answers one of these


@dataclass(frozen=True)
class ArkSettings:
    """Everything the backend needs besides the key."""

    base_url: str = DEFAULT_URL
    image_model: str = DEFAULT_IMAGE_MODEL
    video_model: str = DEFAULT_VIDEO_MODEL
    image_price: float = 0.0  # per image
    video_price: float = 0.0  # per second of video
    durations: tuple[int, ...] = tuple(range(2, 13))
    response_format: str = "url"
    reference_side: int = 1024  # longest side of a character sheet sent as a reference
    frame_side: int = 1280  # longest side of a frame sent to the video model
    poll_s: float = 5.0
    key_env: str = "ARK_API_KEY"
    limiter: RateLimiter = field(default_factory=lambda: RateLimiter(1.0, 2))


def parse_durations(text: str) -> tuple[int, ...]:
    """'2-12' (a range of whole seconds) or '5,10' (a set) -> the sorted seconds allowed."""
    try:
        if "-" in text:
            low, high = (int(x) for x in text.split("-", 1))
            allowed = set(range(low, high + 1))
        else:
            allowed = {int(x) for x in text.split(",") if x.strip()}
    except ValueError:
        allowed = set()
    if not allowed or min(allowed) < 1:
        raise BadInput(f"PIPELINE_KIT_ARK_DURATIONS must be like '2-12' or '5,10', got {text!r}")
    return tuple(sorted(allowed))


def accepted_duration(seconds: float, allowed: tuple[int, ...]) -> int:
    """The allowed whole second nearest to `seconds` (the longer one on a tie)."""
    return min(allowed, key=lambda n: (abs(n - seconds), -n))


def nearest_ratio(width: int, height: int) -> str:
    """The video ratio Seedance takes that is closest to width:height."""
    return min(RATIOS, key=lambda r: abs(math.log(RATIOS[r] * height / width)))


def provider_size(size: tuple[int, int], min_pixels: int = MIN_PIXELS) -> tuple[int, int]:
    """The task's size scaled up (same shape) until it has the pixels the model requires."""
    width, height = size
    if not 1 / 16 <= width / height <= 16:
        raise params.permanent(
            "unsupported_size", f"unsupported_size: Ark draws aspect ratios from 1:16 to 16:1, not {width}x{height}"
        )
    scale = max(1.0, math.sqrt(min_pixels / (width * height)))
    return math.ceil(width * scale), math.ceil(height * scale)


class Ark:
    """Character sheets, frames (with the shot's character sheets) and clips on Volcengine Ark."""

    name = "ark"
    remote = True  # calls wait on the service: `--inflight` may hold several

    def __init__(self, api_key: str, settings: ArkSettings | None = None) -> None:
        self._api_key = api_key
        self.settings = settings or ArkSettings()
        self.base_url = self.settings.base_url.rstrip("/")

    def __repr__(self) -> str:  # keeps the key out of any repr that reaches a log
        return f"Ark(base_url={self.base_url!r})"

    def suffix(self, kind: str) -> str:
        """.png for images, .mp4 for video."""
        params.check_kind(kind, KINDS, self.name)
        return params.suffix_for(kind)

    def quote(self, job: Job) -> float:
        """What the call for `job` will cost, booked before it goes out (0 to resume a task)."""
        if job.kind not in CLIPS:
            return self.settings.image_price
        if job.remote_job_id:
            return 0.0
        return self.settings.video_price * self._duration(job.params)

    def describe(self, kind: str) -> dict[str, str]:
        """Where and with which model `kind` is made, and the variable that holds the key."""
        model = self.settings.video_model if kind in CLIPS else self.settings.image_model
        return {"url": self.base_url, "model": model, "key": self.settings.key_env}

    @classified
    def check(self) -> None:
        """Ask Ark for one task of the list (a call that costs nothing); the key must work."""
        with http_client(headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            send(
                client,
                "GET",
                f"{self.base_url}/contents/generations/tasks",
                params={"page_num": 1, "page_size": 1},
                deadline=Deadline(10),
            )

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Make the image or clip of `job` at `job.out_path`."""
        params.check_kind(job.kind, KINDS, self.name)
        deadline = Deadline(ctx.timeout_s)
        with http_client(base_url=self.base_url, headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            if job.kind in CLIPS:
                return self._video(client, job, ctx, deadline)
            return self._image(client, job, ctx, deadline)

    # -- images -----------------------------------------------------------------------------
    def _image(self, client: httpx.Client, job: Job, ctx: CallContext, deadline: Deadline) -> Output:
        sheets = labelled_references(job.kind, job.params, job.inputs, MAX_REFERENCES)
        prompt = with_references(
            str(params.require(job.params, "prompt")), reference_note(job.params, job.inputs, sheets)
        )
        size = params.size(job.params)
        wanted = provider_size(size)
        request: dict[str, Any] = {
            "model": self.settings.image_model,
            "prompt": prompt,
            "size": "{}x{}".format(*wanted),
            "seed": params.seed(job) & 0x7FFFFFFF,
            "watermark": False,
            "response_format": self.settings.response_format,
        }
        if sheets:
            request["image"] = [data_uri(p, max_side=self.settings.reference_side) for p in sheets]
        ctx.stage("generating_image")
        answer = json_body(
            send_paid(
                client,
                "POST",
                "/images/generations",
                json=request,
                deadline=deadline,
                limiter=self.settings.limiter,
                uid=ctx.uid,
            )
        )
        ctx.stage("finalizing")
        try:  # the call returned an image: it was paid for, whatever happens next
            facts = save_kept_png(self._image_bytes(answer, deadline), size, job.out_path)
        except GenerationError as error:
            error.cost = self.settings.image_price
            raise
        return Output(
            path=job.out_path,
            cost=self.settings.image_price,
            model=self.settings.image_model,
            settings={
                "provider": self.name,
                "size": request["size"],
                "seed": request["seed"],
                "references": len(sheets),
                "endpoint": self.base_url,
            },
            result={**facts, "references": [p.name for p in sheets]},
        )

    @staticmethod
    def _image_bytes(answer: Any, deadline: Deadline) -> bytes:
        """The image in `data[0]`; an error Ark reports in the item is classified by its code."""

        def refused(item: dict[str, Any]) -> None:
            if isinstance(item.get("error"), dict):
                error = item["error"]
                raise classify(ProviderError(str(error.get("code", "")), str(error.get("message", ""))))

        return first_image(answer, deadline, refused)

    # -- video ------------------------------------------------------------------------------
    def _duration(self, p: Mapping[str, Any]) -> int:
        return accepted_duration(params.duration_s(p), self.settings.durations)

    def _video_request(self, job: Job) -> dict[str, Any]:
        p = job.params
        prompt = params.text(p, "video_prompt") or str(params.require(p, "prompt"))
        width, height = params.size(p)
        commands = (
            f"--ratio {nearest_ratio(width, height)} --duration {self._duration(p)} "
            f"--seed {params.seed(job)} --watermark false"
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": f"{prompt} {commands}"}]
        for role in ("first_frame", "last_frame"):
            frame = job.inputs.get(role)
            if frame is None:
                raise params.permanent("missing_input", f"missing_input: video needs its {role} in inputs")
            url = data_uri(frame, max_side=self.settings.frame_side, min_side=301)
            content.append({"type": "image_url", "image_url": {"url": url}, "role": role})
        return {"model": self.settings.video_model, "content": content}

    def _video(self, client: httpx.Client, job: Job, ctx: CallContext, deadline: Deadline) -> Output:
        seconds = self._duration(job.params)
        task_id, task = job.remote_job_id, None
        if task_id is not None:
            task = self._task(client, task_id, deadline)
            if task is None or task.get("status") not in ALIVE:
                task_id = None  # gone, failed or expired: only now is a new task paid for
        created = task_id is None
        cost = self.settings.video_price * seconds if created else 0.0
        if task_id is None:
            request = self._video_request(job)
            ctx.stage("uploading")
            answer = json_body(
                send_paid(
                    client,
                    "POST",
                    "/contents/generations/tasks",
                    json=request,
                    deadline=deadline,
                    limiter=self.settings.limiter,
                    uid=ctx.uid,
                )
            )
            task_id = answer.get("id") if isinstance(answer, dict) else None
            if not task_id:
                raise params.permanent("bad_output", "bad_output: the task answer has no id")
            ctx.remember_remote_job(task_id)
        try:
            data = self._wait_and_fetch(client, task_id, ctx, deadline)
            ctx.stage("finalizing")
            facts = save_checked_mp4(data, job.out_path)
        except GenerationError as error:  # a created task is billed unless the service failed it
            error.cost = 0.0 if isinstance(error.__cause__, ProviderError) else cost
            raise
        return Output(
            path=job.out_path,
            cost=cost,
            model=self.settings.video_model,
            remote_job_id=task_id,
            settings={"provider": self.name, "duration_s": seconds, "endpoint": self.base_url},
            result={"task_id": task_id, **facts, "asked_duration_s": seconds, "resumed": not created},
        )

    def _cancel(self, client: httpx.Client, task_id: str, status: str, deadline: Deadline) -> GenerationError:
        """The task was canceled here: cancel its remote task too while that is still queued
        (DELETE; Ark cannot stop a running one, which is left to finish). The error to stop
        with; one whose remote task was cancelled carries that as its cause, so it costs
        nothing."""
        outcome, cause = f"left {status} (only a queued task can be cancelled)", None
        if status == "queued":
            try:
                send(client, "DELETE", f"/contents/generations/tasks/{task_id}", deadline=deadline)
                outcome = "cancelled while queued"
                cause = ProviderError("TaskCancelled", "cancelled while queued, not billed")
            except GenerationError as error:  # started meanwhile, or gone: nothing to undo
                outcome = f"not cancelled: {error}"
        error = GenerationError(
            f"canceled: the task was canceled; Ark task {task_id} {outcome}", error_kind="canceled", retryable=False
        )
        error.__cause__ = cause
        return error

    def _task(self, client: httpx.Client, task_id: str, deadline: Deadline) -> Any:
        """The task as the service reports it; None when it no longer knows the id."""
        try:
            return json_body(send(client, "GET", f"/contents/generations/tasks/{task_id}", deadline=deadline))
        except GenerationError as error:
            if error.error_kind == "not_found":
                return None
            raise

    def _wait_and_fetch(self, client: httpx.Client, task_id: str, ctx: CallContext, deadline: Deadline) -> bytes:
        """Poll until the task succeeded, then download its clip (re-polling for a fresh URL
        once if the first has expired)."""
        started, fresh_tries = time.monotonic(), 1
        while True:
            task = self._task(client, task_id, deadline)
            if task is None:
                raise classify(RemoteError(f"Ark no longer knows task {task_id}"))
            status = task.get("status")
            ctx.stage(f"generating_video: {status} {time.monotonic() - started:.0f}s")
            if canceled(ctx):
                raise self._cancel(client, task_id, str(status), deadline)
            if status == "succeeded":
                url = (task.get("content") or {}).get("video_url")
                if not url:
                    raise params.permanent("bad_output", "bad_output: succeeded without video_url")
                try:
                    with http_client(follow_redirects=True) as plain:  # the key stays with Ark
                        return send(plain, "GET", url, deadline=deadline).content
                except GenerationError as error:
                    cause = error.__cause__
                    gone = isinstance(cause, httpx.HTTPStatusError) and cause.response.status_code in GONE
                    if not gone:
                        raise
                    if fresh_tries == 0:
                        raise GenerationError(
                            f"url_expired: the clip of task {task_id} could not be fetched: {error}",
                            error_kind="url_expired",
                            retryable=True,
                        ) from error
                    fresh_tries -= 1
                    continue
            if status in ("failed", "cancelled", "expired"):
                error = task.get("error") or {}
                code = str(error.get("code") or f"Task{str(status).capitalize()}")
                raise classify(ProviderError(code, str(error.get("message") or status)))
            time.sleep(min(self.settings.poll_s, deadline.remaining()))


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    try:
        return float(env.get(name, default))
    except ValueError:
        raise BadInput(f"{name} must be a number, got {env[name]!r}") from None


def settings_from_env(env: Mapping[str, str]) -> ArkSettings:
    """ArkSettings from PIPELINE_KIT_ARK_* variables (defaults for those not set)."""
    prefix = "PIPELINE_KIT_ARK_"
    return ArkSettings(
        base_url=env.get(prefix + "URL", DEFAULT_URL),
        image_model=env.get(prefix + "IMAGE_MODEL", DEFAULT_IMAGE_MODEL),
        video_model=env.get(prefix + "VIDEO_MODEL", DEFAULT_VIDEO_MODEL),
        image_price=_number(env, prefix + "IMAGE_PRICE", 0.0),
        video_price=_number(env, prefix + "VIDEO_PRICE", 0.0),
        durations=parse_durations(env.get(prefix + "DURATIONS", "2-12")),
        poll_s=_number(env, prefix + "POLL", 5.0),
        key_env=env.get(prefix + "KEY_ENV", "ARK_API_KEY"),
        limiter=RateLimiter.from_env("ark"),
    )


def make(arg: str | None) -> Ark:
    """Registry factory for `ark` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'ark' takes no argument, got 'ark:{arg}'")
    settings = settings_from_env(os.environ)
    api_key = os.environ.get(settings.key_env, "")
    if not api_key:
        raise BadInput(f"backend 'ark' needs {settings.key_env} in the environment")
    return Ark(api_key, settings)
