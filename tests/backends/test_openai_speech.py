"""The OpenAI-compatible speech backend against a strict stand-in of `POST /v1/audio/speech`:
each line sent with its voice as pcm, joined into one WAV with its timing; 429 and 5xx and a cut
answer are retried later, a rejected voice fails for good, and every line said is paid once."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline_kit.backends import LocalContext
from pipeline_kit.backends.openai_speech import OpenAISpeech
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.film import audio

from .helpers import MakeJob, assert_permanent, assert_transient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.speech_fake import FakeSpeech  # noqa: E402

LINES = [
    {"text": "Who is there?", "speaker": "Mara", "narration": False, "gender": "female", "voice": "marin"},
    {"text": "Only the wind.", "speaker": None, "narration": True, "gender": None, "voice": None},
]


@pytest.fixture
def speech() -> Iterator[FakeSpeech]:
    with FakeSpeech() as server:
        yield server


def backend(server: FakeSpeech, key: str = "sk-test-secret") -> OpenAISpeech:
    return OpenAISpeech(server.url, key, "gpt-4o-mini-tts", 0.015, RateLimiter(100, 10))


def test_lines_are_said_in_their_voices_and_joined(speech: FakeSpeech, make_job: MakeJob) -> None:
    """Two lines: two requests (the cast voice, marin, one of the newest the API lists, then the
    narrator's default), one WAV at 24 kHz whose lines last what the service said, GAP_S apart;
    the cost is the price per 1,000 characters said, and the key never appears in what is
    recorded."""
    job = make_job("voice", {"lang": "en", "lines": LINES}, suffix=".wav")
    output = backend(speech).run(job, LocalContext())
    assert [b["voice"] for b in speech.billing] == ["marin", "alloy"]
    said, seconds = audio.read_lines(output.extras[audio.LINES])
    assert [s.end_s - s.start_s for s in said] == pytest.approx([0.06 * 13, 0.06 * 14], abs=0.002)
    assert said[1].start_s == pytest.approx(said[0].end_s + audio.GAP_S, abs=0.001)
    assert audio.wav_seconds(job.out_path) == pytest.approx(seconds, abs=0.001)
    assert output.cost == pytest.approx(0.015 * 27 / 1000)
    assert "sk-test-secret" not in repr(output) + repr(backend(speech))


@pytest.mark.parametrize(
    "answer,kind", [("429:3", "rate_limited"), ("503", "server_error"), ("cut", "connection_error")]
)
def test_busy_failing_or_cut_answers_are_retried_later(
    speech: FakeSpeech, make_job: MakeJob, answer: str, kind: str
) -> None:
    """A 429 (with its Retry-After), a 5xx and an answer cut short are transient: the task runs
    again later, and no half answer is taken for speech."""
    speech.script(answer)
    job = make_job("voice", {"lang": "en", "lines": LINES[:1]}, suffix=".wav")
    error = assert_transient(lambda: backend(speech).run(job, LocalContext()), kind)
    assert error.retry_after == (3 if answer.startswith("429") else None)
    assert not job.out_path.exists()


def test_a_rejected_voice_or_key_fails_for_good(speech: FakeSpeech, make_job: MakeJob) -> None:
    """An unknown voice is the task's fault (400, permanent, naming it); a wrong key is
    permanent too; neither is billed."""
    job = make_job("voice", {"lang": "en", "lines": [{**LINES[0], "voice": "en+f3"}]}, suffix=".wav")
    assert_permanent(lambda: backend(speech).run(job, LocalContext()), "bad_request", "voice")
    job = make_job("voice", {"lang": "en", "lines": LINES[:1]}, suffix=".wav")
    assert_permanent(lambda: backend(speech, "sk-wrong").run(job, LocalContext()), "unauthorized")
    assert speech.billing == []


def test_a_resumed_task_pays_each_line_once(speech: FakeSpeech, make_job: MakeJob) -> None:
    """The first line is said and paid, the answer to the second is cut (the stand-in bills it,
    as a service that made the audio would): the attempt fails (retryable) carrying the first
    line's cost. Run again on this PC, only the second line is asked for again: the first line
    is never billed twice, and the two attempts book each line once."""
    speech.script("ok", "cut")
    job = make_job("voice", {"lang": "en", "lines": LINES}, task_id="tale-c001-s0003/voice", suffix=".wav")
    first = assert_transient(lambda: backend(speech).run(job, LocalContext()), "connection_error")
    assert first.cost == pytest.approx(0.015 * len(LINES[0]["text"]) / 1000)
    output = backend(speech).run(job, LocalContext())
    texts = [line["text"] for line in LINES]
    assert [b["input"] for b in speech.billing] == [texts[0], texts[1], texts[1]]
    assert first.cost + output.cost == pytest.approx(0.015 * sum(map(len, texts)) / 1000)
    said, _ = audio.read_lines(output.extras[audio.LINES])
    assert [s.text for s in said] == [line["text"] for line in LINES]
