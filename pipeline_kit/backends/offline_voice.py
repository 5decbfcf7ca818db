"""The `espeak` backend: a shot's lines spoken offline by libespeak-ng, free and with no key
(its wavegen varies a few milliseconds from run to run, so bytes are not repeatable).

Each line is said in its own voice (the one cast for its speaker, else a default for the
speaker's gender and the book's language, the narrator's for narration), one after another;
the WAV and its lines' timing (`film/audio.py`) are the task's output.
"""

from __future__ import annotations


from pipeline_kit import kinds
from pipeline_kit.backends import espeak, params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.classify import classified
from pipeline_kit.backends.default_voices import Pools, default_voice
from pipeline_kit.errors import BadInput
from pipeline_kit.film import audio

# per language, the espeak voices (voice+variant) a line nobody cast a voice for is said in
DEFAULTS: dict[str, Pools] = {
    lang: {
        "narrator": (base,),
        "male": tuple(f"{base}+m{n}" for n in (3, 1, 2, 4, 5, 6, 7)),
        "female": tuple(f"{base}+f{n}" for n in (3, 1, 2, 4)),
        None: tuple(f"{base}+m{n}" for n in (1, 2, 4, 5, 6, 7)),
    }
    for lang, base in (("en", "en"), ("zh", "cmn"))
}


class OfflineVoice:
    """Speaks a voice task's lines with libespeak-ng."""

    name = "espeak"

    def suffix(self, kind: str) -> str:
        """.wav: it makes the voice kind only."""
        params.check_kind(kind, kinds.made_by(self.name), self.name)
        return ".wav"

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Write the shot's speech to `job.out_path` and its timing beside it."""
        params.check_kind(job.kind, kinds.made_by(self.name), self.name)
        lang = params.text(job.params, "lang", "en")
        lines = params.voice_lines(job.params)
        ctx.stage("generating_audio")
        pieces, rate, voices = [], 22050, []
        for line in lines:
            voice = str(line.get("voice") or default_voice(DEFAULTS.get(lang, DEFAULTS["en"]), line))
            speech = espeak.speak(line["text"], voice)
            pieces.append((line, speech.pcm))
            rate = speech.rate
            voices.append(voice)
        ctx.stage("finalizing")
        side = job.out_path.with_name(job.out_path.name + audio.LINES)
        said, seconds = audio.write_speech(job.out_path, side, pieces, rate)
        return Output(
            path=job.out_path,
            model="espeak-ng",
            result={"duration_s": round(seconds, 3), "lines": len(said), "voices": sorted(set(voices))},
            settings={"voices": voices, "rate": rate},
            extras={audio.LINES: side},
        )


def make(arg: str | None) -> OfflineVoice:
    """Registry factory for `espeak` (takes no argument)."""
    if arg is not None:
        raise BadInput(f"backend 'espeak' takes no argument, got 'espeak:{arg}'")
    return OfflineVoice()
