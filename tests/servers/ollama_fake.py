"""A fake Ollama: POST /api/chat with "stream": false.

Knows the models in `models` (others answer 404 "model not found", as Ollama does); the reply
echoes the last message. Special: load_fail (500 "error loading model").
"""

from __future__ import annotations

from servers.scripted import FakeServer, Request


class FakeOllama(FakeServer):
    def __init__(self, models: tuple[str, ...] = ("qwen2.5", "tiny")) -> None:
        super().__init__()
        self.models = models

    def handle(self, request: Request) -> None:
        if request.method != "POST" or request.path != "/api/chat":
            self.reply_json(request, {"error": "not found"}, 404)
            return
        action = self.next_action()
        if self.failed(request, action):
            return
        body = request.json()
        if action.special == "load_fail":
            self.reply_json(request, {"error": "llama runner process has terminated: error loading model"}, 500)
            return
        if body.get("model") not in self.models:
            self.reply_json(request, {"error": f'model "{body.get("model")}" not found, try pulling it first'}, 404)
            return
        self.bill(model=body["model"], messages=body["messages"])
        reply = f"echo: {body['messages'][-1]['content']}"
        self.reply_json(
            request,
            {
                "model": body["model"],
                "created_at": "2024-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": reply},
                "done": True,
            },
        )
