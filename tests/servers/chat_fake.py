"""A fake chat server that directs: OpenAI-compatible `POST /v1/chat/completions` and Ollama's
native `POST /api/chat` (Ollama serves both), answering director requests with valid JSON.

It reads the shots (`[shot N]`) or characters (`[Name]`) listed in the last user message and
answers one item for each, so the answer fits the director's schema. Strict about the request:
a key (OpenAI side), a model it knows, messages of {role, content}, `response_format` of type
json_object, `stream` false, `format` a JSON schema object (Ollama side). Specials: malformed
(not JSON), truncated (cut mid-object, finish reason length), wrong_count (one item short);
plus the scripted ones (429:S, hang:S, 500). Every answered call is billed with its tokens.
"""

from __future__ import annotations

import json
import re

from servers.scripted import FakeServer, Request

_SHOT = re.compile(r"^\[shot (\d+)\]", re.M)
_NAME = re.compile(r"^\[([^\]\n]+)\] also called:", re.M)


def director_answer(prompt: str) -> dict[str, object]:
    """A valid answer to a director request: one item per shot or character it lists."""
    names = _NAME.findall(prompt)
    if names:
        return {"characters": [{"name": n, "description": f"{n}: about forty, tall, grey coat"} for n in names]}
    return {
        "shots": [
            {
                "seq": int(n),
                "shot_size": "medium",
                "camera": "slow dolly in",
                "in_frame": f"the speaker of shot {n} at left",
                "visual": "lamplit room, dusk",
                "first_frame": f"Shot {n} opens: a figure by the window",
                "last_frame": f"Shot {n} ends: the figure has turned to the door",
                "motion": "the figure turns from the window to the door",
                "line": f"line of shot {n}",
            }
            for n in _SHOT.findall(prompt)
        ]
    }


class FakeChat(FakeServer):
    def __init__(self, api_key: str = "sk-chat-secret", models: tuple[str, ...] = ("director-1", "qwen2.5")) -> None:
        super().__init__()
        self.api_key, self.models = api_key, models

    def handle(self, request: Request) -> None:
        native = request.path == "/api/chat"
        if request.method != "POST" or request.path not in ("/v1/chat/completions", "/api/chat"):
            self.reply_json(request, {"error": "not found"}, 404)
            return
        if not native and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            self.reply_json(request, {"error": {"message": "Incorrect API key provided"}}, 401)
            return
        body = request.json()
        problem = self._bad_request(body, native)
        if problem:
            self.reply_json(request, {"error": {"message": problem}}, 400)
            return
        if body["model"] not in self.models:
            self.reply_json(request, {"error": {"message": f"model {body['model']!r} not found"}}, 404)
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        text = json.dumps(director_answer(body["messages"][-1]["content"]), ensure_ascii=False)
        done = "stop"
        if action.special == "malformed":
            text = "Here are the shots you asked for: {shots: [seq 1 ...]}"
        elif action.special == "truncated":
            text, done = text[: len(text) // 2], "length"
        elif action.special == "wrong_count":
            data = json.loads(text)
            key = next(iter(data))
            data[key] = data[key][:-1]
            text = json.dumps(data, ensure_ascii=False)
        tokens_in = sum(len(m["content"]) for m in body["messages"]) // 4 + 1
        tokens_out = len(text) // 4 + 1
        self.bill(
            model=body["model"],
            native=native,
            messages=body["messages"],
            limits=body.get("options") if native else {"max_tokens": body.get("max_tokens")},
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            special=action.special,
        )
        if native:
            self.reply_json(
                request,
                {
                    "model": body["model"],
                    "created_at": "2024-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": text},
                    "done": True,
                    "done_reason": done,
                    "prompt_eval_count": tokens_in,
                    "eval_count": tokens_out,
                },
            )
            return
        self.reply_json(
            request,
            {
                "id": f"chatcmpl-{len(self.billing)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": done}],
                "usage": {
                    "prompt_tokens": tokens_in,
                    "completion_tokens": tokens_out,
                    "total_tokens": tokens_in + tokens_out,
                },
            },
        )

    @staticmethod
    def _bad_request(body: object, native: bool) -> str | None:
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return "model is required"
        messages = body.get("messages")
        if (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, dict) and set(m) == {"role", "content"} and isinstance(m["content"], str)
                for m in messages
            )
        ):
            return "messages must be a non-empty list of {role, content}"
        if body.get("stream") is not False:
            return "this stand-in answers only stream: false"
        if native:
            if "format" in body and not isinstance(body["format"], dict):
                return "format must be a JSON schema object here"
            if not all(isinstance(v, int) and v > 0 for v in body.get("options", {}).values()):
                return "options must be positive integers here (num_ctx, num_predict)"
        elif "max_tokens" in body and not (isinstance(body["max_tokens"], int) and body["max_tokens"] > 0):
            return "max_tokens must be a positive integer"
        elif body.get("response_format", {"type": "json_object"}) != {"type": "json_object"}:
            return 'response_format must be {"type": "json_object"}'
        return None
