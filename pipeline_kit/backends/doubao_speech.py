"""Volcengine's speech service (Doubao / Seed-TTS): a shot's lines said by the V3 HTTP Chunked
one-way streaming API, one request a line.

What the service documents (docs 6561/1598757), and this module relies on:
- `POST https://openspeech.bytedance.com/api/v3/tts/unidirectional`, authenticated by headers:
  `X-Api-App-Id` and `X-Api-Access-Key` (the speech console's app id and access token, not
  Ark's key), or `X-Api-Key` alone (the new console); `X-Api-Resource-Id` picks the model and
  what is billed (`seed-tts-1.0`, `seed-tts-2.0`, `seed-icl-*`); `X-Api-Request-Id` is optional;
  `X-Control-Require-Usage-Tokens-Return: text_words` asks for the billed characters at the end.
- The body: `{"user": {"uid"}, "req_params": {"text", "speaker", "audio_params": {"format",
  "sample_rate"}}}`; with `pcm` at 24000 Hz the audio is 16-bit mono samples, so lines join
  without decoding.
- The answer streams JSON objects: `{"code": 0, "message": "", "data": BASE64}` for audio (data
  null with a `sentence` for timing), then `{"code": 20000000, "message": "ok", "usage":
  {"text_words": N}}` when the audio is complete. Any other code is an error: 40402003 (text over
  the limit), 45000000 (a voice the resource does not grant, or "quota exceeded for types:
  concurrency"), 45000001 (a bad parameter), 55000000 and 55000001 (the service's own failure);
  `classify.py` maps them. An answer that ends before code 20000000 was cut short.

Each line is paid once on this PC, also when its task runs again (`paid_lines.py`).

Configuration from the environment: PIPELINE_KIT_DOUBAO_URL (default
https://openspeech.bytedance.com), PIPELINE_KIT_DOUBAO_APP_ID and PIPELINE_KIT_DOUBAO_ACCESS_KEY
(or PIPELINE_KIT_DOUBAO_API_KEY), PIPELINE_KIT_DOUBAO_RESOURCE_ID (default seed-tts-2.0),
PIPELINE_KIT_DOUBAO_PRICE (cost per 1,000 billed characters, default 0),
PIPELINE_KIT_DOUBAO_RATE/_BURST. The credentials go into headers only.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import CONNECT_TIMEOUT_S, Deadline, http_client, send_paid
from pipeline_kit.backends.classify import ProviderError, classified, classify
from pipeline_kit.backends.default_voices import Pools, default_voice
from pipeline_kit.backends.paid_lines import say_lines
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput, GenerationError
from pipeline_kit.film import audio

DEFAULT_URL = "https://openspeech.bytedance.com"
PATH = "/api/v3/tts/unidirectional"
DEFAULT_RESOURCE = "seed-tts-2.0"
RATE = 24000  # asked for: the default sample rate of the service
DONE = 20000000  # the code of the object that ends a complete answer
# per language, "Doubao speech 2.0" voices (the seed-tts-2.0 list) a line nobody cast a voice for is said in
DEFAULTS: dict[str, Pools] = {
    "zh": {
        "narrator": ("zh_male_m191_uranus_bigtts",),
        "male": ("zh_male_taocheng_uranus_bigtts",),
        "female": ("zh_female_vv_uranus_bigtts", "zh_female_cancan_uranus_bigtts"),
        None: ("zh_female_xiaohe_uranus_bigtts",),
    },
    "en": {
        "narrator": ("en_female_stokie_uranus_bigtts",),
        "male": ("en_male_tim_uranus_bigtts",),
        "female": ("en_female_dacey_uranus_bigtts",),
        None: ("en_male_tim_uranus_bigtts",),
    },
}


def frames(body: bytes) -> Iterator[dict[str, Any]]:
    """The JSON objects of a streamed answer, one after another (newlines between them or not);
    text that is no JSON object is a permanent `bad_output`."""
    text, decoder, at = body.decode("utf-8", errors="replace"), json.JSONDecoder(), 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return
        try:
            found, at = decoder.raw_decode(text, at)
        except ValueError:
            raise params.permanent(
                "bad_output", f"bad_output: the answer is not JSON at {text[at : at + 60]!r}"
            ) from None
        if not isinstance(found, dict):
            raise params.permanent("bad_output", "bad_output: an answer object is not a JSON object")
        yield found


def heard(body: bytes) -> tuple[bytes, int | None]:
    """The samples of one complete answer and the characters it billed (None if not said);
    an error code raises ProviderError, an answer without its end is cut short."""
    samples, billed, ended = bytearray(), None, False
    for frame in frames(body):
        code = frame.get("code", 0)
        if code not in (0, DONE):
            raise ProviderError(str(code), str(frame.get("message") or ""))
        if frame.get("data"):
            try:
                samples += base64.b64decode(frame["data"], validate=True)
            except (binascii.Error, ValueError, TypeError):
                raise params.permanent("bad_output", "bad_output: an audio chunk is not base64") from None
        if code == DONE:
            usage = frame.get("usage")
            words = usage.get("text_words") if isinstance(usage, dict) else None
            billed = words if isinstance(words, int) and not isinstance(words, bool) and words >= 0 else None
            ended = True
            break
    if not ended:
        raise GenerationError(
            "connection_error: the speech stream ended before its last object (code 20000000)",
            error_kind="connection_error",
            retryable=True,
        )
    if not samples or len(samples) % 2:
        raise params.permanent("bad_output", f"bad_output: {len(samples)} bytes are not 16-bit samples")
    return bytes(samples), billed


class DoubaoSpeech:
    """Speaks a voice task's lines through Volcengine's speech service."""

    name = "doubao"
    remote = True  # calls wait on the service: `--inflight` may hold several

    def __init__(
        self, base_url: str, credentials: Mapping[str, str], resource: str, price: float, limiter: RateLimiter
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._credentials = dict(credentials)
        self.resource, self.price, self.limiter = resource, price, limiter

    def __repr__(self) -> str:  # keeps the credentials out of any repr that reaches a log
        return f"DoubaoSpeech(base_url={self.base_url!r}, resource={self.resource!r})"

    def suffix(self, kind: str) -> str:
        """.wav: it makes the voice kind only."""
        params.check_kind(kind, kinds.made_by(self.name), self.name)
        return ".wav"

    def describe(self, kind: str) -> dict[str, str]:
        """Where the voice is made, with which resource, and the variable that holds the key."""
        key = "PIPELINE_KIT_DOUBAO_API_KEY" if "X-Api-Key" in self._credentials else "PIPELINE_KIT_DOUBAO_ACCESS_KEY"
        return {"url": self.base_url + PATH, "model": self.resource, "key": key}

    @classified
    def check(self) -> None:
        """Whether the service answers at all: a GET of the speech path, which synthesises nothing
        and costs nothing (the documentation names no free call; any HTTP answer will do)."""
        with http_client() as client:
            try:
                client.get(self.base_url + PATH, timeout=httpx.Timeout(10.0, connect=CONNECT_TIMEOUT_S))
            except httpx.HTTPError as exc:
                raise classify(exc) from exc

    def quote(self, job: Job) -> float:
        """What the task's lines cost: the price per 1,000 characters said."""
        return self._cost(sum(len(line["text"]) for line in params.voice_lines(job.params)))

    def _cost(self, characters: int) -> float:
        return self.price * characters / 1000

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Say each line (one paid request each, unless an earlier attempt here kept it), join the
        samples, write the WAV and its lines' timing."""
        params.check_kind(job.kind, kinds.made_by(self.name), self.name)
        lang = params.text(job.params, "lang", "en")
        deadline = Deadline(ctx.timeout_s)
        ctx.stage("generating_audio")
        with http_client(headers={**self._credentials, "X-Api-Resource-Id": self.resource}) as client:
            spoken = say_lines(
                job,
                params.voice_lines(job.params),
                lambda line: str(line.get("voice") or default_voice(DEFAULTS.get(lang, DEFAULTS["en"]), line)),
                lambda text, voice: self._say(client, text, voice, deadline, ctx),
                service=f"{self.base_url} {self.resource} {RATE}",
                cost_of=self._cost,
            )
        ctx.stage("finalizing")
        side = job.out_path.with_name(job.out_path.name + audio.LINES)
        said, seconds = audio.write_speech(job.out_path, side, spoken.pieces, RATE)
        return Output(
            path=job.out_path,
            cost=self._cost(spoken.billed),
            model=self.resource,
            result={"duration_s": round(seconds, 3), "lines": len(said), "voices": sorted(set(spoken.voices))},
            settings={"voices": spoken.voices, "url": self.base_url, "billed_characters": spoken.billed},
            extras={audio.LINES: side},
        )

    def _say(
        self, client: httpx.Client, text: str, voice: str, deadline: Deadline, ctx: CallContext
    ) -> tuple[bytes, int | None]:
        body = {
            "user": {"uid": ctx.uid or "pipeline-kit"},
            "req_params": {"text": text, "speaker": voice, "audio_params": {"format": "pcm", "sample_rate": RATE}},
        }
        response = send_paid(
            client,
            "POST",
            self.base_url + PATH,
            deadline=deadline,
            limiter=self.limiter,
            uid=ctx.uid,
            json=body,
            headers={"X-Api-Request-Id": str(uuid.uuid4()), "X-Control-Require-Usage-Tokens-Return": "text_words"},
        )
        return heard(response.content)


