"""OpenAI-compatible image generation: POST {base}/v1/images/generations.

Configuration from the environment: PIPELINE_KIT_OPENAI_URL (default https://api.openai.com),
OPENAI_API_KEY (required), PIPELINE_KIT_OPENAI_MODEL (default dall-e-3),
PIPELINE_KIT_OPENAI_PRICE (cost per image, default 0), PIPELINE_KIT_OPENAI_RATE/_BURST (calls
a second per uid). The key goes into the Authorization header only: never into settings,
results, messages or logs. An image that does not decode or has another size than asked for
is a permanent `bad_output`.
"""

from __future__ import annotations

import os

import httpx

from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import Deadline, first_image, json_body, send, send_paid
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.images import save_checked_png
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput

DEFAULT_URL = "https://api.openai.com"
DEFAULT_MODEL = "dall-e-3"


class OpenAIImages:
    """Generates character sheets and storyboard frames through an images endpoint."""

    name = "openai"

    def __init__(self, base_url: str, api_key: str, model: str, price: float,
                 limiter: RateLimiter) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.model, self.price, self.limiter = model, price, limiter

    def __repr__(self) -> str:  # keeps the key out of any repr that reaches a log
        return f"OpenAIImages(base_url={self.base_url!r}, model={self.model!r})"

    def suffix(self, kind: str) -> str:
        """.png: this backend makes image kinds only."""
        return params.image_suffix(kind, self.name)

    def describe(self, kind: str) -> dict[str, str]:
        """Where images are made, with which model, and the variable that holds the key."""
        return {"url": self.base_url, "model": self.model, "key": "OPENAI_API_KEY"}

    @classified
    def check(self) -> None:
        """List the models (a call that costs nothing); the key must work."""
        with httpx.Client(headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            send(client, "GET", f"{self.base_url}/v1/models", deadline=Deadline(10))

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Generate one image of the requested size and write it as PNG."""
        params.check_kind(job.kind, params.IMAGE_KINDS, self.name)
        prompt = str(params.require(job.params, "prompt"))
        width, height = params.size(job.params)
        deadline = Deadline(ctx.timeout_s)
        request = {"model": self.model, "prompt": prompt, "size": f"{width}x{height}", "n": 1,
                   "response_format": "b64_json"}
        ctx.stage("generating_image")
        with httpx.Client(headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            response = send_paid(client, "POST", f"{self.base_url}/v1/images/generations",
                                 json=request, deadline=deadline, limiter=self.limiter,
                                 uid=ctx.uid)
        ctx.stage("finalizing")
        data = first_image(json_body(response), deadline)
        facts = save_checked_png(data, (width, height), job.out_path)
        return Output(path=job.out_path, cost=self.price, model=self.model,
                      settings={"size": request["size"], "endpoint": self.base_url},
                      result=facts)


def make(arg: str | None) -> OpenAIImages:
    """Registry factory for `openai` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'openai' takes no argument, got 'openai:{arg}'")
    api_key = os.environ.get("OPENAI_API_KEY", "")
    if not api_key:
        raise BadInput("backend 'openai' needs OPENAI_API_KEY in the environment")
    try:
        price = float(os.environ.get("PIPELINE_KIT_OPENAI_PRICE", "0"))
    except ValueError:
        raise BadInput("PIPELINE_KIT_OPENAI_PRICE must be a number (cost per image)") from None
    return OpenAIImages(os.environ.get("PIPELINE_KIT_OPENAI_URL", DEFAULT_URL), api_key,
                        os.environ.get("PIPELINE_KIT_OPENAI_MODEL", DEFAULT_MODEL), price,
                        RateLimiter.from_env("openai"))
