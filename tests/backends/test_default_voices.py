"""A line nobody cast a voice for: narration in the narrator's voice, each character in one voice
of its gender's pool, the same in every shot, run and PC, and characters mostly apart."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline_kit.backends import doubao_speech, offline_voice, openai_speech
from pipeline_kit.backends.default_voices import Pools, default_voice

POOLS: dict[str, Pools] = {
    "espeak en": offline_voice.DEFAULTS["en"],
    "espeak zh": offline_voice.DEFAULTS["zh"],
    "openai": openai_speech.DEFAULTS,
    "doubao zh": doubao_speech.DEFAULTS["zh"],
}
MEN = ("Holmes", "Watson", "Lestrade", "Moriarty", "孙悟空", "祖师", "龙王", "玉帝")


@pytest.mark.parametrize("name", POOLS)
def test_narration_and_unnamed_speakers_take_the_pools_first_voice(name: str) -> None:
    pools = POOLS[name]
    assert default_voice(pools, {"narration": True, "speaker": "Holmes", "gender": "male"}) == pools["narrator"][0]
    assert default_voice(pools, {"gender": "female"}) == pools["female"][0]
    assert default_voice(pools, {"gender": "unheard-of"}) == pools[None][0]


@pytest.mark.parametrize("name", ["espeak en", "espeak zh", "openai"])
def test_characters_of_one_gender_mostly_speak_apart(name: str) -> None:
    """Eight men over a pool of four or more voices: at least three voices heard (the pick is a
    hash of the name, so some share), none outside the pool, and never the narrator's."""
    pools = POOLS[name]
    heard = {default_voice(pools, {"speaker": man, "gender": "male"}) for man in MEN}
    assert heard <= set(pools["male"]) and len(heard) >= 3
    assert not set(pools["narrator"]) & (set(pools["male"]) | set(pools["female"]) | set(pools[None]))


def test_a_character_keeps_his_voice_in_another_process() -> None:
    """The pick is no per-process hash: another interpreter (another PC) picks the same voices."""
    pools = POOLS["espeak en"]
    here = [default_voice(pools, {"speaker": man, "gender": "male"}) for man in MEN]
    code = (
        "from pipeline_kit.backends.offline_voice import DEFAULTS\n"
        "from pipeline_kit.backends.default_voices import default_voice\n"
        f"print([default_voice(DEFAULTS['en'], {{'speaker': m, 'gender': 'male'}}) for m in {MEN!r}])"
    )
    there = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONHASHSEED": "12345", "PATH": ""}, capture_output=True, text=True
    )
    assert there.stdout.strip() == repr(here), there.stderr
