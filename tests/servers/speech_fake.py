"""A fake OpenAI speech API: POST /v1/audio/speech (JSON in, audio bytes out).

Strict like the real one: a Bearer key; a JSON object with `model`, `input` (1 to 4096
characters) and `voice` (one of the built-in voices, marin and cedar included) required,
`response_format` one of mp3, opus, aac, flac, wav, pcm, `speed` 0.25 to 4, `instructions` and
`stream_format` (audio or sse) optional, anything else refused;
errors as `{"error": {"message", "type", "param", "code"}}` (an unknown voice is a 400 naming
the `voice` param). A `pcm` answer is 16-bit mono samples at 24 kHz, a tone lasting 60 ms a
character. Specials: cut (the answer stops halfway through the Content-Length it announced).
"""

from __future__ import annotations

import math
import struct
from typing import Any

from servers.scripted import FakeServer, Request

VOICES = {
    "alloy",
    "ash",
    "ballad",
    "cedar",
    "coral",
    "echo",
    "fable",
    "marin",
    "nova",
    "onyx",
    "sage",
    "shimmer",
    "verse",
}
FORMATS = {"mp3", "opus", "aac", "flac", "wav", "pcm"}
KNOWN = {"model", "input", "voice", "response_format", "speed", "instructions", "stream_format"}
RATE = 24000


def tone(seconds: float) -> bytes:
    """A 220 Hz tone of `seconds` as 16-bit little-endian samples at RATE."""
    count = round(seconds * RATE)
    return b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 220 * i / RATE))) for i in range(count))


class FakeSpeech(FakeServer):
    def __init__(self, api_key: str = "sk-test-secret") -> None:
        super().__init__()
        self.api_key = api_key

    def handle(self, request: Request) -> None:
        if request.method != "POST" or request.path != "/v1/audio/speech":
            self.reply_json(request, {"error": {"message": "not found", "type": "invalid_request_error"}}, 404)
            return
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            self.reply_json(
                request, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}, 401
            )
            return
        body = request.json()
        problem = self._problem(body)
        if problem:
            param, message = problem
            error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
            self.reply_json(request, {"error": error}, 400)
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        self.bill(model=body["model"], voice=body["voice"], input=body["input"])
        if body.get("response_format", "mp3") != "pcm":  # only pcm is made here: other formats are marked
            self.reply(request, f"({body.get('response_format', 'mp3')} audio)".encode(), content_type="audio/mpeg")
            return
        audio = tone(0.06 * len(body["input"]))
        if action.special == "cut":  # the connection drops halfway through the announced body
            handler = request.handler
            handler.send_response(200)
            handler.send_header("Content-Type", "audio/pcm")
            handler.send_header("Content-Length", str(len(audio)))
            handler.end_headers()
            handler.wfile.write(audio[: len(audio) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        self.reply(request, audio, content_type="audio/pcm")

    @staticmethod
    def _problem(body: Any) -> tuple[str | None, str] | None:
        """(param, message) the real API would refuse this body with, or None."""
        if not isinstance(body, dict):
            return None, "the body must be a JSON object"
        for name in ("model", "input", "voice"):
            if not isinstance(body.get(name), str) or not body[name]:
                return name, f"Missing required parameter: '{name}'."
        unknown = sorted(set(body) - KNOWN)
        if unknown:
            return unknown[0], f"Unrecognized request argument supplied: {unknown[0]}"
        if len(body["input"]) > 4096:
            return "input", "'input' is longer than 4096 characters"
        if body["voice"] not in VOICES:
            return "voice", f"Invalid value for 'voice': {body['voice']!r}; supported: {sorted(VOICES)}"
        if body.get("response_format", "mp3") not in FORMATS:
            return "response_format", f"Invalid value for 'response_format': {body['response_format']!r}"
        if body.get("stream_format", "audio") not in {"audio", "sse"}:
            return "stream_format", f"Invalid value for 'stream_format': {body['stream_format']!r}"
        speed = body.get("speed", 1.0)
        if not isinstance(speed, (int, float)) or not 0.25 <= speed <= 4:
            return "speed", "'speed' must be from 0.25 to 4.0"
        return None
