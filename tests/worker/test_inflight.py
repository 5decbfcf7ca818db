"""Several remote jobs per worker (issue 16 item 3): `work --inflight N` against the Ark stand-in.

Invariants protected: one worker holding N video leases polls them together, so 40 clips of
2 s each take about a fifth of the one-at-a-time time; every lease is renewed while its job
runs (no attempt ends `lost`), every task completes exactly once, and the provider's log shows
one paid create per task, also when a worker is SIGKILLed with several jobs in flight and a
second worker takes them over.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from servers.ark_fake import FakeArk

from pipeline_kit import engine
from pipeline_kit.cli import build_parser, main
from pipeline_kit.cli.worker_cmds import worker_config
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.errors import BadInput
from pipeline_kit.worker import WorkerConfig, launcher, run_worker
from pipeline_kit.worker.notebook import notebook_config
from tests.conftest import first_value
from tests.faults.helpers import wait_leases_expired

KEY = "ark-inflight-key"
BOOK = "inf"
SIZE = {"width": 640, "height": 360}
POLL_S, POLLS = 0.2, 10  # a video runs 10 polls of 0.2 s: 2 s on the stand-in
FRAMES = tuple(f"{BOOK}/frames/{kind}" for kind in ("first_frame", "last_frame"))


def ark_env(server: FakeArk, poll_s: float = POLL_S) -> dict[str, str]:
    """The worker's environment: the stand-in's URL and key, its poll, and a rate limit high
    enough that creating the clips is not what the makespan measures."""
    return {
        "PIPELINE_KIT_ARK_URL": f"{server.url}/api/v3",
        "ARK_API_KEY": KEY,
        "PIPELINE_KIT_ARK_POLL": str(poll_s),
        "PIPELINE_KIT_ARK_RATE": "200",
        "PIPELINE_KIT_ARK_BURST": "20",
    }


def enqueue_videos(db: Database, count: int, outputs: Path) -> list[str]:
    """`count` video tasks, each its own shot, all made from one pair of sketched frames (made
    here, so only the clips are left); returns the video task ids."""
    frames = [
        engine.TaskSpec(
            task_id=task_id,
            kind=task_id.rsplit("/", 1)[1],
            lane="image",
            bookcode=BOOK,
            shot_id=f"{BOOK}-000-0000",
            params={"shot_id": f"{BOOK}-000-0000", "prompt": "a lighthouse at dusk", "seed": 1, **SIZE},
        )
        for task_id in FRAMES
    ]
    videos = [
        engine.TaskSpec(
            task_id=f"{BOOK}-001-{n:04d}/video",
            kind="video",
            lane="video",
            bookcode=BOOK,
            shot_id=f"{BOOK}-001-{n:04d}",
            depends_on=FRAMES,
            params={"video_prompt": f"the light turns, shot {n}", "duration_s": 2, "seed": n, **SIZE},
        )
        for n in range(1, count + 1)
    ]
    with db.engine.begin() as conn:
        engine.enqueue(conn, [*frames, *videos])
    made = run_worker(
        db,
        WorkerConfig(
            worker_id="frames",
            lanes=("image",),
            backend="sketch",
            until_empty=True,
            progress=False,
            outputs=outputs,
            spool=outputs.parent / "spool",
            poll_s=0.05,
        ),
    )
    assert made.counts == {"completed": 2}
    return [v.task_id for v in videos]


def work(db_url: str, worker_id: str, inflight: int, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """`pipeline-kit work` on the video lane with Ark, a 2 s lease renewed every 0.5 s."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipeline_kit",
            "--db",
            db_url,
            "work",
            "--worker-id",
            worker_id,
            "--lanes",
            "video",
            "--backend",
            "ark",
            "--inflight",
            str(inflight),
            "--until-empty",
            "--quiet",
            "--lease",
            "2",
            "--heartbeat",
            "0.5",
            "--watchdog",
            "1",
        ],
        cwd=cwd,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")}, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def outcomes(db: Database, task_ids: list[str]) -> dict[str, tuple[tuple[str, str | None], ...]]:
    """Each task's attempts in order, as (worker, outcome)."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(attempts.c.task_id, attempts.c.worker_id, attempts.c.outcome)
            .where(attempts.c.task_id.in_(task_ids))
            .order_by(attempts.c.task_id, attempts.c.attempt_no)
        ).all()
    found: dict[str, list[tuple[str, str | None]]] = {t: [] for t in task_ids}
    for row in rows:
        found[row.task_id].append((row.worker_id, row.outcome))
    return {task_id: tuple(history) for task_id, history in found.items()}


def results(db: Database, task_ids: list[str]) -> dict[str, tuple[str, dict]]:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(tasks.c.task_id, tasks.c.status, tasks.c.result).where(tasks.c.task_id.in_(task_ids))
        ).all()
    return {r.task_id: (r.status, dict(r.result or {})) for r in rows}


def video_creates(server: FakeArk) -> list[str]:
    return [b["id"] for b in server.billing if b["kind"] == "video"]


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    db = create(db_url)
    try:
        yield db
    finally:
        db.dispose()


def test_inflight_8_keeps_8_clips_at_the_provider(db_url: str, database: Database, tmp_path: Path) -> None:
    """40 clips of 2 s with `--inflight 8`: the provider holds 8 unfinished jobs at once, never
    more; every lease kept (the lease is 2 s, so a lease not renewed while its job runs would be
    lost to the watchdog), every task completed once, one paid create each."""
    videos = enqueue_videos(database, 40, tmp_path / "data/outputs")
    with FakeArk(api_key=KEY, polls=POLLS) as ark:
        worker = work(db_url, "W8", 8, tmp_path, ark_env(ark))
        out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    assert "40 completed" in out, out
    assert ark.most_unfinished == 8

    assert set(outcomes(database, videos).values()) == {(("W8", "completed"),)}
    made = results(database, videos)
    assert {status for status, _ in made.values()} == {"completed"}
    creates = video_creates(ark)
    assert len(creates) == 40 and sorted(creates) == sorted(r["task_id"] for _, r in made.values())
    assert ark.leaks == []


def test_killed_with_jobs_in_flight_the_takeover_pays_for_none_again(
    db_url: str, database: Database, tmp_path: Path
) -> None:
    """A worker with `--inflight 4` is SIGKILLed holding four running clips; a second worker
    takes those over by re-polling their remote tasks and makes the other two: six creates in
    the stand-in's log for six tasks, each task completed once, the killed attempts `lost`."""
    videos = enqueue_videos(database, 6, tmp_path / "data/outputs")
    with FakeArk(api_key=KEY, polls=2) as ark:
        ark.hold.set()  # clips stay running until A is gone
        worker_a = work(db_url, "A", 4, tmp_path, ark_env(ark, 0.05))
        try:
            held = (
                sa.select(sa.func.count())
                .select_from(attempts)
                .where(attempts.c.worker_id == "A", attempts.c.remote_job_id.is_not(None))
            )
            first_value(database, held.having(sa.func.count() >= 4), "A hold four remote jobs")
        finally:
            worker_a.kill()
            worker_a.communicate(timeout=30)
        in_flight = video_creates(ark)
        assert len(in_flight) == 4, "A created its four clips and no more"

        ark.hold.clear()
        wait_leases_expired(database)
        worker_b = work(db_url, "B", 4, tmp_path, ark_env(ark, 0.05))
        out, err = worker_b.communicate(timeout=120)
    assert worker_b.returncode == 0, err
    assert "6 completed" in out, out

    history = outcomes(database, videos)
    assert Counter(history.values()) == {(("A", "lost"), ("B", "completed")): 4, (("B", "completed"),): 2}
    made = results(database, videos)
    assert {status for status, _ in made.values()} == {"completed"}
    resumed = sorted(r["task_id"] for _, r in made.values() if r["resumed"])
    assert resumed == sorted(in_flight), "the four clips A started were re-polled, not re-made"
    creates = video_creates(ark)
    assert len(creates) == 6 and len(set(creates)) == 6, "one paid create per task"


