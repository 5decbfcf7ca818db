"""A fake OpenAI-compatible images endpoint: POST /v1/images/generations (+ GET /files/*)."""

from __future__ import annotations

import base64
import itertools

from servers.scripted import FakeServer, Request, png_bytes


class FakeOpenAI(FakeServer):
    """Answers with a PNG of the requested size (b64_json, or a url when `use_urls`).

    Specials: wrong_size (an image 16 px too wide, still billed), not_image (billed too).
    """

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
        if request.path != "/v1/images/generations":
            self.reply_json(request, {"error": "not found"}, 404)
            return
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            self.reply_json(request, {"error": {"message": "Incorrect API key"}}, 401)
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        body = request.json()
        width, height = (int(v) for v in body["size"].split("x"))
        self.bill(model=body["model"], size=body["size"], prompt=body["prompt"])
        if action.special == "not_image":
            data = b"<html>this is not an image</html>"
        else:
            data = png_bytes((width + 16, height) if action.special == "wrong_size"
                             else (width, height))
        if self.use_urls:
            name = f"{next(self._ids)}.png"
            self.files[name] = data
            item = {"url": f"{self.url}/files/{name}"}
        else:
            item = {"b64_json": base64.b64encode(data).decode()}
        self.reply_json(request, {"created": 0, "data": [item]})
