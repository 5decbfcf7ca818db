"""The provider's picture through the whole pipeline: a short chapter made by a worker against the
Ark stand-in (Seedream frames, Seedance 720p clips), on SQLite (the database does not matter here).

Invariant (issue 26, the film profile): a provider's picture is never shrunk on the way: Seedream's
1280x720 frames are kept as drawn and sent to Seedance as they are, and under the default
`provider` profile the chapter film keeps Seedance's 1280x720 at 24 fps (read back with ffmpeg),
with the shots' speech on its sound track.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db.schema import tasks
from pipeline_kit.engine.setup import init
from pipeline_kit.film import chapter_task_id, ffmpeg
from pipeline_kit.text import ingest_file, split_book
from pipeline_kit.worker.runtime import WorkerConfig, run_worker
from tests.text.helpers import SAMPLE_TITLE, sample_chapter_files

from .test_voice_film import fetch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.ark_fake import FakeArk  # noqa: E402

KEY = "sk-ark-picture-5e1d"


@pytest.mark.db
def test_seedance_720p_stays_720p_in_the_chapter_film(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every frame kept at 1280x720 and sent so to every clip create; the chapter film is
    1280x720 at 24 fps, as the clips are, and has sound."""
    db = init(f"sqlite:///{tmp_path / 'production.db'}")
    try:
        one = sample_chapter_files(tmp_path)[0]
        text = one.read_text(encoding="utf-8")
        one.write_text(text[: text.index("see it?”") + 8] + "\n", encoding="utf-8")  # three shots
        bookcode = ingest_file(db, one, SAMPLE_TITLE, chapter=1).bookcode
        split_book(db, bookcode)
        with FakeArk(api_key=KEY, polls=1) as ark:
            for name, value in {
                "ARK_API_KEY": KEY,
                "PIPELINE_KIT_ARK_URL": f"{ark.url}/api/v3",
                "PIPELINE_KIT_ARK_POLL": "0.02",
                "PIPELINE_KIT_ARK_RATE": "100",
                "PIPELINE_KIT_ARK_BURST": "100",
            }.items():
                monkeypatch.setenv(name, value)
            cfg = WorkerConfig(worker_id="pc-1", backend="ark", until_empty=True, progress=False, poll_s=0.1)
            summary = run_worker(db, cfg)
            creates = list(ark.billing)
        with db.engine.connect() as conn:
            statuses = set(conn.execute(sa.select(tasks.c.status)).scalars())
        assert statuses == {"completed"}, summary.line()
        frames = [c for c in creates if c["kind"] == "image" and c["prompt"]]
        assert frames and {c["size"] for c in frames} == {(1280, 720)}
        videos = [c for c in creates if c["kind"] == "video"]
        assert videos and all(c["frames"] == {"first_frame": (1280, 720), "last_frame": (1280, 720)} for c in videos)
        film, result = fetch(db, tmp_path, chapter_task_id(bookcode, 1))
        probe = ffmpeg.probe(film, timeout_s=30)
        assert (probe.width, probe.height, probe.fps, probe.audio) == (1280, 720, 24.0, True)
        assert (result["profile"], result["width"], result["height"], result["fps"]) == ("provider", 1280, 720, 24)
    finally:
        db.dispose()
