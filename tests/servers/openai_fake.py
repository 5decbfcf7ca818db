"""A fake OpenAI images API: POST /v1/images/generations (JSON), POST /v1/images/edits
(multipart), GET /files/* (for url answers).

Strict like the real one: `model` and `prompt` are required; a known model takes only its sizes
(GPT image models 1024x1024, 1536x1024, 1024x1536; DALL-E 3 1024x1024, 1792x1024, 1024x1792;
DALL-E 2 256x256, 512x512, 1024x1024), any other model any WxH; `response_format` is refused for
GPT image models; an edit must be a multipart form whose `image[]` parts (1 to 16) are png, jpeg
or webp files, and DALL-E 3 cannot edit. Answers a PNG of the size asked (b64_json, or a url
when `use_urls`). Specials: wrong_size (16 px too wide, still billed), not_image (billed too).
"""

from __future__ import annotations

import base64
import io
import itertools
from typing import Any

from PIL import Image
from servers.scripted import FakeServer, Request, parse_form, png_bytes

GPT_SIZES = {"1024x1024", "1536x1024", "1024x1536"}
SIZES = {"dall-e-2": {"256x256", "512x512", "1024x1024"}, "dall-e-3": {"1024x1024", "1792x1024", "1024x1792"}}


def sizes_of(model: str) -> set[str] | None:
    return GPT_SIZES if model.startswith(("gpt-image", "chatgpt-image")) else SIZES.get(model)


class FakeOpenAI(FakeServer):
    def __init__(self, api_key: str = "sk-test-secret", use_urls: bool = False) -> None:
        super().__init__()
        self.api_key, self.use_urls = api_key, use_urls
        self.files: dict[str, bytes] = {}
        self._ids = itertools.count(1)

    def handle(self, request: Request) -> None:
        if request.method == "GET" and request.path.startswith("/files/"):
            data = self.files.get(request.path.removeprefix("/files/"))
            if data is None:
                self.reply_json(request, {"error": "no such file"}, 404)
            else:
                self.reply(request, data, content_type="image/png")
            return
        if request.path not in ("/v1/images/generations", "/v1/images/edits"):
            self.reply_json(request, {"error": "not found"}, 404)
            return
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            self.reply_json(request, {"error": {"message": "Incorrect API key"}}, 401)
            return
        if request.path.endswith("/edits"):
            body, images, problem = self._edit_form(request)
        else:
            body, images = request.json(), []
            problem = None if isinstance(body, dict) else "the body must be a JSON object"
        problem = problem or self._problem(body, images, request.path.endswith("/edits"))
        if problem:
            self.reply_json(request, {"error": {"message": problem, "type": "invalid_request_error"}}, 400)
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        self._answer(request, body, images, action.special)

    @staticmethod
    def _edit_form(request: Request) -> tuple[dict[str, Any], list[bytes], str | None]:
        parts = parse_form(request)
        if parts is None:
            return {}, [], "an edit must be sent as multipart/form-data"
        body = {name: data.decode() for name, filename, data in parts if filename is None}
        images = [data for name, filename, data in parts if filename is not None and name == "image[]"]
        if any(filename is not None and name != "image[]" for name, filename, _ in parts):
            return body, images, "input images go in image[] parts"
        return body, images, None

    @staticmethod
    def _problem(body: dict[str, Any], images: list[bytes], edit: bool) -> str | None:
        """What the real API would refuse in this request, or None."""
        model = body.get("model")
        if not body.get("prompt") or not model:
            return "missing required parameter: 'model' and 'prompt'"
        sizes = sizes_of(model)
        size = str(body.get("size", ""))
        width, _, height = size.partition("x")
        if not (width.isdigit() and height.isdigit()) or (sizes and size not in sizes):
            return f"Invalid value for 'size': {size!r}; supported: {sorted(sizes or [])}"
        if "response_format" in body and model.startswith("gpt-image"):
            return "Unknown parameter: 'response_format'."
        if edit:
            if model == "dall-e-3":
                return "Invalid value: 'dall-e-3'. Value must be 'dall-e-2' or a GPT image model"
            if not 1 <= len(images) <= 16:
                return f"an edit takes 1 to 16 images, got {len(images)}"
            for data in images:
                try:
                    with Image.open(io.BytesIO(data)) as image:
                        if image.format not in ("PNG", "JPEG", "WEBP"):
                            return f"unsupported image format {image.format}"
                except OSError:
                    return "Invalid image file or mode"
        return None

    def _answer(self, request: Request, body: dict[str, Any], images: list[bytes], special: str) -> None:
        width, height = (int(v) for v in str(body["size"]).split("x"))
        self.bill(model=body["model"], size=body["size"], prompt=body["prompt"], endpoint=request.path, images=images)
        if special == "not_image":
            data = b"<html>this is not an image</html>"
        else:
            data = png_bytes((width + 16, height) if special == "wrong_size" else (width, height))
        if self.use_urls:
            name = f"{next(self._ids)}.png"
            self.files[name] = data
            item = {"url": f"{self.url}/files/{name}"}
        else:
            item = {"b64_json": base64.b64encode(data).decode()}
        self.reply_json(request, {"created": 0, "data": [item]})
