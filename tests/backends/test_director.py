"""The director backend against the chat stand-in: valid answers are used and kept, bad ones
refused and asked again, then the rules stand; rate limits and hangs are transient; a kept answer
is never paid for twice."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from servers.chat_fake import FakeChat

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.backends.direction import directed
from pipeline_kit.text.direct import Direction, DirectorSettings
from pipeline_kit.text.prompts import Templates
from pipeline_kit.text.records import Book
from pipeline_kit.text.split import chapter_shots
from pipeline_kit.text.splitter import RuleSplitter

from .helpers import MakeJob, assert_permanent, assert_transient

TEXT = (
    "Mara ran down to the harbour. The wind was sharp. “The lamp is out,” Mara said.\n\n"
    "Tobias looked at the water. He sighed and untied his boat. “Get in,” said Tobias.\n\n"
    "The crossing took half an hour. Waves slapped the hull. Mara kept her eyes on the tower.\n\n"
    "At the rock Tobias tied the boat. Mara climbed the steps. The door was open."
)


def chapter_params(
    protocol: str = "openai", model: str = "director-1", context: int = 8192, text: str = TEXT
) -> dict[str, Any]:
    book = Book("lamp-1", "The Lamp", "en")
    made = chapter_shots(book, 1, text, RuleSplitter(), Templates.load())
    spec = Direction(book, None, [text], DirectorSettings(protocol, model, "en", context)).chapter_spec(made.shots)
    return dict(spec.params or {})


@pytest.fixture(autouse=True)
def use_fake(chat_server: FakeChat, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIPELINE_KIT_CHAT_URL", f"{chat_server.url}/v1")
    monkeypatch.setenv("PIPELINE_KIT_CHAT_API_KEY", chat_server.api_key)
    monkeypatch.setenv("PIPELINE_KIT_OLLAMA_URL", chat_server.url)
    monkeypatch.setenv("PIPELINE_KIT_CHAT_PRICE_IN", "2")
    monkeypatch.setenv("PIPELINE_KIT_CHAT_PRICE_OUT", "8")


def run(make_job: MakeJob, params: dict[str, Any], ctx: LocalContext | None = None) -> tuple[Any, dict[str, Any]]:
    job = make_job("direct_chapter", params, suffix=".json")
    out = get_backend("director").run(job, ctx or LocalContext())
    return out, json.loads(job.out_path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("protocol", ["openai", "ollama"])
def test_valid_answer_gives_every_shot_its_prompts(chat_server: FakeChat, make_job: MakeJob, protocol: str) -> None:
    """A valid answer on either protocol: each shot gets staging, three prompts and its line;
    the cost is the billed tokens at the configured prices (Ollama's tokens are counted too)."""
    params = chapter_params(protocol, "director-1" if protocol == "openai" else "qwen2.5")
    seqs = [s for c in params["chunks"] for s in c["expect"]]
    out, record = run(make_job, params)
    assert sorted(record["shots"], key=int) == [str(s) for s in seqs] and record["fallback"] == []
    first = record["shots"][str(seqs[0])]
    assert first["prompts"]["first_frame"].startswith(f"Shot {seqs[0]} opens")
    assert "medium shot, slow dolly in" in first["prompts"]["last_frame"]
    assert first["line"] == f"line of shot {seqs[0]}"
    billed = chat_server.billing
    assert len(billed) == 1 and billed[0]["native"] is (protocol == "ollama")
    room = params["chunks"][0]["max_tokens"]
    assert billed[0]["limits"] == (
        {"num_ctx": 8192, "num_predict": room} if protocol == "ollama" else {"max_tokens": room}
    )
    expected = (billed[0]["tokens_in"] * 2 + billed[0]["tokens_out"] * 8) / 1e6
    assert out.cost == pytest.approx(expected) and record["tokens_out"] == billed[0]["tokens_out"]


@pytest.mark.parametrize("bad", ["malformed", "truncated", "wrong_count"])
def test_a_bad_answer_is_refused_and_asked_again(chat_server: FakeChat, make_job: MakeJob, bad: str) -> None:
    """Not JSON, cut short or one shot missing: refused, asked again in a follow-up that says
    what was wrong, the second answer used; both calls are paid for."""
    chat_server.script(bad)
    out, record = run(make_job, chapter_params())
    assert len(chat_server.billing) == 2 and record["calls"] == 2
    assert record["fallback"] == [] and record["refused"]
    follow = chat_server.billing[1]["messages"][-1]["content"]
    assert follow.startswith("That answer was refused: ") and record["refused"][0] in follow
    assert out.cost > 0


def test_bad_answers_every_time_leave_the_rules_prompts(chat_server: FakeChat, make_job: MakeJob) -> None:
    """Three bad answers: the chunk's shots fall back to the rules (listed, no prompts given),
    and nothing is kept, so a later run asks again."""
    chat_server.script("malformed", "truncated", "malformed")
    ctx = LocalContext()
    _, record = run(make_job, chapter_params(), ctx)
    params = chapter_params()
    assert record["shots"] == {} and record["fallback"] == params["chunks"][0]["expect"]
    assert len(chat_server.billing) == 3 and ctx.answers == {}
    frame = {"prompt": "rules' prompt", "seq": record["fallback"][0], "director": "x"}
    assert directed(frame, "first_frame", record)["prompt"] == "rules' prompt"


def test_rate_limit_is_transient_with_its_wait(chat_server: FakeChat, make_job: MakeJob) -> None:
    """A 429 with Retry-After is a retryable rate_limited error carrying the wait."""
    chat_server.script("429:7")
    error = assert_transient(lambda: run(make_job, chapter_params()), "rate_limited")
    assert error.retry_after == pytest.approx(7)


def test_a_hang_times_out_as_transient(chat_server: FakeChat, make_job: MakeJob) -> None:
    """A server that never answers costs at most the call's timeout, then retries later."""
    chat_server.script("hang:5")
    started = time.monotonic()
    assert_transient(lambda: run(make_job, chapter_params(), LocalContext(timeout_s=0.5)), "timeout")
    assert time.monotonic() - started < 2


def test_kept_answers_are_not_paid_again(chat_server: FakeChat, make_job: MakeJob) -> None:
    """A long chapter goes in several chunks that fit the context; a rerun with the same context
    (what the worker lends from the database) makes no call and costs nothing."""
    params = chapter_params(context=2048)
    assert len(params["chunks"]) >= 2
    for chunk in params["chunks"]:
        user = chunk["messages"][-1]["content"]
        assert len(user.encode()) // 3 + 450 * len(chunk["expect"]) <= 2048
    ctx = LocalContext()
    _, first = run(make_job, params, ctx)
    calls = len(chat_server.billing)
    assert calls == len(params["chunks"]) == len(ctx.answers)
    out, again = run(make_job, params, ctx)
    assert len(chat_server.billing) == calls and out.cost == 0
    assert again["shots"] == first["shots"] and again["cached"] == calls


def test_no_chat_url_is_permanent_and_names_the_setting(make_job: MakeJob, monkeypatch: pytest.MonkeyPatch) -> None:
    """An OpenAI-compatible director without PIPELINE_KIT_CHAT_URL fails at once, saying what to set."""
    monkeypatch.delenv("PIPELINE_KIT_CHAT_URL")
    assert_permanent(lambda: run(make_job, chapter_params()), "not_configured", "PIPELINE_KIT_CHAT_URL")


def test_an_edit_late_in_a_chapter_leaves_its_earlier_chunks_asking_the_same() -> None:
    """Each chunk carries only its own shots and their cast, so editing the last paragraph changes
    the last chunk's request alone: the earlier chunks' kept answers still apply."""
    before = chapter_params(context=2048)["chunks"]
    after = chapter_params(context=2048, text=TEXT.replace("The door was open.", "The door was locked."))["chunks"]
    assert len(before) == len(after) >= 2
    assert [c["messages"] for c in before[:-1]] == [c["messages"] for c in after[:-1]]
    assert before[-1]["messages"] != after[-1]["messages"]


def test_a_half_valid_answer_keeps_its_good_shots_and_asks_for_the_rest(
    chat_server: FakeChat, make_job: MakeJob
) -> None:
    """An answer one shot short keeps the shots it staged; the follow-up names the missing shot
    and asks for it alone; when that fails too, only that shot falls back to the rules."""
    chat_server.script("wrong_count", "malformed", "malformed")
    ctx = LocalContext()
    _, record = run(make_job, chapter_params(), ctx)
    expect = chapter_params()["chunks"][0]["expect"]
    assert sorted(map(int, record["shots"])) == expect[:-1] and record["fallback"] == expect[-1:]
    follow = chat_server.billing[1]["messages"][-1]["content"]
    assert f"no valid answer for seq [{expect[-1]}]" in follow and f"for seq {expect[-1]} only" in follow
    assert f"[shot {expect[-1]}]" in follow and f"[shot {expect[0]}]" not in follow
    assert len(ctx.answers) == 1  # the half-valid answer is kept: a rerun pays for the rest only


def test_each_chunk_carries_the_staging_of_the_shots_before(chat_server: FakeChat, make_job: MakeJob) -> None:
    """With a small context the chapter goes in several chunks; every chunk after the first
    carries the staging the model gave the shots just before it."""
    params = chapter_params(context=2048, text="\n\n".join([TEXT] * 6))
    assert len(params["chunks"]) >= 2
    run(make_job, params)
    first, second = (b["messages"][-1]["content"] for b in chat_server.billing[:2])
    last_of_first = params["chunks"][0]["expect"][-1]
    assert "as you staged them" not in first
    assert "as you staged them" in second and f"shot {last_of_first} (staged): medium, slow dolly in" in second
