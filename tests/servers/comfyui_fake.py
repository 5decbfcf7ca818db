"""A fake ComfyUI: POST /upload/image, POST /prompt, GET /history/{id}, /queue, /view, and /ws.

Strict like the real server: an upload must be a multipart form with the file as `image` (and a
`type` of input, temp or output); a workflow is validated before it is queued (400 with
`node_errors`): every node's class must be one it knows, with its required inputs, numbers as
numbers, links to nodes that exist, a LoadImage naming an uploaded file, and at least one output
node. A run is billed once and finishes after `polls_to_finish` steps: a history poll is a step,
and so is each tick while its client listens on the websocket (which then gets `progress`,
`executing` and `execution_success` messages, as ComfyUI sends them). A SaveImage run saves a
PNG of its latent's size ("images"); a VHS_VideoCombine run saves an MP4 of `length` frames at
`frame_rate` ("gifs", as VideoHelperSuite names it). Specials on /prompt: wrong_size (the image
is 8 px too wide), exec_error:MESSAGE (the run fails), short_clip (the clip is half as long).
"""

from __future__ import annotations

import io
import itertools
import json
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from PIL import Image
from servers.scripted import FakeServer, Request, parse_form, png_bytes

from pipeline_kit.backends.clip import write_mp4

# class_type -> required input -> "i" integer, "f" number, "s" text, "b" boolean, "L" link
NODES: dict[str, dict[str, str]] = {
    "CheckpointLoaderSimple": {"ckpt_name": "s"},
    "UNETLoader": {"unet_name": "s", "weight_dtype": "s"},
    "CLIPLoader": {"clip_name": "s", "type": "s"},
    "DualCLIPLoader": {"clip_name1": "s", "clip_name2": "s", "type": "s"},
    "VAELoader": {"vae_name": "s"},
    "LoadImage": {"image": "s"},
    "FluxKontextImageScale": {"image": "L"},
    "VAEEncode": {"pixels": "L", "vae": "L"},
    "CLIPTextEncode": {"text": "s", "clip": "L"},
    "ReferenceLatent": {"conditioning": "L"},
    "FluxGuidance": {"conditioning": "L", "guidance": "f"},
    "ConditioningZeroOut": {"conditioning": "L"},
    "EmptyLatentImage": {"width": "i", "height": "i", "batch_size": "i"},
    "EmptySD3LatentImage": {"width": "i", "height": "i", "batch_size": "i"},
    "ModelSamplingSD3": {"model": "L", "shift": "f"},
    "KSampler": {
        "seed": "i",
        "steps": "i",
        "cfg": "f",
        "sampler_name": "s",
        "scheduler": "s",
        "denoise": "f",
        "model": "L",
        "positive": "L",
        "negative": "L",
        "latent_image": "L",
    },
    "WanFirstLastFrameToVideo": {
        "positive": "L",
        "negative": "L",
        "vae": "L",
        "width": "i",
        "height": "i",
        "length": "i",
        "batch_size": "i",
    },
    "VAEDecode": {"samples": "L", "vae": "L"},
    "SaveImage": {"filename_prefix": "s", "images": "L"},
    "VHS_VideoCombine": {
        "images": "L",
        "frame_rate": "f",
        "loop_count": "i",
        "filename_prefix": "s",
        "format": "s",
        "pingpong": "b",
        "save_output": "b",
    },
}
OUTPUT_NODES = ("SaveImage", "VHS_VideoCombine")
CHECKS = {
    "i": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "f": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "s": lambda v: isinstance(v, str),
    "b": lambda v: isinstance(v, bool),
    "L": lambda v: isinstance(v, list) and len(v) == 2,
}


@dataclass
class Run:
    size: tuple[int, int]
    polls_left: int
    client_id: str = ""
    error: str | None = None
    wrong_size: bool = False
    video: tuple[int, float] | None = None  # (frames, fps) of a clip
    steps: int = 0
    files: dict[str, bytes] = field(default_factory=dict)


