"""The Ollama backend and the reusable chat() function against a fake Ollama."""

from __future__ import annotations

import json
import time

import pytest
from servers.ollama_fake import FakeOllama

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.ollama import chat

from .helpers import MakeJob, assert_permanent, assert_transient


@pytest.fixture(autouse=True)
def use_fake(ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIPELINE_KIT_OLLAMA_URL", ollama_server.url)
    monkeypatch.setenv("PIPELINE_KIT_OLLAMA_MODEL", "qwen2.5")


def test_llm_task_writes_the_reply_as_json(ollama_server: FakeOllama, make_job: MakeJob) -> None:
    """An llm task's output file is JSON with the model and the reply text; cost 0."""
    job = make_job("llm", {"prompt": "把这段分成镜头"}, suffix=".json")
    output = get_backend("ollama").run(job, LocalContext())
    record = json.loads(job.out_path.read_text(encoding="utf-8"))
    assert record == {"model": "qwen2.5", "text": "echo: 把这段分成镜头"}
    assert output.result == record and output.cost == 0


def test_messages_and_model_from_params(ollama_server: FakeOllama, make_job: MakeJob) -> None:
    """`messages` are sent as given and params.model overrides the default model."""
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    job = make_job("llm", {"messages": messages, "model": "tiny"}, suffix=".json")
    get_backend("ollama").run(job, LocalContext())
    assert ollama_server.billing == [{"model": "tiny", "messages": messages}]


def test_chat_function_for_the_splitter(ollama_server: FakeOllama) -> None:
    """chat() returns the reply text (the splitter's model mode uses it directly)."""
    assert chat([{"role": "user", "content": "ping"}], timeout_s=5) == "echo: ping"


def test_unknown_model_is_permanent(make_job: MakeJob) -> None:
    """A model that is not pulled fails at once: retrying cannot make it appear."""
    job = make_job("llm", {"prompt": "x", "model": "llama9"}, suffix=".json")
    assert_permanent(lambda: get_backend("ollama").run(job, LocalContext()), "unknown_model")


@pytest.mark.parametrize(
    ("action", "kind"), [("load_fail", "model_load_failed"), ("500", "server_error"), ("429:0.1", "rate_limited")]
)
def test_transient_failures(ollama_server: FakeOllama, action: str, kind: str) -> None:
    """A model that failed to load, a 500 or a 429 may pass later: retryable."""
    ollama_server.script(action)
    assert_transient(lambda: chat([{"role": "user", "content": "x"}], timeout_s=5), kind)


def test_hang_times_out(ollama_server: FakeOllama) -> None:
    """chat() ends within its timeout when the server hangs."""
    ollama_server.script("hang:5")
    started = time.monotonic()
    assert_transient(lambda: chat([{"role": "user", "content": "x"}], timeout_s=0.5), "timeout")
    assert time.monotonic() - started < 1.5


def test_contract_errors(make_job: MakeJob) -> None:
    """No prompt, malformed messages or a non-llm kind are permanent."""
    backend = get_backend("ollama")
    assert_permanent(lambda: backend.run(make_job("llm", {}), LocalContext()), "missing_field", "prompt")
    assert_permanent(lambda: backend.run(make_job("llm", {"messages": "hi"}), LocalContext()), "bad_param")
    assert_permanent(lambda: backend.run(make_job("video", {"prompt": "x"}), LocalContext()), "invalid_kind")
