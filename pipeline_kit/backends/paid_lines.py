"""A voice task's lines said by a paid speech service, one call a line, each line paid once.

Each line said is kept beside the task's output, named like the worker's temporary files of the
task (`STEM.said-KEY.part.wav` beside `STEM.TOKEN.part.wav`; the worker clears `STEM.*.part.wav`
once the output is published), so an attempt that fails on a later line (a 5xx, a cut answer),
or a worker killed before it completed the task, costs no second payment when the task runs
again on this PC. A failure carries what this attempt paid before it, so that cost stays booked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline_kit.backends.base import Job
from pipeline_kit.backends.classify import classify

# (text, voice) -> (16-bit mono samples, characters billed or None for "as many as the text has")
Say = Callable[[str, str], tuple[bytes, int | None]]


@dataclass(frozen=True)
class Spoken:
    """A task's lines as said: (line, samples) in order, each line's voice, characters billed now."""

    pieces: list[tuple[Mapping[str, Any], bytes]]
    voices: list[str]
    billed: int


def say_lines(
    job: Job,
    lines: list[dict[str, Any]],
    voice_of: Callable[[Mapping[str, Any]], str],
    say: Say,
    *,
    service: str,
    cost_of: Callable[[int], float],
) -> Spoken:
    """Say each line with `say` unless an earlier attempt here kept it; a failure is raised as its
    GenerationError carrying `cost_of` the characters this attempt had paid for."""
    pieces, voices, billed = [], [], 0
    for line in lines:
        voice = voice_of(line)
        keep = kept_path(job, service, voice, line["text"])
        if keep.is_file():
            samples = keep.read_bytes()
        else:
            try:
                samples, words = say(line["text"], voice)
            except Exception as exc:  # what this attempt paid stays booked on it
                error = classify(exc)
                error.cost = cost_of(billed)
                raise error from exc
            billed += len(line["text"]) if words is None else words
            _write_atomic(keep, samples)
        pieces.append((line, samples))
        voices.append(voice)
    return Spoken(pieces, voices, billed)


def kept_path(job: Job, service: str, voice: str, text: str) -> Path:
    """Where a line said for this task is kept: `STEM.said-KEY.part.SUFFIX` beside the output."""
    key = hashlib.sha256(json.dumps([job.task_id, service, voice, text]).encode()).hexdigest()[:20]
    stem = job.out_path.name.split(".", 1)[0]
    return job.out_path.with_name(f"{stem}.said-{key}.part{job.out_path.suffix}")


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
