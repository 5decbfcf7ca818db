"""Ollama chat: POST /api/chat {"model", "messages", "stream": false} -> message.content.

`reply()` also sends `format` (a JSON schema) and `options.num_ctx`, and reads the token counts
(`prompt_eval_count`, `eval_count`) and `done_reason`; director tasks use it.

`chat()` is the plain function (the text splitter's optional model splitter reuses it); the
backend wraps it for `llm` tasks and writes {"model", "text"} as JSON. Configuration:
PIPELINE_KIT_OLLAMA_URL (default http://127.0.0.1:11434), PIPELINE_KIT_OLLAMA_MODEL (default
qwen2.5), PIPELINE_KIT_OLLAMA_RATE/_BURST. Local models cost nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any


from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.calls import Deadline, http_client, json_body, send, send_paid
from pipeline_kit.backends.chat import Reply
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput
from pipeline_kit.kinds import made_by

DEFAULT_URL = "http://127.0.0.1:11434"
DEFAULT_MODEL = "qwen2.5"


def base_url() -> str:
    """The Ollama server from PIPELINE_KIT_OLLAMA_URL, without a trailing slash."""
    return os.environ.get("PIPELINE_KIT_OLLAMA_URL", DEFAULT_URL).rstrip("/")


def default_model() -> str:
    """The model from PIPELINE_KIT_OLLAMA_MODEL, else qwen2.5."""
    return os.environ.get("PIPELINE_KIT_OLLAMA_MODEL", DEFAULT_MODEL)


@classified
def chat(
    messages: Sequence[Mapping[str, str]],
    *,
    model: str | None = None,
    timeout_s: float = 60,
    uid: str | None = None,
    limiter: RateLimiter | None = None,
    url: str | None = None,
) -> str:
    """The assistant's reply to `messages` ([{"role", "content"}, ...]); GenerationError if not.

    The whole call, connection included, ends within `timeout_s`; with a `limiter` the call
    first takes a token of `uid`'s bucket.
    """
    return reply(messages, model=model, timeout_s=timeout_s, uid=uid, limiter=limiter, url=url).text


@classified
def reply(
    messages: Sequence[Mapping[str, str]],
    *,
    model: str | None = None,
    timeout_s: float = 60,
    uid: str | None = None,
    limiter: RateLimiter | None = None,
    url: str | None = None,
    schema: Mapping[str, Any] | None = None,
    num_ctx: int | None = None,
    max_tokens: int | None = None,
) -> Reply:
    """`chat` with its token counts: `format` is the JSON schema the answer must follow (Ollama
    constrains its sampling to it), `options.num_ctx` the context window to load the model with,
    `options.num_predict` the most tokens to answer with. The answer is marked truncated when
    Ollama says it stopped for length."""
    request: dict[str, Any] = {"model": model or default_model(), "messages": list(messages), "stream": False}
    if schema is not None:
        request["format"] = dict(schema)
    options = {k: int(v) for k, v in (("num_ctx", num_ctx), ("num_predict", max_tokens)) if v}
    if options:
        request["options"] = options
    endpoint, deadline = f"{url or base_url()}/api/chat", Deadline(timeout_s)
    with http_client() as client:
        if limiter is None:
            response = send(client, "POST", endpoint, json=request, deadline=deadline)
        else:
            response = send_paid(client, "POST", endpoint, json=request, deadline=deadline, limiter=limiter, uid=uid)
    body = json_body(response)
    content = body.get("message", {}).get("content") if isinstance(body, dict) else None
    if not isinstance(content, str):
        raise params.permanent("bad_output", "bad_output: the answer has no message.content")
    return Reply(
        text=content,
        model=str(body.get("model") or request["model"]),
        tokens_in=int(body.get("prompt_eval_count") or 0),
        tokens_out=int(body.get("eval_count") or 0),
        truncated=body.get("done_reason") == "length",
    )


def messages_of(job_params: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages of an llm task: `messages` as given, or `prompt` as one user turn."""
    messages = job_params.get("messages")
    if messages:
        if not isinstance(messages, list) or not all(isinstance(m, Mapping) and "content" in m for m in messages):
            raise params.permanent("bad_param", "params field 'messages' must be a list of {role, content}")
        return [{"role": str(m.get("role", "user")), "content": str(m["content"])} for m in messages]
    return [{"role": "user", "content": str(params.require(job_params, "prompt"))}]


class Ollama:
    """Runs `llm` tasks on an Ollama server."""

    name = "ollama"
    kinds = made_by("ollama")

    def __init__(self, url: str, model: str, limiter: RateLimiter) -> None:
        self.url, self.model, self.limiter = url, model, limiter

    def suffix(self, kind: str) -> str:
        """.json: the reply is written as a JSON record."""
        return params.record_suffix(kind, self.kinds, self.name)

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Ask the model, write {"model", "text"} to the out path."""
        params.check_kind(job.kind, self.kinds, self.name)
        model = str(job.params.get("model") or self.model)
        messages = messages_of(job.params)
        ctx.stage("loading_model")
        text = chat(messages, model=model, timeout_s=ctx.timeout_s, uid=ctx.uid, limiter=self.limiter, url=self.url)
        ctx.stage("finalizing")
        record = {"model": model, "text": text}
        job.out_path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        return Output(path=job.out_path, model=model, settings={"endpoint": self.url}, result=record)


def make(arg: str | None) -> Ollama:
    """Registry factory for `ollama` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'ollama' takes no argument, got 'ollama:{arg}'")
    return Ollama(base_url(), default_model(), RateLimiter.from_env("ollama", rate=100, burst=100))
