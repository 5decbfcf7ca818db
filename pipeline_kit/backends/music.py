"""The `music` backend: a book's music bed made from a sound file the user names on this PC.

`pipeline-kit film BOOKCODE --music FILE` runs it in its own process on the PC that has the file
(`music:FILE`), for the book's `music` task alone: the bed (48 kHz stereo AAC, brought to one
level under speech) is published through the store like any output, so every PC's assembly
fetches it as an input. A file that is not the one the task was made for (its sha256 differs) is
refused for good: another PC cannot make it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.classify import classified
from pipeline_kit.errors import BadInput
from pipeline_kit.film import ffmpeg


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB pieces."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MusicBed:
    """Makes the `music` kind from one local sound file."""

    name = "music"

    def __init__(self, source: Path) -> None:
        self.source = source

    def suffix(self, kind: str) -> str:
        """.m4a: it makes the music kind only."""
        params.check_kind(kind, kinds.made_by(self.name), self.name)
        return ".m4a"

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Check the file is the task's, and write the bed to `job.out_path`."""
        params.check_kind(job.kind, kinds.made_by(self.name), self.name)
        wanted = str(params.require(job.params, "sha256"))
        if not self.source.is_file() or file_sha256(self.source) != wanted:
            raise params.permanent(
                "bad_input",
                f"bad_input: {self.source} is not the music this task was made for (sha256 {wanted[:12]}...): "
                "run `pipeline-kit film BOOKCODE --music FILE` again on the PC that has it",
            )
        ctx.stage("generating_audio")
        ffmpeg.music_bed(self.source, job.out_path, timeout_s=ctx.timeout_s)
        try:
            seconds = ffmpeg.audio_seconds(job.out_path, timeout_s=ctx.timeout_s)
        except ValueError as exc:
            raise params.permanent("bad_output", f"bad_output: the music bed of {self.source.name}: {exc}") from None
        return Output(
            path=job.out_path,
            model="ffmpeg",
            result={"duration_s": round(seconds, 3), "source": params.text(job.params, "name")},
            settings={"loudness": ffmpeg.BED_LOUDNESS},
        )


def make(arg: str | None) -> MusicBed:
    """Registry factory for `music:FILE`."""
    if not arg:
        raise BadInput("backend 'music' needs the sound file: music:FILE")
    return MusicBed(Path(arg).expanduser().resolve())
