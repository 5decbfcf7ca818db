"""A fake of Volcengine's speech service, V3 HTTP Chunked one-way streaming (docs 6561/1598757):
POST /api/v3/tts/unidirectional.

Strict like the documentation: `X-Api-App-Id` with `X-Api-Access-Key` (or `X-Api-Key` alone) and
an `X-Api-Resource-Id` the account holds; a JSON body `{"user": {"uid"}, "namespace",
"req_params": {"text" | "ssml", "speaker", "audio_params": {"format", "sample_rate", ...},
"model", "additions", "mix_speaker"}}`, anything else refused. The answer is chunked: JSON objects,
one a chunk, `{"code": 0, "message": "", "data": BASE64}` for audio, one `{"code": 0, "data": null,
"sentence": {...}}`, then `{"code": 20000000, "message": "ok", "data": null}` (with `"usage":
{"text_words": N}` when `X-Control-Require-Usage-Tokens-Return` asks). `pcm` audio is 16-bit
mono at the sample rate asked, a tone lasting 60 ms a character. A voice the resource does not
grant answers the documented 45000000 "speaker permission denied" object, a bad parameter
45000001. The documentation gives no HTTP status for refused credentials or an unknown resource:
here they are 401 and 403 with a `{"code", "message"}` body. Billing: a line is billed once its
whole answer is made (recorded before it is sent, so a test never reads the bill too early); a
cut answer is not billed.

Scripted specials: cut (half the audio, then the connection drops mid-stream), busy (45000000
"quota exceeded for types: concurrency"), fail (55000000, the service's own error); 429 and 5xx
as HTTP statuses.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from typing import Any

from servers.scripted import FakeServer, Request

PATH = "/api/v3/tts/unidirectional"
RESOURCES = {
    "seed-tts-1.0",
    "seed-tts-1.0-concurr",
    "seed-tts-2.0",
    "seed-icl-1.0",
    "seed-icl-1.0-concurr",
    "seed-icl-2.0",
}
# a few voices of the documented lists: "Doubao speech 2.0" voices, and 1.0 voices from the examples
VOICES = {
    "seed-tts-2.0": {
        "zh_female_vv_uranus_bigtts",
        "zh_female_xiaohe_uranus_bigtts",
        "zh_male_m191_uranus_bigtts",
        "zh_male_taocheng_uranus_bigtts",
        "zh_female_cancan_uranus_bigtts",
        "en_male_tim_uranus_bigtts",
        "en_female_dacey_uranus_bigtts",
        "en_female_stokie_uranus_bigtts",
    },
    "seed-tts-1.0": {"zh_female_shuangkuaisisi_moon_bigtts", "zh_female_cancan_mars_bigtts"},
}
FORMATS = {"mp3", "ogg_opus", "pcm", "wav"}
RATES = {8000, 16000, 22050, 24000, 32000, 44100, 48000}
TOP = {"user", "namespace", "req_params"}
REQ = {"text", "model", "ssml", "speaker", "audio_params", "additions", "mix_speaker"}
AUDIO = {
    "format",
    "sample_rate",
    "bit_rate",
    "emotion",
    "emotion_scale",
    "speech_rate",
    "loudness_rate",
    "enable_timestamp",
    "enable_subtitle",
}
CHUNK = 4800  # bytes of audio per object (100 ms at 24 kHz)


def tone(seconds: float, rate: int) -> bytes:
    """A 330 Hz tone of `seconds` as 16-bit little-endian samples at `rate`."""
    count = round(seconds * rate)
    return b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 330 * i / rate))) for i in range(count))


class FakeDoubao(FakeServer):
    def __init__(self, app_id: str = "7000000001", access_key: str = "doubao-access-key", api_key: str = "") -> None:
        super().__init__()
        self.app_id, self.access_key, self.api_key = app_id, access_key, api_key
        self.granted = {"seed-tts-2.0", "seed-tts-1.0"}  # the resources the account holds

    def handle(self, request: Request) -> None:
        if request.method != "POST" or request.path != PATH:
            self.reply_json(request, {"code": 45000000, "message": "not found"}, 404)
            return
        if not self._authenticated(request.headers):
            self.reply_json(request, {"code": 45000000, "message": "invalid auth: app id or access key"}, 401)
            return
        resource = request.headers.get("X-Api-Resource-Id", "")
        if resource not in RESOURCES or resource not in self.granted:
            self.reply_json(
                request, {"code": 45000000, "message": f"[resource_id={resource}] requested resource not granted"}, 403
            )
            return
        try:
            body = request.json()
        except ValueError:
            body = None
        problem = self._problem(body)
        if problem:
            self._stream(request, [{"code": 45000001, "message": problem, "data": None}])
            return
        req = body["req_params"]
        if req["speaker"] not in VOICES.get(resource, set()):
            self._stream(
                request,
                [
                    {
                        "code": 45000000,
                        "message": "speaker permission denied: get resource id: access denied",
                        "data": None,
                    }
                ],
            )
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        if action.special == "busy":
            self._stream(
                request, [{"code": 45000000, "message": "quota exceeded for types: concurrency", "data": None}]
            )
            return
        if action.special == "fail":
            self._stream(request, [{"code": 55000000, "message": "server error", "data": None}])
            return
        text = req.get("text") or req.get("ssml")
        audio_params = req["audio_params"]
        rate = audio_params.get("sample_rate", 24000)
        fmt = audio_params.get("format", "mp3")
        audio = tone(0.06 * len(text), rate) if fmt == "pcm" else f"({fmt} audio)".encode()
        objects: list[dict[str, Any]] = [
            {"code": 0, "message": "", "data": base64.b64encode(audio[i : i + CHUNK]).decode()}
            for i in range(0, len(audio), CHUNK)
        ]
        objects.append({"code": 0, "message": "", "data": None, "sentence": {"text": text, "words": []}})
        if action.special == "cut":
            self._stream(request, objects[: max(1, len(objects) // 2)], cut=True)
            return
        end: dict[str, Any] = {"code": 20000000, "message": "ok", "data": None}
        asked = request.headers.get("X-Control-Require-Usage-Tokens-Return", "")
        if asked == "*" or "text_words" in asked.split(","):
            end["usage"] = {"text_words": len(text)}
        # billed before the last byte goes out: a client holding the whole answer sees its bill
        self.bill(resource=resource, speaker=req["speaker"], text=text, characters=len(text))
        self._stream(request, [*objects, end])

    def _authenticated(self, headers: dict[str, str]) -> bool:
        if self.api_key and headers.get("X-Api-Key") == self.api_key:
            return True
        return headers.get("X-Api-App-Id") == self.app_id and headers.get("X-Api-Access-Key") == self.access_key

    @staticmethod
    def _problem(body: Any) -> str | None:
        """Why the documented request format refuses `body`, or None."""
        if not isinstance(body, dict) or not isinstance(body.get("req_params"), dict):
            return "invalid request: req_params is required"
        if set(body) - TOP:
            return f"invalid request: unknown field {sorted(set(body) - TOP)[0]}"
        user = body.get("user", {})
        if not isinstance(user, dict) or not isinstance(user.get("uid", ""), str):
            return "invalid request: user.uid must be a string"
        req = body["req_params"]
        if set(req) - REQ:
            return f"invalid request: unknown field req_params.{sorted(set(req) - REQ)[0]}"
        if not any(isinstance(req.get(k), str) and req[k].strip() for k in ("text", "ssml")):
            return "invalid request: req_params.text or req_params.ssml is required"
        if not isinstance(req.get("speaker"), str) or not req["speaker"]:
            return "invalid request: req_params.speaker is required"
        audio = req.get("audio_params")
        if not isinstance(audio, dict):
            return "invalid request: req_params.audio_params is required"
        if set(audio) - AUDIO:
            return f"invalid request: unknown field audio_params.{sorted(set(audio) - AUDIO)[0]}"
        if audio.get("format", "mp3") not in FORMATS:
            return f"invalid request: audio_params.format {audio['format']!r}"
        if audio.get("sample_rate", 24000) not in RATES:
            return f"invalid request: audio_params.sample_rate {audio['sample_rate']!r}"
        if "additions" in req and not isinstance(req["additions"], str):
            return "invalid request: req_params.additions must be a JSON string"
        return None

    @staticmethod
    def _stream(request: Request, objects: list[dict[str, Any]], cut: bool = False) -> None:
        """Answer 200 with `objects` as chunks; `cut` drops the connection before the last chunk."""
        handler = request.handler
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("X-Tt-Logid", "20250415133552000000FAKE")
        handler.end_headers()
        for obj in objects:
            data = (json.dumps(obj) + "\n").encode()
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()
        if cut:  # a chunk announced and never finished, then the connection is gone
            handler.wfile.write(b'2000\r\n{"code": 0, "da')
            handler.wfile.flush()
            handler.close_connection = True
            return
        handler.wfile.write(b"0\r\n\r\n")
