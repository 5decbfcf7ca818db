"""The registry, the offline noop/sleep backends, the params contract and LocalContext."""

from __future__ import annotations

import json
import time

import pytest

from pipeline_kit.backends import Backend, LocalContext, available_backends, get_backend, params
from pipeline_kit.errors import BadInput, GenerationError

from .helpers import MakeJob, assert_permanent


def test_available_backends_lists_every_registered_name() -> None:
    """The CLI's --backend choices are exactly the registered backends."""
    assert available_backends() == [
        "ark",
        "assembly",
        "comfyui",
        "director",
        "doubao",
        "espeak",
        "music",
        "noop",
        "ollama",
        "openai",
        "sketch",
        "sleep",
        "speech",
    ]


@pytest.mark.parametrize("spec", ["sketch", "noop", "sleep:0", "sleep:0.25", " noop "])
def test_offline_specs_give_backends(spec: str) -> None:
    """Every offline spec builds an object that satisfies the Backend protocol."""
    backend = get_backend(spec)
    assert isinstance(backend, Backend)


@pytest.mark.parametrize(
    "spec", ["nope", "", "sleep", "sleep:abc", "sleep:-1", "sleep:nan", "sleep:inf", "noop:3", "sketch:fast", "SKETCH"]
)
def test_bad_specs_raise_bad_input_in_one_line(spec: str) -> None:
    """Unknown names and bad arguments are BadInput (exit 2) with one clear line."""
    with pytest.raises(BadInput) as info:
        get_backend(spec)
    assert "\n" not in str(info.value) and str(info.value)


def test_openai_without_key_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started for openai without a key stops at once, before claiming anything."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BadInput, match="OPENAI_API_KEY"):
        get_backend("openai")


def test_noop_writes_a_tiny_json_for_free(make_job: MakeJob) -> None:
    """noop costs nothing and leaves a readable record at the out path."""
    job = make_job("first_frame", suffix=".json")
    output = get_backend("noop").run(job, LocalContext())
    assert output.cost == 0 and output.path == job.out_path
    assert json.loads(job.out_path.read_text())["task_id"] == "t1"


def test_sleep_sleeps_then_answers(make_job: MakeJob) -> None:
    """sleep:S takes at least S seconds (benchmarks rely on it) and then acts like noop."""
    start = time.monotonic()
    output = get_backend("sleep:0.2").run(make_job("video", suffix=".json"), LocalContext())
    assert time.monotonic() - start >= 0.2 and output.cost == 0


def test_sleep_longer_than_timeout_is_a_retryable_timeout(make_job: MakeJob) -> None:
    """A call that would outlast its timeout ends at the timeout, as a retryable timeout."""
    start = time.monotonic()
    with pytest.raises(GenerationError) as info:
        get_backend("sleep:5").run(make_job("noop"), LocalContext(timeout_s=0.2))
    assert time.monotonic() - start < 1.0
    assert info.value.retryable and info.value.error_kind == "timeout"


def test_suffix_by_kind() -> None:
    """Output file names follow the kind: .png images, .mp4 video, .json records."""
    sketch = get_backend("sketch")
    assert [sketch.suffix(k) for k in ("character_sheet", "first_frame", "last_frame", "video", "llm", "noop")] == [
        ".png",
        ".png",
        ".png",
        ".mp4",
        ".json",
        ".json",
    ]
    assert_permanent(lambda: sketch.suffix("poem"), "invalid_kind")


def test_params_defaults_and_errors(make_job: MakeJob) -> None:
    """Width/height/fps/seed default (640x360, 12 fps, a stable seed); bad values are permanent."""
    job = make_job("first_frame", {})
    assert params.size(job.params) == (640, 360) and params.fps(job.params) == 12
    assert params.seed(job) == params.seed(make_job("first_frame", {})) == params.stable_seed("t1")
    assert params.even_size({"width": 641, "height": 361}) == (640, 360)
    assert_permanent(lambda: params.size({"width": "wide"}), "bad_param")
    assert_permanent(lambda: params.size({"width": 0}), "unsupported_size")
    assert_permanent(lambda: params.require({}, "shot_id"), "missing_field", "shot_id")
    assert_permanent(lambda: params.duration_s({"duration_s": -1}), "bad_param")


def test_local_context_records_stages_and_remote_ids() -> None:
    """LocalContext keeps what a backend reported, for tests and notebooks."""
    ctx = LocalContext(timeout_s=1.0, uid="u1")
    ctx.stage("generating_image")
    ctx.remember_remote_job("abc")
    assert ctx.stages == ["generating_image"] and ctx.remote_jobs == ["abc"]
