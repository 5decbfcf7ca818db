"""OpenAI-compatible speech: a shot's lines said by `POST /v1/audio/speech`, one request a line.

What the API documents, and this module relies on: a JSON body with `model`, `input` (the text,
at most 4096 characters), `voice` (`alloy`, `ash`, `coral`, `echo`, `fable`, `nova`, `onyx`,
`sage`, `shimmer`, ...) and `response_format`; the answer is the audio itself, not JSON. With
`pcm` it is raw 16-bit little-endian mono samples at 24 kHz, so lines join without decoding.
Errors come as JSON `{"error": {"message", "type", "param", "code"}}`: 400 for a bad request
(an unknown voice among them: permanent), 401 for a bad key, 429 and 5xx to retry later.

Configuration from the environment: PIPELINE_KIT_SPEECH_URL (default https://api.openai.com),
PIPELINE_KIT_SPEECH_KEY (else OPENAI_API_KEY), PIPELINE_KIT_SPEECH_MODEL (default gpt-4o-mini-tts),
PIPELINE_KIT_SPEECH_PRICE (cost per 1,000 characters, default 0), PIPELINE_KIT_SPEECH_RATE/_BURST.
The key goes into the Authorization header only. Each line is paid once on this PC, also when
its task runs again (`paid_lines.py`).
"""

from __future__ import annotations

import os

import httpx

from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import Deadline, KeyedService, http_client, send_paid
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.default_voices import Pools, default_voice
from pipeline_kit.backends.paid_lines import say_lines
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput
from pipeline_kit.film import audio

DEFAULT_URL = "https://api.openai.com"
DEFAULT_MODEL = "gpt-4o-mini-tts"
RATE = 24000  # the sample rate of `pcm` answers
MAX_INPUT = 4096
# the built-in voices (OpenAI's speech guide) a line nobody cast a voice for is said in
DEFAULTS: Pools = {
    "narrator": ("alloy",),
    "male": ("onyx", "echo", "ash", "ballad"),
    "female": ("nova", "shimmer", "coral", "sage"),
    None: ("fable", "verse", "echo"),
}


class OpenAISpeech(KeyedService):
    """Speaks a voice task's lines through an OpenAI-compatible speech endpoint."""

    name = "speech"
    remote = True  # calls wait on the service: `--inflight` may hold several

    def suffix(self, kind: str) -> str:
        """.wav: it makes the voice kind only."""
        params.check_kind(kind, kinds.made_by(self.name), self.name)
        return ".wav"

    def quote(self, job: Job) -> float:
        """What the task's lines cost: the price per 1,000 characters said."""
        return self.price * sum(len(line["text"]) for line in params.voice_lines(job.params)) / 1000

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Say each line, join the samples, write the WAV and its lines' timing."""
        params.check_kind(job.kind, kinds.made_by(self.name), self.name)
        lines = params.voice_lines(job.params)
        too_long = next((line for line in lines if len(line["text"]) > MAX_INPUT), None)
        if too_long is not None:
            raise params.permanent("bad_param", f"a line has {len(too_long['text'])} characters, over {MAX_INPUT}")
        deadline = Deadline(ctx.timeout_s)
        ctx.stage("generating_audio")
        with http_client(headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            spoken = say_lines(
                job,
                lines,
                lambda line: str(line.get("voice") or default_voice(DEFAULTS, line)),
                lambda text, voice: (self._say(client, text, voice, deadline, ctx), None),
                service=f"{self.base_url} {self.model}",
                cost_of=lambda characters: self.price * characters / 1000,
            )
        ctx.stage("finalizing")
        side = job.out_path.with_name(job.out_path.name + audio.LINES)
        said, seconds = audio.write_speech(job.out_path, side, spoken.pieces, RATE)
        return Output(
            path=job.out_path,
            cost=self.price * spoken.billed / 1000,
            model=self.model,
            result={"duration_s": round(seconds, 3), "lines": len(said), "voices": sorted(set(spoken.voices))},
            settings={"voices": spoken.voices, "url": self.base_url},
            extras={audio.LINES: side},
        )

    def _say(self, client: httpx.Client, text: str, voice: str, deadline: Deadline, ctx: CallContext) -> bytes:
        body = {"model": self.model, "input": text, "voice": voice, "response_format": "pcm"}
        response = send_paid(
            client,
            "POST",
            f"{self.base_url}/v1/audio/speech",
            deadline=deadline,
            limiter=self.limiter,
            uid=ctx.uid,
            json=body,
        )
        samples = response.content
        if not samples or len(samples) % 2:
            raise params.permanent("bad_output", f"bad_output: {len(samples)} bytes are not 16-bit samples")
        return samples


def make(arg: str | None) -> OpenAISpeech:
    """Registry factory for `speech` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'speech' takes no argument, got 'speech:{arg}'")
    api_key = os.environ.get("PIPELINE_KIT_SPEECH_KEY") or os.environ.get("OPENAI_API_KEY", "")
    if not api_key:
        raise BadInput("backend 'speech' needs PIPELINE_KIT_SPEECH_KEY or OPENAI_API_KEY in the environment")
    try:
        price = float(os.environ.get("PIPELINE_KIT_SPEECH_PRICE", "0"))
    except ValueError:
        raise BadInput("PIPELINE_KIT_SPEECH_PRICE must be a number (cost per 1,000 characters)") from None
    return OpenAISpeech(
        os.environ.get("PIPELINE_KIT_SPEECH_URL", DEFAULT_URL),
        api_key,
        os.environ.get("PIPELINE_KIT_SPEECH_MODEL", DEFAULT_MODEL),
        price,
        RateLimiter.from_env("speech"),
    )
