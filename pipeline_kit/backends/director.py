"""The director: a chat model writes each shot's staging and prompts, or the cast's looks.

A `direct_chapter` or `direct_book` task carries everything it asks in its params (built by
`pipeline_kit.text.direct`): the protocol (`openai`: OpenAI-compatible chat completions;
`ollama`: Ollama's native chat), the model, the JSON schema of an answer, and the chunks, each
its messages and the ids (`expect`) its answer must cover exactly once. Per chunk: an answer kept
under the hash of (model, messages, schema) is used without a call (`ctx.recall`); else the model
is asked. The valid items of an answer are kept even when others are not (not JSON, cut short,
an item breaking the schema, an id missing or not asked); the model is then asked again, up to
`tries` calls, for the missing ids only, in a follow-up that names what was wrong. Every answer
that gave an item is kept at once (`ctx.remember`), so a kill, a rerun or an unchanged chapter
never pays twice. Each chunk after the first of a chapter carries the staging the model gave the
shots just before it (`MEMORY_SHOTS`), so the chapter is staged as one. Ids never answered
validly keep the rules' prompts (listed under `fallback`, with the reasons under `refused`).
Rate limits and hangs are transient errors: the task retries later, its answered chunks kept.

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

from pipeline_kit import kinds
from pipeline_kit.backends import chat, ollama, params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.chat import Reply
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.direction import frame_prompts
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.errors import BadInput

KINDS = kinds.made_by("director")
PROTOCOLS = ("openai", "ollama")
DEFAULT_TRIES = 3
MEMORY_SHOTS = 3  # the staging of this many shots before a chunk goes with it
ANSWER_KEY = {"direct_chapter": ("shots", "seq"), "direct_book": ("characters", "name")}


def answer_key(model: str, messages: Any, schema: Any) -> str:
    """The cache key of a chat request: a hash of the model, the messages and the schema."""
    text = json.dumps({"model": model, "messages": messages, "schema": schema}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Checked:
    """What an answer gave: the valid items of the ids asked, and what was wrong with the rest."""

    items: list[dict[str, Any]]
    problems: list[str]


def check_answer(text: str, schema: Mapping[str, Any], kind: str, expect: list[Any]) -> Checked:
    """The valid items of an answer for the ids in `expect` (each item checked against the
    schema on its own), and a line per problem: not JSON, a broken item, an id missing or not asked."""
    field_name, id_name = ANSWER_KEY[kind]
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Checked([], [f"not JSON ({exc})"])
    found = data.get(field_name) if isinstance(data, dict) else None
    if not isinstance(found, list):
        return Checked([], [f"no {field_name!r} list in the answer"])
    item_schema = schema["properties"][field_name]["items"]
    wanted = {str(e): e for e in expect}
    items: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for item in found:
        key = str(item.get(id_name)) if isinstance(item, dict) else None
        if key not in wanted:
            problems.append(f"{id_name} {key} was not asked for")
            continue
        try:
            jsonschema.validate(item, item_schema)
        except jsonschema.ValidationError as exc:
            problems.append(f"{id_name} {key}: {exc.message}"[:200])
            continue
        items.setdefault(key, item)
    missing = [e for k, e in wanted.items() if k not in items]
    if missing and len(missing) > len([p for p in problems if p.startswith(id_name)]):
        problems.append(f"no valid answer for {id_name} {missing[:8]}")
    return Checked(list(items.values()), problems)


def follow_up(
    messages: list[dict[str, str]], reply: str, problems: list[str], id_name: str, missing: list[Any]
) -> list[dict[str, str]]:
    """The conversation asked again: the refused reply, then what was wrong, and the entries of
    the ids still to answer (as the first request gave them)."""
    said = "; ".join(problems[:6])
    wanted = {f"[shot {m}]" for m in missing} | {f"[{m}]" for m in missing}
    entries = [
        b
        for b in messages[-1]["content"].split("\n\n")
        if b.split(" ", 2)[0] in wanted or b[: b.find("]") + 1] in wanted
    ]
    return [
        *messages,
        {"role": "assistant", "content": reply[:4000]},
        {
            "role": "user",
            "content": f"That answer was refused: {said}. Answer again in the same JSON form, "
            f"for {id_name} {', '.join(map(str, missing))} only.\n\n" + "\n\n".join(entries),
        },
    ]


def with_memory(messages: list[dict[str, str]], staged: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A chunk's messages with the staging of the shots just before it (what the model answered)."""
    if not staged:
        return messages
    lines = [
        f"shot {i['seq']} (staged): {i['shot_size']}, {i['camera']}; in frame: {i['in_frame']}; {i['visual']}"
        for i in staged
    ]
    last = messages[-1]
    note = "\n\nThe shots just before, as you staged them (keep the staging continuous):\n" + "\n".join(lines)
    return [*messages[:-1], {**last, "content": last["content"] + note}]


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

    def __init__(
        self, chat_url: str | None, api_key: str | None, price_in: float, price_out: float, limiter: RateLimiter
    ) -> None:
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
        staged: list[dict[str, Any]] = []
        for chunk in chunks:
            ctx.stage("generating_text")
            if job.kind == "direct_chapter":
                chunk = {**chunk, "messages": with_memory(chunk["messages"], staged[-MEMORY_SHOTS:])}
            items = self._answer(job, ctx, protocol, model, schema, chunk, tries, tally)
            answered = {str(item[id_name]) for item in items}
            fallback.extend(e for e in chunk["expect"] if str(e) not in answered)
            for item in items:
                merged[str(item[id_name])] = self._finish_item(job, item)
            by_id = {str(item[id_name]): item for item in items}
            staged += [by_id[str(e)] for e in chunk["expect"] if str(e) in by_id]
        ctx.stage("finalizing")
        record = {
            "model": model,
            "protocol": protocol,
            field_name: merged,
            "fallback": fallback,
            "refused": tally.refused[:20],
            "calls": tally.calls,
            "cached": tally.cached,
            "tokens_in": tally.tokens_in,
            "tokens_out": tally.tokens_out,
            "cost": tally.cost,
        }
        job.out_path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        return Output(
            path=job.out_path,
            cost=tally.cost,
            model=model,
            settings={"protocol": protocol, "calls": tally.calls, "cached": tally.cached},
            result=record,
        )

    def _finish_item(self, job: Job, item: dict[str, Any]) -> Any:
        if job.kind == "direct_book":
            return item["description"]
        closing = str(job.params.get("no_lettering") or "")
        return {**item, "prompts": frame_prompts(item, str(job.params.get("style") or ""), closing)}

    def _answer(
        self,
        job: Job,
        ctx: CallContext,
        protocol: str,
        model: str,
        schema: Any,
        chunk: Mapping[str, Any],
        tries: int,
        tally: _Tally,
    ) -> list[dict[str, Any]]:
        """The chunk's valid items, from kept answers or the model: each try keeps what was valid
        and asks again for the rest, saying what was wrong ([] when no try gave anything)."""
        messages, expect = chunk["messages"], list(chunk["expect"])
        id_name = ANSWER_KEY[job.kind][1]
        got: list[dict[str, Any]] = []
        calls = rounds = 0
        while expect and calls < tries and rounds < 2 * tries:  # rounds: kept answers count too
            rounds += 1
            key = answer_key(model, messages, schema)
            kept = ctx.recall(key)
            if kept is not None:
                tally.cached += 1
                text, truncated = str(kept["answer"]), False
            else:
                calls += 1
                reply = self._ask(protocol, model, messages, schema, job.params, ctx, chunk.get("max_tokens"))
                cost = (reply.tokens_in * self.price_in + reply.tokens_out * self.price_out) / 1e6
                tally.calls += 1
                tally.tokens_in += reply.tokens_in
                tally.tokens_out += reply.tokens_out
                tally.cost += cost
                text, truncated = reply.text, reply.truncated
            checked = check_answer(text, schema, job.kind, expect)
            problems = (["cut short (finish reason: length)"] if truncated else []) + checked.problems
            if kept is None and checked.items:
                ctx.remember(
                    key,
                    {
                        "answer": text,
                        "model": reply.model,
                        "tokens_in": reply.tokens_in,
                        "tokens_out": reply.tokens_out,
                        "cost": cost,
                    },
                )
            got += checked.items
            answered = {str(i[id_name]) for i in checked.items}
            expect = [e for e in expect if str(e) not in answered]
            if expect:
                tally.refused += [p[:200] for p in problems]
                messages = follow_up(messages, text, problems, id_name, expect)
        return got

    def _ask(
        self,
        protocol: str,
        model: str,
        messages: list[dict[str, str]],
        schema: Any,
        job_params: Mapping[str, Any],
        ctx: CallContext,
        max_tokens: int | None,
    ) -> Reply:
        """One call on the task's protocol; the answer may be as long as the chunk allows."""
        if protocol == "ollama":
            return ollama.reply(
                messages,
                model=model,
                timeout_s=ctx.timeout_s,
                uid=ctx.uid,
                limiter=self.limiter,
                schema=schema,
                max_tokens=max_tokens,
                num_ctx=job_params.get("context_tokens"),
            )
        if not self.chat_url:
            raise params.permanent(
                "not_configured",
                "set PIPELINE_KIT_CHAT_URL to the OpenAI-compatible "
                "base URL (ending in /v1), then `pipeline-kit retry` the task",
            )
        return chat.complete(
            messages,
            model=model,
            url=self.chat_url,
            api_key=self.api_key,
            timeout_s=ctx.timeout_s,
            limiter=self.limiter,
            uid=ctx.uid,
            max_tokens=max_tokens,
        )


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
    return Director(
        os.environ.get("PIPELINE_KIT_CHAT_URL"),
        os.environ.get("PIPELINE_KIT_CHAT_API_KEY"),
        _price("PIPELINE_KIT_CHAT_PRICE_IN"),
        _price("PIPELINE_KIT_CHAT_PRICE_OUT"),
        RateLimiter.from_env("chat", rate=10, burst=10),
    )
