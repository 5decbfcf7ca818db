"""OpenAI-compatible chat completions: POST {base}/chat/completions -> choices[0].message.content.

DeepSeek, Qwen, Doubao on Ark, vLLM, llama.cpp, LM Studio and Ollama's `/v1` all speak it. The
base URL ends in `/v1` (or `/api/v3` on Ark); `response_format` asks for a JSON object, which
these servers support; `usage.prompt_tokens`/`completion_tokens` are the tokens billed, and
`finish_reason: "length"` marks an answer cut short. `Reply` is what both chat protocols return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


from pipeline_kit.backends.calls import Deadline, http_client, json_body, send_paid
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.params import permanent
from pipeline_kit.backends.ratelimit import RateLimiter


@dataclass(frozen=True)
class Reply:
    """A chat answer: its text, the model that wrote it, tokens in and out, cut short or not."""

    text: str
    model: str
    tokens_in: int
    tokens_out: int
    truncated: bool


@classified
def complete(
    messages: Sequence[Mapping[str, str]],
    *,
    model: str,
    url: str,
    api_key: str | None,
    timeout_s: float,
    limiter: RateLimiter,
    uid: str | None,
    json_answer: bool = True,
    max_tokens: int | None = None,
) -> Reply:
    """One chat completion within `timeout_s`, after a token of `uid`'s rate bucket."""
    request: dict[str, Any] = {"model": model, "messages": list(messages), "stream": False}
    if json_answer:
        request["response_format"] = {"type": "json_object"}
    if max_tokens:
        request["max_tokens"] = int(max_tokens)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with http_client() as client:
        response = send_paid(
            client,
            "POST",
            f"{url.rstrip('/')}/chat/completions",
            json=request,
            headers=headers,
            deadline=Deadline(timeout_s),
            limiter=limiter,
            uid=uid,
        )
    body = json_body(response)
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise permanent("bad_output", "bad_output: the answer has no choices[0].message") from None
    if not isinstance(content, str):
        raise permanent("bad_output", "bad_output: choices[0].message.content is not text")
    usage = body.get("usage") or {}
    return Reply(
        text=content,
        model=str(body.get("model") or model),
        tokens_in=int(usage.get("prompt_tokens") or 0),
        tokens_out=int(usage.get("completion_tokens") or 0),
        truncated=choice.get("finish_reason") == "length",
    )