def test_local_kinds_stay_one_at_a_time(db: Database, tmp_path: Path) -> None:
    """With `--inflight 4` and the local `sketch` backend, frames are still made one after
    another: each frame is claimed only once the one before it has finished."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                engine.TaskSpec(
                    task_id=f"{BOOK}-002-{n:04d}/first_frame",
                    kind="first_frame",
                    lane="image",
                    bookcode=BOOK,
                    shot_id=f"{BOOK}-002-{n:04d}",
                    params={"shot_id": f"{BOOK}-002-{n:04d}", "prompt": "a pier", "seed": n, **SIZE},
                )
                for n in range(1, 7)
            ],
        )
    summary = run_worker(
        db,
        WorkerConfig(
            worker_id="L",
            lanes=("image",),
            backend="sketch",
            inflight=4,
            until_empty=True,
            progress=False,
            outputs=tmp_path / "out",
            spool=tmp_path / "spool",
            poll_s=0.05,
        ),
    )
    assert summary.counts == {"completed": 6}
    with db.engine.connect() as conn:
        spans = [
            tuple(datetime.fromisoformat(t) if isinstance(t, str) else t for t in row)
            for row in conn.execute(
                sa.select(attempts.c.claimed_at, attempts.c.finished_at).order_by(attempts.c.claimed_at)
            )
        ]
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), spans


@pytest.mark.parametrize("value", ["0", "65", "-1", "many"])
@pytest.mark.db
def test_a_bad_inflight_is_one_line_and_exit_2(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`work --inflight` takes a whole number from 1 to 64; anything else is refused before the
    worker connects, in one line on stderr."""
    with pytest.raises(SystemExit) as stopped:
        main(["--db", "sqlite:////nonexistent/never.db", "work", "--inflight", value])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--inflight" in err
    with pytest.raises(SystemExit) as stopped:  # the night launcher passes it to the notebook
        launcher.main(["--worker-id", "PC-1", "--inflight", value])
    assert stopped.value.code == 2 and "--inflight" in capsys.readouterr().err


