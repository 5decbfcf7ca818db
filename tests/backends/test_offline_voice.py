"""The offline voice: libespeak-ng from the pip wheel speaks English and Mandarin, each line in its
own voice, with the lines' timing beside the WAV; any picture provider's worker speaks with it."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit import kinds
from pipeline_kit.backends.params import image_suffix
from pipeline_kit.backends.routing import Router, Routing
from pipeline_kit.film import audio

from .helpers import MakeJob, assert_permanent

VOICE = get_backend("espeak")
EN = "The lamp at the top of the lighthouse went dark. Mara ran down to the harbour."
ZH = "孙悟空拿起金箍棒，对着妖怪大喝一声。"  # 18 characters


def line(text: str, **extra: object) -> dict[str, object]:
    return {"text": text, "speaker": None, "narration": False, "gender": None, "voice": None, **extra}


def samples(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as found:
        assert (found.getnchannels(), found.getsampwidth()) == (1, 2)
        return np.frombuffer(found.readframes(found.getnframes()), dtype="<i2"), found.getframerate()


@pytest.mark.parametrize(
    "lang,text,low,high",
    [("en", EN, 2.5, 9.0), ("zh", ZH, 2.0, 9.0)],
)
def test_offline_voice_speaks_english_and_mandarin(
    make_job: MakeJob, lang: str, text: str, low: float, high: float
) -> None:
    """A line comes back as real speech of a plausible length for its words (not silence, not a
    stub), and its timing file says when it is said."""
    job = make_job("voice", {"lang": lang, "lines": [line(text, narration=True)]}, suffix=".wav")
    output = VOICE.run(job, LocalContext())
    pcm, rate = samples(job.out_path)
    seconds = len(pcm) / rate
    assert low < seconds < high
    assert np.sqrt(np.mean(pcm.astype(float) ** 2)) > 300  # audible, not a silent file
    said, length = audio.read_lines(output.extras[audio.LINES])
    assert length == pytest.approx(seconds, abs=0.01)
    assert [(s.text, s.start_s) for s in said] == [(text, 0.0)] and said[0].end_s == pytest.approx(seconds, abs=0.01)
    assert output.result["voices"] == ["en" if lang == "en" else "cmn"]  # the narrator's default


def test_each_line_in_its_speakers_voice_one_after_another(make_job: MakeJob) -> None:
    """Two speakers: a cast voice for one, the default for the other's gender; the second line
    starts a gap after the first ends, and the WAV lasts until the last line ends."""
    job = make_job(
        "voice",
        {
            "lang": "en",
            "lines": [line("Who is there?", speaker="Mara", voice="en+f2"), line("Only me.", gender="male")],
        },
    )
    output = VOICE.run(job, LocalContext())
    said, length = audio.read_lines(output.extras[audio.LINES])
    assert output.settings["voices"] == ["en+f2", "en+m3"]
    assert [s.speaker for s in said] == ["Mara", None]
    assert said[1].start_s == pytest.approx(said[0].end_s + audio.GAP_S, abs=0.01)
    assert length == pytest.approx(said[1].end_s, abs=0.01)
    assert length == pytest.approx(audio.wav_seconds(job.out_path), abs=0.01)


def test_a_voice_espeak_does_not_have_is_refused_for_good(make_job: MakeJob) -> None:
    """A voice name the library rejects is the task's fault: a permanent bad_voice, no retry."""
    job = make_job("voice", {"lang": "en", "lines": [line("Hello.", voice="no-such-voice")]}, suffix=".wav")
    assert_permanent(lambda: VOICE.run(job, LocalContext()), "bad_voice", "no-such-voice")
    bad = make_job("voice", {"lines": "hello"}, suffix=".wav")
    assert_permanent(lambda: VOICE.run(bad, LocalContext()), "bad_param", "lines")


def test_the_sketch_backend_speaks_with_the_offline_voice(make_job: MakeJob) -> None:
    """`work --backend sketch` makes voices too, with the offline voice (the same length of speech:
    espeak varies a few milliseconds a run, so not the same bytes)."""
    params = {"lang": "en", "lines": [line("Rain fell on the empty road.", narration=True)]}
    sketch, offline = (
        make_job("voice", params, task_id="a/voice"),
        make_job("voice", params, task_id="b/voice", suffix=".wav"),
    )
    get_backend("sketch").run(sketch, LocalContext())
    VOICE.run(offline, LocalContext())
    assert audio.wav_seconds(sketch.out_path) == pytest.approx(audio.wav_seconds(offline.out_path), rel=0.05)


class Pictures:
    """A picture-only provider, as ark or comfyui is: it makes no voice."""

    name = "pictures"

    def suffix(self, kind: str) -> str:
        return image_suffix(kind, self.name)


def test_a_picture_provider_worker_speaks_offline_unless_voice_is_routed() -> None:
    """With only a picture provider named, voice tasks go to the offline voice; a routing that
    names a voice backend for `voice` keeps it."""

    def build(spec: str) -> object:
        return Pictures() if spec == "pictures" else get_backend(spec)

    router = Router(Routing.parse("pictures"), build=build)  # type: ignore[arg-type]
    router.check({"voice": "voice", "first_frame": "image"})
    assert router.backend_for("voice").name == "espeak"
    assert router.backend_for(kinds.names(media=kinds.Media.IMAGE)[0]).name == "pictures"
    routed = Router(Routing.parse("voice=sketch,default=pictures"), build=build)  # type: ignore[arg-type]
    assert routed.backend_for("voice").name == "sketch"