class FakeComfyUI(FakeServer):
    def __init__(self, polls_to_finish: int = 2, *, websocket: bool = True, tick_s: float = 0.02) -> None:
        super().__init__()
        self.polls_to_finish, self.websocket, self.tick_s = polls_to_finish, websocket, tick_s
        self.runs: dict[str, Run] = {}
        self.uploads: dict[str, bytes] = {}  # "subfolder/name" in the input folder -> bytes
        self.sockets: dict[str, Any] = {}  # client id -> websocket connection
        self.history_polls = 0
        self._numbers = itertools.count(1)
        self._ticker: threading.Thread | None = None

    def forget(self, prompt_id: str) -> None:
        """Drop a run, as a restarted server would."""
        self.runs.pop(prompt_id, None)

    def handle(self, request: Request) -> None:
        if request.method == "POST" and request.path == "/prompt":
            self._submit(request)
        elif request.method == "POST" and request.path == "/upload/image":
            self._upload(request)
        elif request.path == "/ws" and self.websocket and request.headers.get("Upgrade", "").lower() == "websocket":
            self._websocket(request)
        elif request.path.startswith("/history/"):
            self.history_polls += 1
            self._history(request, request.path.removeprefix("/history/"))
        elif request.path == "/queue":
            running = [[n, pid, {}, {}, []] for n, (pid, run) in enumerate(self.runs.items()) if run.polls_left > 0]
            self.reply_json(request, {"queue_running": running[:1], "queue_pending": running[1:]})
        elif request.path == "/view":
            self._view(request)
        else:
            self.reply_json(request, {"error": "not found"}, 404)

    # --- uploads and validation ------------------------------------------------------------
    def _upload(self, request: Request) -> None:
        parts = parse_form(request)
        form = {
            name: (filename, data) if filename is not None else data.decode() for name, filename, data in parts or []
        }
        image = form.get("image")
        kind = form.get("type", "input")
        if not isinstance(image, tuple) or not image[0] or kind not in ("input", "temp", "output"):
            self.reply(request, b"", 400, content_type="text/plain")
            return
        try:
            Image.open(io.BytesIO(image[1])).verify()
        except Exception:
            self.reply(request, b"", 400, content_type="text/plain")
            return
        subfolder = str(form.get("subfolder", ""))
        name = image[0]
        key = f"{subfolder}/{name}" if subfolder else name
        if key in self.uploads and form.get("overwrite") not in ("true", "1") and self.uploads[key] != image[1]:
            stem, dot, ext = name.rpartition(".")
            name = f"{stem} (1){dot}{ext}"
            key = f"{subfolder}/{name}" if subfolder else name
        self.uploads[key] = image[1]
        self.reply_json(request, {"name": name, "subfolder": subfolder, "type": kind})

    def node_errors(self, workflow: dict[str, Any]) -> dict[str, Any]:
        """ComfyUI's validation, in its answer's shape: node id -> errors."""
        found: dict[str, Any] = {}
        for node_id, node in workflow.items():
            schema = NODES.get(node.get("class_type"))
            inputs = node.get("inputs", {})
            errors = []
            if schema is None:
                errors.append(("invalid_prompt", f"node {node.get('class_type')} does not exist"))
                schema = {}
            for name, kind in schema.items():
                if name not in inputs:
                    errors.append(("required_input_missing", name))
                elif not CHECKS[kind](inputs[name]):
                    errors.append(("invalid_input_type", f"{name}: {inputs[name]!r}"))
            for name, value in inputs.items():
                if isinstance(value, list) and len(value) == 2 and value[0] not in workflow:
                    errors.append(("bad_linked_input", f"{name} links missing node {value[0]}"))
                if isinstance(value, str) and "{{" in value:
                    errors.append(("invalid_input_type", f"{name}: unfilled {value!r}"))
            if node.get("class_type") == "LoadImage" and inputs.get("image") not in self.uploads:
                errors.append(("value_not_in_list", f"image: {inputs.get('image')!r} not in {sorted(self.uploads)}"))
            if errors:
                found[node_id] = {
                    "class_type": node.get("class_type"),
                    "dependent_outputs": [],
                    "errors": [{"type": t, "message": t, "details": d, "extra_info": {}} for t, d in errors],
                }
        return found

    def _submit(self, request: Request) -> None:
        body = request.json()
        workflow = body.get("prompt") if isinstance(body, dict) else None
        if not isinstance(workflow, dict):
            self.reply_json(request, {"error": "no prompt", "node_errors": []}, 400)
            return
        errors = self.node_errors(workflow)
        outputs = [n for n in workflow.values() if n.get("class_type") in OUTPUT_NODES]
        if errors or not outputs:
            error = {
                "type": "prompt_outputs_failed_validation" if errors else "prompt_no_outputs",
                "message": "Prompt outputs failed validation",
                "details": "",
                "extra_info": {},
            }
            self.reply_json(request, {"error": error, "node_errors": errors}, 400)
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        prompt_id = str(uuid.uuid4())
        self.runs[prompt_id] = self._run(workflow, action, str(body.get("client_id", "")))
        self.bill(prompt_id=prompt_id, workflow=workflow)
        self.reply_json(request, {"prompt_id": prompt_id, "number": next(self._numbers), "node_errors": {}})

    def _run(self, workflow: dict[str, Any], action: Any, client_id: str) -> Run:
        by_class = {n["class_type"]: n["inputs"] for n in workflow.values()}
        sized = next(n["inputs"] for n in workflow.values() if "width" in n["inputs"])
        run = Run(
            size=(sized["width"], sized["height"]),
            polls_left=self.polls_to_finish,
            client_id=client_id,
            error=action.error if action.special == "exec_error" else None,
            wrong_size=action.special == "wrong_size",
        )
        if "VHS_VideoCombine" in by_class:
            frames = by_class["WanFirstLastFrameToVideo"]["length"]
            run.video = (
                frames // 2 if action.special == "short_clip" else frames,
                float(by_class["VHS_VideoCombine"]["frame_rate"]),
            )
        return run

    # --- progress ----------------------------------------------------------------------------
    def _step(self, prompt_id: str, run: Run) -> None:
        """One step of a run; the last one saves its outputs and tells its listener."""
        if run.polls_left <= 0:
            return
        run.polls_left -= 1
        run.steps += 1
        self._send(
            run.client_id,
            "progress",
            {"value": run.steps, "max": self.polls_to_finish, "prompt_id": prompt_id, "node": "10"},
        )
        if run.polls_left == 0:
            self._send(run.client_id, "executing", {"node": None, "prompt_id": prompt_id})
            self._send(run.client_id, "execution_success", {"prompt_id": prompt_id})

    def _history(self, request: Request, prompt_id: str) -> None:
        run = self.runs.get(prompt_id)
        if run is not None:
            self._step(prompt_id, run)
        if run is None or run.polls_left > 0:
            self.reply_json(request, {})
            return
        if run.error is not None:
            status = {
                "status_str": "error",
                "completed": False,
                "messages": [
                    ["execution_start", {"prompt_id": prompt_id}],
                    [
                        "execution_error",
                        {
                            "prompt_id": prompt_id,
                            "node_type": "KSampler",
                            "exception_type": "RuntimeError",
                            "exception_message": run.error,
                        },
                    ],
                ],
            }
            outputs: dict[str, Any] = {}
        else:
            status = {"status_str": "success", "completed": True, "messages": []}
            outputs = {"90": {"images": [{"filename": f"{prompt_id}_preview.png", "subfolder": "", "type": "temp"}]}}
            if run.video:
                outputs["12"] = {
                    "gifs": [
                        {
                            "filename": f"{prompt_id}.mp4",
                            "subfolder": "pipeline_kit",
                            "type": "output",
                            "format": "video/h264-mp4",
                            "frame_rate": run.video[1],
                            "workflow": f"{prompt_id}.png",
                        }
                    ]
                }
            else:
                outputs["9"] = {
                    "images": [{"filename": f"{prompt_id}.png", "subfolder": "pipeline_kit", "type": "output"}]
                }
        self.reply_json(request, {prompt_id: {"prompt": [], "outputs": outputs, "status": status}})

    def _view(self, request: Request) -> None:
        query = request.query
        filename = query.get("filename", "")
        prompt_id = filename.removesuffix(".png").removesuffix(".mp4").removesuffix("_preview")
        run = self.runs.get(prompt_id)
        if run is None or run.polls_left > 0 or "type" not in query:
            self.reply_json(request, {"error": "no such file"}, 404)
            return
        if filename.endswith("_preview.png"):
            self.reply(request, png_bytes((8, 8)), content_type="image/png")
        elif query.get("subfolder") != "pipeline_kit" or query["type"] != "output":
            self.reply_json(request, {"error": "no such file"}, 404)
        elif filename.endswith(".mp4") and run.video:
            self.reply(request, self._clip(run), content_type="video/mp4")
        else:
            size = (run.size[0] + 8, run.size[1]) if run.wrong_size else run.size
            self.reply(request, png_bytes(size), content_type="image/png")

    @staticmethod
    def _clip(run: Run) -> bytes:
        assert run.video is not None
        if "clip" not in run.files:
            frames, fps = run.video
            with TemporaryDirectory() as folder:
                path = Path(folder) / "clip.mp4"
                picture = Image.new("RGB", (64, 36), (40, 90, 160))
                write_mp4(path, (picture for _ in range(frames)), (64, 36), round(fps))
                run.files["clip"] = path.read_bytes()
        return run.files["clip"]

    # --- websocket ---------------------------------------------------------------------------
    def _websocket(self, request: Request) -> None:
        """Accept the upgrade and keep the socket until the client closes it."""
        from websockets.protocol import State
        from websockets.server import ServerProtocol
        from websockets.sync.connection import Connection
        from websockets.utils import accept_key

        handler = request.handler
        client_id = request.query.get("clientId") or uuid.uuid4().hex
        handler.send_response(101)
        handler.send_header("Upgrade", "websocket")
        handler.send_header("Connection", "Upgrade")
        handler.send_header("Sec-WebSocket-Accept", accept_key(request.headers["Sec-WebSocket-Key"]))
        handler.end_headers()
        handler.wfile.flush()
        handler.close_connection = True
        connection = Connection(
            handler.connection, ServerProtocol(state=State.OPEN), ping_interval=None, close_timeout=1
        )
        self.sockets[client_id] = connection
        self._send(client_id, "status", {"status": {"exec_info": {"queue_remaining": 0}}, "sid": client_id})
        self._start_ticker()
        try:
            for _ in connection:
                pass
        except Exception:
            pass
        finally:
            self.sockets.pop(client_id, None)

    def _send(self, client_id: str, kind: str, data: dict[str, Any]) -> None:
        connection = self.sockets.get(client_id)
        if connection is not None:
            try:
                connection.send(json.dumps({"type": kind, "data": data}))
            except Exception:
                self.sockets.pop(client_id, None)

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        """Runs whose client listens go on without history polls, as on a real server."""
        while not self._stopping.wait(self.tick_s):
            for prompt_id, run in list(self.runs.items()):
                if run.client_id in self.sockets:
                    self._step(prompt_id, run)
