"""The Volcengine speech backend (Doubao / Seed-TTS) against a strict stand-in of the V3 HTTP
Chunked API: each line sent with its voice as pcm under the speech console's own app id, access
key and resource id, the streamed audio joined into one WAV with its timing; 429, 5xx, a busy
answer and a cut stream are retried later; a voice the resource does not grant fails for good;
each line said is paid once, also when its task runs again after a later line failed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline_kit import engine
from pipeline_kit.backends import LocalContext
from pipeline_kit.backends.doubao_speech import DoubaoSpeech, credentials_from_env, make
from pipeline_kit.backends.ratelimit import RateLimiter
from pipeline_kit.chaos.invariants import check_all
from pipeline_kit.engine.setup import init
from pipeline_kit.errors import BadInput
from pipeline_kit.film import audio
from pipeline_kit.worker import WorkerConfig, run_worker
from tests.faults.helpers import wait_leases_expired

from .helpers import MakeJob, assert_permanent, assert_transient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.doubao_fake import FakeDoubao  # noqa: E402

PRICE = 0.2  # per 1,000 characters
LINES = [
    {
        "text": "你是谁？",
        "speaker": "林黛玉",
        "narration": False,
        "gender": "female",
        "voice": "zh_female_cancan_uranus_bigtts",
    },
    {"text": "风从山上吹下来。", "speaker": None, "narration": True, "gender": None, "voice": None},
]


@pytest.fixture
def doubao() -> Iterator[FakeDoubao]:
    with FakeDoubao() as server:
        yield server


def backend(server: FakeDoubao, key: str = "doubao-access-key", resource: str = "seed-tts-2.0") -> DoubaoSpeech:
    credentials = {"X-Api-App-Id": server.app_id, "X-Api-Access-Key": key}
    return DoubaoSpeech(server.url, credentials, resource, PRICE, RateLimiter(100, 10))


def test_lines_are_said_in_their_voices_and_joined(doubao: FakeDoubao, make_job: MakeJob) -> None:
    """Two lines: two requests (the cast voice, then the default narrator of the book's
    language), one WAV at 24 kHz whose lines last what the service streamed, GAP_S apart; the
    cost is the price per 1,000 characters the service billed; the credentials never appear in
    what is recorded."""
    job = make_job("voice", {"lang": "zh", "lines": LINES}, suffix=".wav")
    output = backend(doubao).run(job, LocalContext(uid="pc-1"))
    assert [b["speaker"] for b in doubao.billing] == ["zh_female_cancan_uranus_bigtts", "zh_male_m191_uranus_bigtts"]
    assert {b["resource"] for b in doubao.billing} == {"seed-tts-2.0"}
    said, seconds = audio.read_lines(output.extras[audio.LINES])
    assert [s.end_s - s.start_s for s in said] == pytest.approx([0.06 * 4, 0.06 * 8], abs=0.002)
    assert said[1].start_s == pytest.approx(said[0].end_s + audio.GAP_S, abs=0.001)
    assert audio.wav_seconds(job.out_path) == pytest.approx(seconds, abs=0.001)
    assert output.cost == pytest.approx(PRICE * 12 / 1000) and output.settings["billed_characters"] == 12
    recorded = repr(output) + repr(backend(doubao))
    assert "doubao-access-key" not in recorded and doubao.app_id not in recorded


@pytest.mark.parametrize(
    "answer,kind",
    [
        ("429:3", "rate_limited"),
        ("500", "server_error"),
        ("fail", "server_error"),
        ("busy", "rate_limited"),
        ("cut", "connection_error"),
    ],
)
def test_busy_failing_or_cut_answers_are_retried_later(
    doubao: FakeDoubao, make_job: MakeJob, answer: str, kind: str
) -> None:
    """A 429 (with its Retry-After), a 5xx, the service's own 55000000, its concurrency refusal
    and an answer cut mid-stream are transient: the task runs again later, nothing is billed and
    no half answer is taken for speech."""
    doubao.script(answer)
    job = make_job("voice", {"lang": "zh", "lines": LINES[:1]}, suffix=".wav")
    error = assert_transient(lambda: backend(doubao).run(job, LocalContext()), kind)
    assert error.retry_after == (3 if answer.startswith("429") else None)
    assert error.cost == 0.0 and doubao.billing == []
    assert not job.out_path.exists()


def test_a_rejected_voice_or_credential_fails_for_good(doubao: FakeDoubao, make_job: MakeJob) -> None:
    """A voice the resource does not grant (a 1.0 voice on seed-tts-2.0, or an OpenAI name) is
    the task's fault: permanent, naming the service's reason; a wrong access key and a resource
    the account does not hold are permanent too; none is billed."""
    for voice in ("zh_female_shuangkuaisisi_moon_bigtts", "alloy"):
        job = make_job("voice", {"lang": "zh", "lines": [{**LINES[0], "voice": voice}]}, suffix=".wav")
        assert_permanent(lambda: backend(doubao).run(job, LocalContext()), "bad_request", "speaker permission denied")
    job = make_job("voice", {"lang": "zh", "lines": LINES[:1]}, suffix=".wav")
    assert_permanent(lambda: backend(doubao, key="wrong").run(job, LocalContext()), "unauthorized")
    assert_permanent(lambda: backend(doubao, resource="seed-icl-2.0").run(job, LocalContext()), "unauthorized")
    assert doubao.billing == []


def test_a_resumed_task_pays_each_line_once(doubao: FakeDoubao, make_job: MakeJob) -> None:
    """The first line is said and paid, the second is cut: the attempt fails (retryable) with the
    first line's cost on it. Run again on this PC, only the second line is asked for: the
    service billed each line once, and the two attempts' costs add up to what it billed."""
    doubao.script("ok", "cut")
    job = make_job("voice", {"lang": "zh", "lines": LINES}, task_id="hlm-001-0003/voice", suffix=".wav")
    first = assert_transient(lambda: backend(doubao).run(job, LocalContext()), "connection_error")
    assert first.cost == pytest.approx(PRICE * 4 / 1000)
    output = backend(doubao).run(job, LocalContext())
    assert [b["text"] for b in doubao.billing] == [line["text"] for line in LINES]
    assert first.cost + output.cost == pytest.approx(PRICE * sum(b["characters"] for b in doubao.billing) / 1000)
    said, _ = audio.read_lines(output.extras[audio.LINES])
    assert [s.text for s in said] == [line["text"] for line in LINES]


