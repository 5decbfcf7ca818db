"""The director: a chat model writes each shot's staging and prompts, or the cast's looks.

A `direct_chapter` or `direct_book` task carries everything it asks in its params (built by
`pipeline_kit.text.direct`): the protocol (`openai`: OpenAI-compatible chat completions;
`ollama`: Ollama's native chat), the model, the JSON schema of an answer, and the chunks, each
its messages and the ids (`expect`) its answer must cover exactly once. Per chunk: an answer kept
under the hash of (model, messages, schema) is used without a call (`ctx.recall`); else the model
is asked, and an answer that is not JSON, is cut short, breaks the schema or covers other ids is
refused and asked again, up to `tries` calls; a valid one is kept at once (`ctx.remember`), so a
kill, a rerun or an unchanged chapter never pays twice. A chunk never answered validly keeps the
rules' prompts (its ids are listed under `fallback`). Rate limits and hangs are transient errors:
the task retries later, its answered chunks kept.

Configuration: PIPELINE_KIT_CHAT_URL (the OpenAI-compatible base, ending in /v1 or /api/v3),
PIPELINE_KIT_CHAT_API_KEY, PIPELINE_KIT_CHAT_PRICE_IN / _OUT (money per million tokens in and
out, default 0), PIPELINE_KIT_CHAT_RATE/_BURST; Ollama's own settings (backends/ollama.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from pipeline_kit.backends import chat, ollama, params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.chat import Reply
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.direction import frame_prompts
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput

KINDS = frozenset({"direct_chapter", "direct_book"})
PROTOCOLS = ("openai", "ollama")
DEFAULT_TRIES = 3
ANSWER_KEY = {"direct_chapter": ("shots", "seq"), "direct_book": ("characters", "name")}


def answer_key(model: str, messages: Any, schema: Any) -> str:
    """The cache key of a chat request: a hash of the model, the messages and the schema."""
    text = json.dumps({"model": model, "messages": messages, "schema": schema},
                      ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_answer(text: str, schema: Mapping[str, Any], kind: str, expect: list[Any]) -> list[dict[str, Any]]:
    """The answer's items when it is JSON that fits `schema` and covers `expect` exactly, in any
    order; ValueError saying what is wrong otherwise."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        raise ValueError(f"does not fit the schema: {exc.message}") from None
    field_name, id_name = ANSWER_KEY[kind]
    items = data[field_name]
    got = [item[id_name] for item in items]
    if sorted(map(str, got)) != sorted(map(str, expect)):
        raise ValueError(f"covers {len(got)} {field_name} {got[:8]}, expected {expect[:8]}")
    return list(items)


@dataclass
class _Tally:
    calls: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    refused: list[str] = field(default_factory=list)