def test_inflight_reaches_the_worker_from_the_cli_and_the_notebook() -> None:
    """The flag and the notebook parameter both set the worker's inflight; the notebook refuses
    what papermill would pass unchecked (0, a string, a bool)."""
    args = build_parser().parse_args(["work", "--inflight", "8", "--backend", "sketch"])
    assert worker_config(args).inflight == 8
    assert worker_config(build_parser().parse_args(["work", "--backend", "sketch"])).inflight == 1
    good = dict(
        worker_id="PC-1", lanes="video", backend="sketch", batch=1, until_empty=True, max_tasks=0, max_minutes=0.0
    )
    assert notebook_config(**good, inflight=8).inflight == 8
    assert notebook_config(**good).inflight == 1
    for bad in (0, 65, "4", True, 2.5):
        with pytest.raises(BadInput, match="inflight"):
            notebook_config(**good, inflight=bad)


def test_a_lease_revoked_in_flight_is_fenced_alone(db_url: str, database: Database, tmp_path: Path) -> None:
    """A worker with `--inflight 4` holds four running clips; an operator resets one of them. Only
    that lease is fenced: its late result is dropped (the summary counts it `fenced`), the other
    three complete under their own leases, and the reset task is made again under a new one."""
    videos = enqueue_videos(database, 4, tmp_path / "data/outputs")
    with FakeArk(api_key=KEY, polls=2) as ark:
        ark.hold.set()
        worker = work(db_url, "A", 4, tmp_path, ark_env(ark, 0.05))
        held = sa.select(sa.func.count()).select_from(attempts).where(attempts.c.remote_job_id.is_not(None))
        first_value(database, held.having(sa.func.count() >= 4), "A hold four remote jobs")
        with database.engine.begin() as conn:
            engine.reset_tasks(conn, [videos[0]], reason="redo this clip")
        ark.hold.clear()
        out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    assert "4 completed" in out and "1 fenced" in out, out
    history = outcomes(database, videos)
    assert history[videos[0]] == (("A", "canceled"), ("A", "completed"))
    assert all(history[v] == (("A", "completed"),) for v in videos[1:])
    assert {status for status, _ in results(database, videos).values()} == {"completed"}