def test_providers_names_it_and_its_check_costs_nothing(doubao: FakeDoubao) -> None:
    """`providers` shows the speech endpoint, the resource and the variable holding the access
    key; `--check` answers without saying (or paying for) anything, and an address where nothing
    listens is a connection failure the worker treats as "not reached"."""
    speech = backend(doubao)
    assert speech.describe("voice") == {
        "url": f"{doubao.url}/api/v3/tts/unidirectional",
        "model": "seed-tts-2.0",
        "key": "PIPELINE_KIT_DOUBAO_ACCESS_KEY",
    }
    speech.check()
    assert doubao.billing == []
    gone = DoubaoSpeech("http://127.0.0.1:9", {}, "seed-tts-2.0", PRICE, RateLimiter(100, 10))
    error = assert_transient(gone.check, "unreachable")
    assert error.turned_away


def test_credentials_come_from_the_speech_console_not_ark(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app id with its access key, else the new console's API key; Ark's key alone is not
    enough: a missing credential is one line of bad input."""
    env = {"PIPELINE_KIT_DOUBAO_APP_ID": "7", "PIPELINE_KIT_DOUBAO_ACCESS_KEY": "k"}
    assert credentials_from_env(env) == {"X-Api-App-Id": "7", "X-Api-Access-Key": "k"}
    assert credentials_from_env({"PIPELINE_KIT_DOUBAO_API_KEY": "a"}) == {"X-Api-Key": "a"}
    for name in ("PIPELINE_KIT_DOUBAO_APP_ID", "PIPELINE_KIT_DOUBAO_ACCESS_KEY", "PIPELINE_KIT_DOUBAO_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ARK_API_KEY", "ark-key")
    with pytest.raises(BadInput, match="PIPELINE_KIT_DOUBAO_APP_ID") as info:
        make(None)
    assert "\n" not in str(info.value)


@pytest.mark.db
def test_a_worker_killed_after_the_call_is_not_paid_twice(
    doubao: FakeDoubao, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker is SIGKILLed right after the service said a shot's lines (before it completed
    the task); once its lease expires another worker takes the task over and reuses the speech
    the first one kept: each line billed once, the task completed once, the cost booked equal
    to what the service billed."""
    url = f"sqlite:///{tmp_path / 'production.db'}"
    db = init(url)
    try:
        spec = engine.TaskSpec(
            task_id="hlm-001-0003/voice",
            kind="voice",
            lane="voice",
            params={"lang": "zh", "lines": LINES},
            bookcode="hlm",
            shot_id="hlm-001-0003",
        )
        with db.engine.begin() as conn:
            engine.enqueue(conn, [spec])
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")},
            **doubao_env(doubao),
            "PIPELINE_KIT_FAULTS": "after_call:kill:1",
        }
        cmd = [sys.executable, "-m", "pipeline_kit", "--db", url, "work", "--worker-id", "A", "--lanes", "voice"]
        cmd += ["--backend", "doubao", "--until-empty", "--quiet", "--lease", "2", "--heartbeat", "0.5"]
        killed = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert len(doubao.billing) == len(LINES)
        wait_leases_expired(db)
        for key, value in doubao_env(doubao).items():
            monkeypatch.setenv(key, value)
        cfg = WorkerConfig(worker_id="B", lanes=("voice",), backend="doubao", until_empty=True, lease_s=2)
        summary = run_worker(db, replace(cfg, heartbeat_s=0.5, spool=tmp_path / "spool", progress=False))
        assert summary.counts["completed"] == 1
        assert len(doubao.billing) == len(LINES), "the takeover reused the speech: nothing paid twice"
        assert not list(tmp_path.rglob("*.said-*")), "the lines kept for a takeover are cleared once published"
        billed = PRICE * sum(b["characters"] for b in doubao.billing) / 1000
        assert check_all(db, root=tmp_path, billed_cost=billed) == []
    finally:
        db.dispose()


def doubao_env(server: FakeDoubao) -> dict[str, str]:
    return {
        "PIPELINE_KIT_DOUBAO_URL": server.url,
        "PIPELINE_KIT_DOUBAO_APP_ID": server.app_id,
        "PIPELINE_KIT_DOUBAO_ACCESS_KEY": server.access_key,
        "PIPELINE_KIT_DOUBAO_PRICE": str(PRICE),
    }