class Director:
    """Runs `direct_chapter` and `direct_book` tasks on the chat protocol their params name."""

    name = "director"
    kinds = KINDS

    def __init__(self, chat_url: str | None, api_key: str | None, price_in: float, price_out: float,
                 limiter: RateLimiter) -> None:
        self.chat_url, self.api_key = chat_url, api_key
        self.price_in, self.price_out, self.limiter = price_in, price_out, limiter

    def suffix(self, kind: str) -> str:
        """.json: the answers are written as one JSON record."""
        return params.record_suffix(kind, self.kinds, self.name)

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Answer every chunk (kept answers first), write the merged record, return its cost."""
        params.check_kind(job.kind, self.kinds, self.name)
        protocol, model = str(params.require(job.params, "protocol")), str(params.require(job.params, "model"))
        if protocol not in PROTOCOLS:
            raise params.permanent("bad_param", f"params field 'protocol' must be one of {PROTOCOLS}")
        schema, chunks = params.require(job.params, "schema"), params.require(job.params, "chunks")
        tries = int(job.params.get("tries") or DEFAULT_TRIES)
        tally, merged, fallback = _Tally(), {}, []
        field_name, id_name = ANSWER_KEY[job.kind]
        for chunk in chunks:
            ctx.stage("generating_text")
            items = self._answer(job, ctx, protocol, model, schema, chunk, tries, tally)
            if items is None:
                fallback.extend(chunk["expect"])
                continue
            for item in items:
                merged[str(item[id_name])] = self._finish_item(job, item)
        ctx.stage("finalizing")
        record = {"model": model, "protocol": protocol, field_name: merged, "fallback": fallback,
                  "refused": tally.refused[:20], "calls": tally.calls, "cached": tally.cached,
                  "tokens_in": tally.tokens_in, "tokens_out": tally.tokens_out, "cost": tally.cost}
        job.out_path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        return Output(path=job.out_path, cost=tally.cost, model=model,
                      settings={"protocol": protocol, "calls": tally.calls, "cached": tally.cached},
                      result=record)

    def _finish_item(self, job: Job, item: dict[str, Any]) -> Any:
        if job.kind == "direct_book":
            return item["description"]
        return {**item, "prompts": frame_prompts(item, str(job.params.get("style") or ""))}

    def _answer(self, job: Job, ctx: CallContext, protocol: str, model: str, schema: Any,
                chunk: Mapping[str, Any], tries: int, tally: _Tally) -> list[dict[str, Any]] | None:
        """The chunk's valid items, from the cache or the model; None when no try gave any."""
        messages, expect = chunk["messages"], chunk["expect"]
        key = answer_key(model, messages, schema)
        kept = ctx.recall(key)
        if kept is not None:
            tally.cached += 1
            return check_answer(str(kept["answer"]), schema, job.kind, expect)
        for _ in range(tries):
            reply = self._ask(protocol, model, messages, schema, job.params, ctx, chunk.get("max_tokens"))
            cost = (reply.tokens_in * self.price_in + reply.tokens_out * self.price_out) / 1e6
            tally.calls += 1
            tally.tokens_in += reply.tokens_in
            tally.tokens_out += reply.tokens_out
            tally.cost += cost
            try:
                if reply.truncated:
                    raise ValueError("cut short (finish reason: length)")
                items = check_answer(reply.text, schema, job.kind, expect)
            except ValueError as exc:
                tally.refused.append(str(exc)[:200])
                continue
            ctx.remember(key, {"answer": reply.text, "model": reply.model, "tokens_in": reply.tokens_in,
                               "tokens_out": reply.tokens_out, "cost": cost})
            return items
        return None

    def _ask(self, protocol: str, model: str, messages: list[dict[str, str]], schema: Any,
             job_params: Mapping[str, Any], ctx: CallContext, max_tokens: int | None) -> Reply:
        """One call on the task's protocol; the answer may be as long as the chunk allows."""
        if protocol == "ollama":
            return ollama.reply(messages, model=model, timeout_s=ctx.timeout_s, uid=ctx.uid,
                                limiter=self.limiter, schema=schema, max_tokens=max_tokens,
                                num_ctx=job_params.get("context_tokens"))
        if not self.chat_url:
            raise params.permanent("not_configured", "set PIPELINE_KIT_CHAT_URL to the OpenAI-compatible "
                                                     "base URL (ending in /v1), then `pipeline-kit retry` the task")
        return chat.complete(messages, model=model, url=self.chat_url, api_key=self.api_key,
                             timeout_s=ctx.timeout_s, limiter=self.limiter, uid=ctx.uid,
                             max_tokens=max_tokens)


def _price(name: str) -> float:
    value = os.environ.get(name, "0") or "0"
    try:
        return float(value)
    except ValueError:
        raise BadInput(f"{name} must be a number (money per million tokens), got {value!r}") from None


def make(arg: str | None) -> Director:
    """Registry factory for `director` (no argument; configuration from the environment)."""
    if arg is not None:
        raise BadInput(f"backend 'director' takes no argument, got 'director:{arg}'")
    return Director(os.environ.get("PIPELINE_KIT_CHAT_URL"), os.environ.get("PIPELINE_KIT_CHAT_API_KEY"),
                    _price("PIPELINE_KIT_CHAT_PRICE_IN"), _price("PIPELINE_KIT_CHAT_PRICE_OUT"),
                    RateLimiter.from_env("chat", rate=10, burst=10))
