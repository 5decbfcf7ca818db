"""A book's film profile and music bed, set as a user does (`film BOOKCODE --profile P`,
`--music FILE`, `--no-music`), on SQLite, PostgreSQL and MariaDB.

Invariants (issue 26): a bad profile or a file that is no sound is one line on stderr, exit 2,
nothing stored; the music bed is made on the PC that has the file and reaches the films through
the store (the database store on the servers); the chapter film is made at the profile's picture
with the bed audible under it; `film` and `status` say which profile the book uses; changing a
setting re-opens the films made before, saying why; the exported timeline has the music on a
track of its own, pointing at the exported bed.
"""

from __future__ import annotations

from pathlib import Path

import opentimelineio as otio
import pytest
import sqlalchemy as sa

from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import books, tasks
from pipeline_kit.film import chapter_task_id, ffmpeg
from pipeline_kit.film.names import music_task_id
from pipeline_kit.text import ingest_file, split_book
from pipeline_kit.worker.runtime import WorkerConfig, run_worker
from tests.text.helpers import SAMPLE_TITLE, row_counts, sample_chapter_files

from .test_sound_and_picture import MUSIC_HZ, band_db, decoded, tone
from .test_voice_film import fetch


def cli(db_url: str, *args: str) -> int:
    return main(["--db", db_url, *args])


def test_profile_and_music_set_from_the_command_line(
    db: Database, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad input changes nothing; `--profile animatic` and `--music` are stored and the music
    bed made at once; a sketch worker then makes a 640x360, 12 fps chapter film with the music
    in it; `film` and `status` name the profile; `--profile provider` re-opens the film with
    the reason; the export's timeline carries the bed."""
    monkeypatch.chdir(tmp_path)
    one = sample_chapter_files(tmp_path)[0]
    text = one.read_text(encoding="utf-8")
    one.write_text(text[: text.index("row me across?”") + 15] + "\n", encoding="utf-8")
    bookcode = ingest_file(db, one, SAMPLE_TITLE, chapter=1).bookcode
    split_book(db, bookcode)
    before = row_counts(db)
    (tmp_path / "notes.txt").write_text("not music", encoding="utf-8")
    for bad in (
        ["--profile", "cinema"],
        ["--profile", "641x360@24"],
        ["--music", "nowhere.mp3"],
        ["--music", "notes.txt"],
    ):
        capsys.readouterr()
        assert cli(db_url, "film", bookcode, *bad) == 2, bad
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
    assert row_counts(db) == before
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(books.c.film_profile, books.c.music)).one() == (None, None)

    assert cli(db_url, "film", bookcode, "--profile", "animatic") == 0
    assert "film profile: animatic (640x360 at 12 fps)" in capsys.readouterr().out
    bed = tone(tmp_path / "bed.mp3", MUSIC_HZ, 4.0)
    assert cli(db_url, "film", bookcode, "--music", str(bed)) == 0
    assert f"music bed of {bookcode} ({music_task_id(bookcode)}): bed.mp3 (completed)" in capsys.readouterr().out

    cfg = WorkerConfig(worker_id="pc-1", backend="sketch", until_empty=True, progress=False, poll_s=0.1)
    run_worker(db, cfg)
    film, result = fetch(db, tmp_path, chapter_task_id(bookcode, 1))
    probe = ffmpeg.probe(film, timeout_s=30)
    assert (probe.width, probe.height, probe.fps, probe.audio) == (640, 360, 12.0, True)
    assert (result["profile"], result["music"]) == ("animatic", True)
    samples = decoded(film)
    assert band_db(samples, 0.2, 1.8, MUSIC_HZ) > band_db(samples, 0.2, 1.8, 3000) + 20, "the bed under the title card"

    assert cli(db_url, "film", bookcode) == 0
    assert "profile: animatic (640x360 at 12 fps); music: bed.mp3 (completed)" in capsys.readouterr().out
    assert cli(db_url, "status", bookcode) == 0
    assert "film profile: animatic (640x360 at 12 fps)" in capsys.readouterr().out
    assert cli(db_url, "status") == 0
    assert f"{bookcode} " in (out := capsys.readouterr().out) and " animatic " in out

    out = tmp_path / "export"
    assert cli(db_url, "export", bookcode, str(out), "--cache", str(tmp_path / "cache")) == 0
    timeline = otio.adapters.read_from_file(str(out / "films" / bookcode / "chapter-001.otio"))
    music = [t for t in timeline.tracks if t.name == "music"]
    assert len(music) == 1 and music[0].duration().to_frames(result["fps"]) == result["frames"]
    targets = {Path(c.media_reference.target_url.removeprefix("file://")) for c in music[0].find_clips()}
    assert len(targets) == 1 and targets.pop().suffix == ".m4a"

    capsys.readouterr()
    assert cli(db_url, "film", bookcode, "--profile", "provider") == 0
    said = capsys.readouterr().out
    assert said.endswith("2 films re-opened: the film profile changed (animatic -> provider)\n"), said
    assert cli(db_url, "film", bookcode, "--no-music") == 0
    assert "the music was taken off" in capsys.readouterr().out
    with db.engine.connect() as conn:
        params = conn.execute(sa.select(tasks.c.params).where(tasks.c.task_id == chapter_task_id(bookcode, 1))).scalar()
    assert params["profile"] == "provider" and "music_task" not in params and "width" not in params