def credentials_from_env(env: Mapping[str, str]) -> dict[str, str]:
    """The authentication headers: the app id and access key, else the new console's API key."""
    app_id, access_key = env.get("PIPELINE_KIT_DOUBAO_APP_ID", ""), env.get("PIPELINE_KIT_DOUBAO_ACCESS_KEY", "")
    if app_id and access_key:
        return {"X-Api-App-Id": app_id, "X-Api-Access-Key": access_key}
    if env.get("PIPELINE_KIT_DOUBAO_API_KEY"):
        return {"X-Api-Key": env["PIPELINE_KIT_DOUBAO_API_KEY"]}
    raise BadInput(
        "backend 'doubao' needs PIPELINE_KIT_DOUBAO_APP_ID and PIPELINE_KIT_DOUBAO_ACCESS_KEY "
        "(or PIPELINE_KIT_DOUBAO_API_KEY) in the environment: the speech console's, not Ark's key"
    )


def make(arg: str | None) -> DoubaoSpeech:
    """Registry factory for `doubao` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'doubao' takes no argument, got 'doubao:{arg}'")
    env = os.environ
    try:
        price = float(env.get("PIPELINE_KIT_DOUBAO_PRICE", "0"))
    except ValueError:
        raise BadInput("PIPELINE_KIT_DOUBAO_PRICE must be a number (cost per 1,000 characters)") from None
    return DoubaoSpeech(
        env.get("PIPELINE_KIT_DOUBAO_URL", DEFAULT_URL),
        credentials_from_env(env),
        env.get("PIPELINE_KIT_DOUBAO_RESOURCE_ID", DEFAULT_RESOURCE),
        price,
        RateLimiter.from_env("doubao"),
    )
