"""A strict loopback Volcengine Ark: Seedream images, Seedance video tasks, expiring result URLs.

It refuses what the Ark API reference says the real service refuses: a missing or wrong bearer key
(401 AuthenticationError), a missing model or prompt (400 MissingParameter), a reference or frame
that is neither an http(s) URL nor a `data:image/<fmt>;base64,` URI, an unknown content type or
role, a last frame without a first, a bad size, ratio or duration, frames outside the allowed
sides or shape, a resolution other than 480p, 720p or 1080p, a frame rate other than 24 (400
InvalidParameter). A clip is a real H.264 MP4 at the documented pixels of its resolution (default
720p, Seedance lite's) and ratio, 24 fps: 1280x720 for 720p 16:9. Every accepted create is billed
in `billing` (the log of paid creates). Scripted answers for the next creates (see scripted.py):
ok, 429:S, 500, quota:CODE (AccountOverdueError -> 403, QuotaExceeded -> 429), fail:CODE (the task
fails later with that code), expired_url (the first result URL handed out for the task has
expired); `poll_failures` lists statuses the next task polls answer with (InternalServiceError). A
video task goes queued -> running -> succeeded over `polls` GETs; while `queue` is set, tasks stay
queued, and while `hold` is set, they stay running. DELETE cancels a queued task (listed in
`cancelled`), refuses a running one and deletes a finished one. `leaks` lists result downloads
that carried the API key.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import itertools
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image
from servers.scripted import Action, FakeServer, Request

from pipeline_kit.backends.clip import write_mp4

DATA_URI = re.compile(r"^data:image/(jpeg|png|webp|bmp|tiff|gif);base64,(.+)$", re.DOTALL)
RATIOS = {"16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive", "keep_ratio"}
ROLES = {"first_frame", "last_frame", "reference_image"}
COMMANDS = {
    "rs": "resolution",
    "rt": "ratio",
    "dur": "duration",
    "fps": "framespersecond",
    "cf": "camerafixed",
    "wm": "watermark",
}
KNOWN = {"resolution", "ratio", "duration", "framespersecond", "camerafixed", "watermark", "seed", "frames"}
# resolution -> ratio -> the clip's pixels, as the Seedance docs list them
PIXELS = {
    "480p": {
        "16:9": (864, 480),
        "4:3": (736, 544),
        "1:1": (640, 640),
        "3:4": (544, 736),
        "9:16": (480, 864),
        "21:9": (960, 416),
    },
    "720p": {
        "16:9": (1280, 720),
        "4:3": (1112, 834),
        "1:1": (960, 960),
        "3:4": (834, 1112),
        "9:16": (720, 1280),
        "21:9": (1470, 630),
    },
    "1080p": {
        "16:9": (1920, 1080),
        "4:3": (1664, 1248),
        "1:1": (1440, 1440),
        "3:4": (1248, 1664),
        "9:16": (1080, 1920),
        "21:9": (2176, 928),
    },
}
FPS = 24
STATUS_OF_CODE = {"AccountOverdueError": 403, "ServiceOverdue": 403, "QuotaExceeded": 429, "SetLimitExceeded": 429}


class Refused(Exception):
    """A request the real service would refuse: HTTP status, Ark error code, message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass
class Task:
    duration: int
    polls_left: int
    size: tuple[int, int] = PIXELS["720p"]["16:9"]
    fail_code: str | None = None
    status: str = "queued"
    url_generation: int = 0
    expired_up_to: int = 0  # result URLs of generations up to this one answer 403


