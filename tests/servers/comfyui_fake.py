"""A fake ComfyUI: POST /prompt, GET /history/{id}, GET /queue, GET /view.

A submitted run is billed once and finishes after `polls_to_finish` history polls (history is
empty while it runs, as in ComfyUI). Specials on /prompt: wrong_size (the run's image is the
wrong size), exec_error:MESSAGE (the run fails with that exception message).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass

from servers.scripted import FakeServer, Request, png_bytes


@dataclass
class Run:
    size: tuple[int, int]
    polls_left: int
    error: str | None = None
    wrong_size: bool = False


class FakeComfyUI(FakeServer):
    def __init__(self, polls_to_finish: int = 2) -> None:
        super().__init__()
        self.polls_to_finish = polls_to_finish
        self.runs: dict[str, Run] = {}
        self._numbers = itertools.count(1)

    def forget(self, prompt_id: str) -> None:
        """Drop a run, as a restarted server would."""
        self.runs.pop(prompt_id, None)

    def handle(self, request: Request) -> None:
        if request.method == "POST" and request.path == "/prompt":
            self._submit(request)
        elif request.path.startswith("/history/"):
            self._history(request, request.path.removeprefix("/history/"))
        elif request.path == "/queue":
            running = [[n, pid, {}, {}, []] for n, (pid, run) in enumerate(self.runs.items())
                       if run.polls_left > 0]
            self.reply_json(request, {"queue_running": running[:1], "queue_pending": running[1:]})
        elif request.path == "/view":
            run = self.runs.get(request.query.get("filename", "").removesuffix(".png"))
            if run is None:
                self.reply_json(request, {"error": "no such image"}, 404)
                return
            size = (run.size[0] + 8, run.size[1]) if run.wrong_size else run.size
            self.reply(request, png_bytes(size), content_type="image/png")
        else:
            self.reply_json(request, {"error": "not found"}, 404)

    def _submit(self, request: Request) -> None:
        action = self.next_action()
        if self.failed(request, action):
            return
        workflow = request.json()["prompt"]
        latent = next(node["inputs"] for node in workflow.values()
                      if node["class_type"] == "EmptyLatentImage")
        prompt_id = str(uuid.uuid4())
        self.runs[prompt_id] = Run(size=(latent["width"], latent["height"]),
                                   polls_left=self.polls_to_finish,
                                   error=action.error if action.special == "exec_error" else None,
                                   wrong_size=action.special == "wrong_size")
        self.bill(prompt_id=prompt_id, workflow=workflow)
        self.reply_json(request, {"prompt_id": prompt_id, "number": next(self._numbers),
                                  "node_errors": {}})

    def _history(self, request: Request, prompt_id: str) -> None:
        run = self.runs.get(prompt_id)
        if run is None or run.polls_left > 0:
            if run is not None:
                run.polls_left -= 1
            self.reply_json(request, {})
            return
        if run.error is not None:
            status = {"status_str": "error", "completed": False, "messages": [
                ["execution_start", {"prompt_id": prompt_id}],
                ["execution_error", {"prompt_id": prompt_id, "node_type": "KSampler",
                                     "exception_type": "RuntimeError",
                                     "exception_message": run.error}]]}
            outputs = {}
        else:
            status = {"status_str": "success", "completed": True, "messages": []}
            outputs = {"9": {"images": [{"filename": f"{prompt_id}.png",
                                         "subfolder": "pipeline_kit", "type": "output"}]}}
        self.reply_json(request, {prompt_id: {"prompt": [], "outputs": outputs,
                                              "status": status}})
