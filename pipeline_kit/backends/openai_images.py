"""OpenAI images: a frame with character sheets is an edit of them, anything else a generation.

What OpenAI's Images API documents, and this module relies on:
- `POST /v1/images/generations` (JSON): `model`, `prompt`, `size`, `n`; `response_format`
  (`b64_json` or `url`) only for the DALL-E models, as GPT image models always answer base64.
- `POST /v1/images/edits` (multipart form): the same fields, with the input images as repeated
  `image[]` file parts (GPT image models take up to 16 png, webp or jpg files; DALL-E 3 cannot
  edit, DALL-E 2 takes one square PNG and no references here).
- Sizes: `1024x1024`, `1536x1024`, `1024x1536` for GPT image models; `1024x1024`, `1792x1024`,
  `1024x1792` for DALL-E 3; `256x256`, `512x512`, `1024x1024` for DALL-E 2. The size of the
  model's nearest shape is asked for and the answer cut to the task's shape from its centre, at
  the model's scale (a provider's picture is never shrunk: the film scales it). A
  model not in that table (an OpenAI-compatible server) is asked for the task's size exactly.
- The answer's `data[0]` holds `b64_json` (or `url`).

So faces and costumes stay the same from shot to shot, a first or last frame sends the sheets of
the shot's characters (its image inputs); a character sheet is drawn from its prompt alone.

Configuration from the environment: PIPELINE_KIT_OPENAI_URL (default https://api.openai.com),
OPENAI_API_KEY (required), PIPELINE_KIT_OPENAI_MODEL (default gpt-image-1),
PIPELINE_KIT_OPENAI_IMAGE_PRICE (cost per image, default 0; `_PRICE` is read when it is not
set), PIPELINE_KIT_OPENAI_RATE/_BURST (calls
a second per uid). The key goes into the Authorization header only: never into settings,
results, messages or logs.
"""

from __future__ import annotations

import math
import os
from typing import Any


from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import Deadline, KeyedService, first_image, http_client, json_body, send, send_paid
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.images import save_checked_png, save_fitted_png
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.backends.references import input_bytes, labelled_references, reference_note, with_references
from pipeline_kit.errors import BadInput

DEFAULT_URL = "https://api.openai.com"
DEFAULT_MODEL = "gpt-image-1"
MAX_REFERENCES = 16
GPT_IMAGE_SIZES = ((1024, 1024), (1536, 1024), (1024, 1536))
SIZES: dict[str, tuple[tuple[int, int], ...]] = {
    "dall-e-2": ((256, 256), (512, 512), (1024, 1024)),
    "dall-e-3": ((1024, 1024), (1792, 1024), (1024, 1792)),
}
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def is_gpt_image(model: str) -> bool:
    """Whether `model` is one of OpenAI's GPT image models (base64 answers, references)."""
    return model.startswith(("gpt-image", "chatgpt-image"))


def accepted_sizes(model: str) -> tuple[tuple[int, int], ...] | None:
    """The sizes `model` accepts; None for a model this table does not know (any size)."""
    return GPT_IMAGE_SIZES if is_gpt_image(model) else SIZES.get(model)


def provider_size(model: str, size: tuple[int, int]) -> tuple[int, int]:
    """The size to ask `model` for: the task's own if the model takes any, else the accepted
    size nearest in shape (the smallest one that covers the task among equals)."""
    sizes = accepted_sizes(model)
    if sizes is None:
        return size
    width, height = size

    def distance(option: tuple[int, int]) -> tuple[float, bool, int]:
        shape = abs(math.log(option[0] * height / (option[1] * width)))
        covers = option[0] >= width and option[1] >= height
        return round(shape, 6), not covers, option[0] * option[1]

    return min(sizes, key=distance)


class OpenAIImages(KeyedService):
    """Generates character sheets and storyboard frames through an images endpoint."""

    name = "openai"
    remote = True  # calls wait on the service: `--inflight` may hold several

    def suffix(self, kind: str) -> str:
        """.png: this backend makes image kinds only."""
        return params.image_suffix(kind, self.name)

    def describe(self, kind: str) -> dict[str, str]:
        """Where images are made, with which model, and the variable that holds the key."""
        return {"url": self.base_url, "model": self.model, "key": "OPENAI_API_KEY"}

    @classified
    def check(self) -> None:
        """List the models (a call that costs nothing); the key must work."""
        with http_client(headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            send(client, "GET", f"{self.base_url}/v1/models", deadline=Deadline(10))

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Generate (or, from the shot's character sheets, edit) one image; write it as PNG."""
        params.check_kind(job.kind, kinds.made_by(self.name), self.name)
        sheets = labelled_references(job.kind, job.params, job.inputs, MAX_REFERENCES)
        prompt = with_references(
            str(params.require(job.params, "prompt")), reference_note(job.params, job.inputs, sheets)
        )
        size = params.size(job.params)
        asked = provider_size(self.model, size)
        if sheets and self.model.startswith("dall-e"):
            raise params.permanent(
                "unsupported_model",
                f"unsupported_model: {self.model} cannot draw from reference images; use a GPT image model",
            )
        fields: dict[str, Any] = {"model": self.model, "prompt": prompt, "size": "{}x{}".format(*asked), "n": 1}
        if not is_gpt_image(self.model):
            fields["response_format"] = "b64_json"
        deadline = Deadline(ctx.timeout_s)
        ctx.stage("generating_image")
        with http_client(headers={"Authorization": f"Bearer {self._api_key}"}) as client:
            if sheets:
                files = [("image[]", (p.name, input_bytes(p), MIME.get(p.suffix.lower(), "image/png"))) for p in sheets]
                response = send_paid(
                    client,
                    "POST",
                    f"{self.base_url}/v1/images/edits",
                    data={k: str(v) for k, v in fields.items()},
                    files=files,
                    deadline=deadline,
                    limiter=self.limiter,
                    uid=ctx.uid,
                )
            else:
                response = send_paid(
                    client,
                    "POST",
                    f"{self.base_url}/v1/images/generations",
                    json=fields,
                    deadline=deadline,
                    limiter=self.limiter,
                    uid=ctx.uid,
                )
        ctx.stage("finalizing")
        data = first_image(json_body(response), deadline)
        facts = (
            save_checked_png(data, size, job.out_path)
            if asked == size
            else save_fitted_png(data, asked, size, job.out_path)
        )
        return Output(
            path=job.out_path,
            cost=self.price,
            model=self.model,
            settings={
                "provider": self.name,
                "size": fields["size"],
                "endpoint": self.base_url,
                "references": len(sheets),
            },
            result={**facts, "references": [p.name for p in sheets]},
        )


def make(arg: str | None) -> OpenAIImages:
    """Registry factory for `openai` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'openai' takes no argument, got 'openai:{arg}'")
    api_key = os.environ.get("OPENAI_API_KEY", "")
    if not api_key:
        raise BadInput("backend 'openai' needs OPENAI_API_KEY in the environment")
    try:
        price = float(
            os.environ.get("PIPELINE_KIT_OPENAI_IMAGE_PRICE", os.environ.get("PIPELINE_KIT_OPENAI_PRICE", "0"))
        )
    except ValueError:
        raise BadInput("PIPELINE_KIT_OPENAI_IMAGE_PRICE (or _PRICE) must be a number (cost per image)") from None
    return OpenAIImages(
        os.environ.get("PIPELINE_KIT_OPENAI_URL", DEFAULT_URL),
        api_key,
        os.environ.get("PIPELINE_KIT_OPENAI_MODEL", DEFAULT_MODEL),
        price,
        RateLimiter.from_env("openai"),
    )