@functools.lru_cache(maxsize=16)
def mp4_bytes(seconds: int, size: tuple[int, int] = PIXELS["720p"]["16:9"]) -> bytes:
    """A real H.264 MP4 of `seconds` at `size` and 24 fps (one colour: a few KB)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clip.mp4"
        frame = Image.new("RGB", size, (40, 80, 160))
        write_mp4(path, (frame for _ in range(seconds * FPS)), size, FPS)
        return path.read_bytes()


def jpeg_bytes(size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 150, 90)).save(buffer, format="JPEG")
    return buffer.getvalue()


def decode_image(value: Any, what: str) -> tuple[int, int] | None:
    """The size of a data-URI image; None for an http(s) URL; Refused for anything else."""
    if isinstance(value, str) and re.match(r"^https?://\S+$", value):
        return None
    match = DATA_URI.match(value) if isinstance(value, str) else None
    if match is None:
        raise Refused(400, "InvalidParameter", f"{what} is neither an image URL nor a data:image/<format>;base64 URI")
    try:
        with Image.open(io.BytesIO(base64.b64decode(match.group(2), validate=True))) as image:
            return image.size
    except (binascii.Error, ValueError, OSError):
        raise Refused(400, "InvalidImageURL", f"{what} does not decode as an image") from None


def parse_size(size: Any) -> tuple[int, int]:
    """The pixel size Seedream 4.0 takes: 1K/2K/4K, or WxH of 1280x720..4096x4096 pixels."""
    named = {"1K": (1024, 1024), "2K": (2048, 2048), "4K": (4096, 4096)}
    if size in named:
        return named[size]
    match = re.match(r"^(\d+)x(\d+)$", size) if isinstance(size, str) else None
    if match:
        width, height = int(match.group(1)), int(match.group(2))
        if 1280 * 720 <= width * height <= 4096 * 4096 and 1 / 16 <= width / height <= 16:
            return width, height
    raise Refused(400, "InvalidParameter", f"the parameter `size` ({size!r}) is not valid")


def text_commands(text: str) -> tuple[str, dict[str, str]]:
    """The prompt and its `--name value` commands (short names expanded)."""
    parts = re.split(r"\s--(\w+)\s+(\S+)", " " + text)
    commands = {COMMANDS.get(n, n): v for n, v in zip(parts[1::3], parts[2::3], strict=True)}
    unknown = set(commands) - KNOWN
    if unknown:
        raise Refused(400, "InvalidParameter", f"unknown text command(s) {sorted(unknown)}")
    return "".join(parts[0::3]).strip(), commands


class FakeArk(FakeServer):
    def __init__(self, api_key: str = "ark-test-key", polls: int = 2) -> None:
        super().__init__()
        self.api_key, self.polls = api_key, polls
        self.tasks: dict[str, Task] = {}
        self.files: dict[str, bytes] = {}
        self.leaks: list[str] = []
        self.hold = threading.Event()
        self.queue = threading.Event()  # while set, tasks stay queued
        self.cancelled: list[str] = []  # tasks cancelled by DELETE while queued
        self.most_unfinished = 0  # the most video tasks created and not yet finished at one moment
        self.poll_failures: list[int] = []  # the next task polls answer these HTTP statuses
        self._ids = itertools.count(1)

    def _count_unfinished(self) -> None:
        unfinished = sum(t.status in ("queued", "running") for t in self.tasks.values())
        self.most_unfinished = max(self.most_unfinished, unfinished)

    # --- routing ---------------------------------------------------------------------------
    def handle(self, request: Request) -> None:
        if request.path.startswith("/media/") or request.path.startswith("/files/"):
            self._download(request)
            return
        try:
            if request.headers.get("Authorization") != f"Bearer {self.api_key}":
                raise Refused(401, "AuthenticationError", "the API key in the request is missing or invalid")
            base = "/api/v3/contents/generations/tasks"
            if request.method == "POST" and request.path == "/api/v3/images/generations":
                self._image(request)
            elif request.method == "POST" and request.path == base:
                self._create_task(request)
            elif request.method == "GET" and request.path == base:
                self.reply_json(request, {"total": len(self.tasks), "items": []})
            elif request.method == "GET" and request.path.startswith(base + "/"):
                self._get_task(request, request.path.removeprefix(base + "/"))
            elif request.method == "DELETE" and request.path.startswith(base + "/"):
                self._delete_task(request, request.path.removeprefix(base + "/"))
            else:
                raise Refused(404, "NotFound", f"no route {request.method} {request.path}")
        except Refused as refused:
            self.reply_json(
                request,
                {"error": {"code": refused.code, "message": str(refused), "type": "BadRequest"}},
                refused.status,
            )

    def _scripted(self, request: Request) -> Action | None:
        """The next scripted action; None when it answered the request with an error."""
        action = self.next_action()
        if action.special == "quota":
            code = action.error or "AccountOverdueError"
            raise Refused(STATUS_OF_CODE.get(code, 403), code, f"{code}: scripted")
        if action.status == 200:
            return action
        code = {429: "RateLimitExceeded.EndpointRPMExceeded", 500: "InternalServiceError"}.get(
            action.status, "InvalidParameter"
        )
        headers = {"Retry-After": action.retry_after} if action.retry_after else {}
        self.reply_json(request, {"error": {"code": code, "message": action.error}}, action.status, headers)
        return None

    # --- images ----------------------------------------------------------------------------
    def _image(self, request: Request) -> None:
        body = request.json()
        if not isinstance(body, dict) or not body.get("model") or not body.get("prompt"):
            raise Refused(400, "MissingParameter", "the request is missing `model` or `prompt`")
        size = parse_size(body.get("size", "2048x2048"))
        images = body.get("image", [])
        images = [images] if isinstance(images, str) else images
        if not isinstance(images, list) or len(images) > 10:
            raise Refused(400, "InvalidParameter", "`image` takes one image or a list of 1-10")
        references = [decode_image(value, "image") for value in images]
        if body.get("response_format", "url") not in ("url", "b64_json"):
            raise Refused(400, "InvalidParameter", "`response_format` is url or b64_json")
        action = self._scripted(request)
        if action is None:
            return
        self.bill(
            kind="image",
            model=body["model"],
            prompt=body["prompt"],
            size=size,
            seed=body.get("seed"),
            watermark=body.get("watermark", True),
            references=references,
        )
        data = jpeg_bytes(size)
        if body.get("response_format", "url") == "b64_json":
            item = {"b64_json": base64.b64encode(data).decode(), "size": "{}x{}".format(*size)}
        else:
            name = f"{next(self._ids)}.jpeg"
            self.files[name] = data
            item = {"url": f"{self.url}/files/{name}", "size": "{}x{}".format(*size)}
        self.reply_json(
            request, {"model": body["model"], "created": 0, "data": [item], "usage": {"generated_images": 1}}
        )

    # --- video tasks -----------------------------------------------------------------------
    def _create_task(self, request: Request) -> None:
        body = request.json()
        if not isinstance(body, dict) or not body.get("model") or not body.get("content"):
            raise Refused(400, "MissingParameter", "the request is missing `model` or `content`")
        if not isinstance(body["content"], list):
            raise Refused(400, "InvalidParameter", "`content` must be a list")
        prompt, commands, frames = "", {}, {}
        for item in body["content"]:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text":
                prompt, commands = text_commands(str(item.get("text") or ""))
            elif kind == "image_url":
                role = item.get("role", "first_frame")
                if role not in ROLES:
                    raise Refused(400, "InvalidParameter", f"unknown content role {role!r}")
                size = decode_image((item.get("image_url") or {}).get("url"), role)
                if size is not None and not (300 < min(size) and max(size) < 6000 and 0.4 < size[0] / size[1] < 2.5):
                    raise Refused(400, "InvalidParameter", f"{role} of {size} is out of range")
                frames[role] = size
            else:
                raise Refused(400, "InvalidParameter", f"unknown content type {kind!r}")
        if not prompt:
            raise Refused(400, "MissingParameter", "the text prompt is missing")
        if "last_frame" in frames and "first_frame" not in frames:
            raise Refused(400, "InvalidParameter", "a last_frame needs a first_frame")
        duration = commands.get("duration", "5")
        if not duration.isdigit() or not 2 <= int(duration) <= 12:
            raise Refused(400, "InvalidParameter", f"duration {duration!r} is not 2-12 seconds")
        if commands.get("ratio", "16:9") not in RATIOS:
            raise Refused(400, "InvalidParameter", f"ratio {commands['ratio']!r} is not valid")
        resolution = commands.get("resolution", "720p")
        if resolution not in PIXELS:
            raise Refused(400, "InvalidParameter", f"resolution {resolution!r} is not 480p, 720p or 1080p")
        if commands.get("framespersecond", str(FPS)) != str(FPS):
            raise Refused(400, "InvalidParameter", f"framespersecond {commands['framespersecond']!r} is not 24")
        ratio = commands.get("ratio", "16:9")
        size = PIXELS[resolution][ratio if ratio in PIXELS[resolution] else "16:9"]
        action = self._scripted(request)
        if action is None:
            return
        task_id = f"cgt-{next(self._ids):06d}"
        self.tasks[task_id] = Task(
            duration=int(duration),
            size=size,
            polls_left=self.polls,
            fail_code=action.error if action.special == "fail" else None,
            expired_up_to=1 if action.special == "expired_url" else 0,
        )
        self._count_unfinished()
        self.bill(
            kind="video",
            id=task_id,
            model=body["model"],
            prompt=prompt,
            commands=commands,
            frames=frames,
            seconds=int(duration),
        )
        self.reply_json(request, {"id": task_id})

    def _get_task(self, request: Request, task_id: str) -> None:
        task = self.tasks.get(task_id)
        if task is None:
            raise Refused(404, "NotFound", f"task {task_id} does not exist")
        with self._lock:
            status = self.poll_failures.pop(0) if self.poll_failures else None
        if status is not None:
            raise Refused(status, "InternalServiceError", "scripted poll failure")
        if task.status == "queued" and not self.queue.is_set():
            task.status = "running"
        elif task.status == "running" and not self.hold.is_set():
            task.polls_left -= 1
            if task.polls_left <= 0:
                task.status = "failed" if task.fail_code else "succeeded"
        answer: dict[str, Any] = {
            "id": task_id,
            "model": "seedance",
            "status": task.status,
            "error": None,
            "created_at": 0,
            "updated_at": 0,
        }
        if task.status == "failed":
            answer["error"] = {"code": task.fail_code, "message": "scripted failure"}
        if task.status == "succeeded":
            task.url_generation += 1  # every read hands out a freshly signed URL
            answer["content"] = {"video_url": f"{self.url}/media/{task_id}/{task.url_generation}.mp4"}
            answer["duration"] = task.duration
        self.reply_json(request, answer)

    def _delete_task(self, request: Request, task_id: str) -> None:
        """A queued task is cancelled; a running one cannot be; a finished one is deleted."""
        task = self.tasks.get(task_id)
        if task is None:
            raise Refused(404, "NotFound", f"task {task_id} does not exist")
        if task.status == "running":
            raise Refused(400, "InvalidParameter", f"task {task_id} is running and cannot be cancelled")
        if task.status == "queued":
            task.status = "cancelled"
            self.cancelled.append(task_id)
        else:
            del self.tasks[task_id]
        self.reply_json(request, {})

    def _download(self, request: Request) -> None:
        if request.headers.get("Authorization"):
            self.leaks.append(request.path)
        if request.path.startswith("/files/"):
            data = self.files.get(request.path.removeprefix("/files/"))
            if data is None:
                self.reply(request, b"<Error>NoSuchKey</Error>", 404, "application/xml")
            else:
                self.reply(request, data, content_type="image/jpeg")
            return
        task_id, _, name = request.path.removeprefix("/media/").partition("/")
        task = self.tasks.get(task_id)
        generation = int(name.removesuffix(".mp4") or 0) if name[:-4].isdigit() else 0
        if task is None or generation == 0 or generation <= task.expired_up_to:
            self.reply(request, b"<Error>AccessDenied: Request has expired</Error>", 403, "application/xml")
            return
        self.reply(request, mp4_bytes(task.duration, task.size), content_type="video/mp4")
