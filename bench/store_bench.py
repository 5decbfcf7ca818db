"""Store throughput: frames and 20 MB clips written and read per second, per kind of store.

    python bench/store_bench.py [--quick] [--runs R] [--frames F] [--clips C] [--kinds folder,postgresql,mariadb,s3]

Kinds: the folder store (this PC's data folder), the database store on PostgreSQL and on
MariaDB (a scratch database each run, dropped afterwards), and the S3 store on a SeaweedFS
server started on loopback for the run (tests/servers/seaweed.py). Payloads: F distinct PNG
frames of about 0.5 MB (a gradient with noise, as a drawn frame compresses) and C distinct
20 MB clips (random bytes: video does not compress). Every file is distinct, so no write is
saved by deduplication.

- write: `Store.publish` of each file, as a worker publishes its output (the folder store
  moves the file in: a rename, since it was made on the same disk; blob stores checksum it,
  ask whether the blob is there and upload it);
- read: `Store.fetch` through a cold cache (a PC that never saw the file: blob stores download
  and verify it) and reading its bytes.
Per run the kinds take turns (folder, PostgreSQL, MariaDB, S3, then the next run) so a noisy
machine slows all alike; each figure is the median over the runs, and the ratio to the folder
store is taken from the same runs. Results: reports/bench/store.json and reports/bench/store.md.

    python bench/store_bench.py --completion [--runs R] [--clips C]

A worker's clip in the database store is kept by its completion's transaction (db/blobs.py),
which holds the task's row and its dependents' rows (on SQLite, the whole file) while the chunks
go in. Per database (SQLite, PostgreSQL, MariaDB), C tasks, each with a dependent, complete with
a 20 MB clip two ways: `within`, the clip kept by the completion (what a worker does), and
`apart`, the clip stored first in a transaction of its own and the completion after it (the
way before): the milliseconds the completion's transaction holds its rows, and the whole
publish and completion, medians over the clips and runs. Results: reports/bench/store_completion.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline_kit.bench.config import build_config  # noqa: E402
from pipeline_kit.bench.scratch import scratch_url  # noqa: E402
from pipeline_kit.db import create  # noqa: E402
from pipeline_kit.db.blobs import Upload  # noqa: E402
from pipeline_kit.db.migrate import init  # noqa: E402
from pipeline_kit.store import Store  # noqa: E402
from pipeline_kit.store.database import DatabaseStore  # noqa: E402
from pipeline_kit.store.folder import FolderStore  # noqa: E402
from pipeline_kit.store.s3 import ENDPOINT_VAR, S3Store  # noqa: E402
from tests.servers.seaweed import seaweed_s3  # noqa: E402

KINDS = ("folder", "postgresql", "mariadb", "s3")
CLIP_BYTES = 20 << 20
FRAME_SIZE = (768, 432)
BUCKET = "bench"
METRICS = ("write_per_s", "write_mb_s", "read_per_s", "read_mb_s")
MakeStore = Callable[[Path], Store]  # a store of this kind reading through the given cache


def make_payloads(folder: Path, frames: int, clips: int) -> dict[str, list[Path]]:
    """Distinct frames (PNG, about 0.5 MB) and clips (20 MB) under `folder`."""
    rng = np.random.default_rng(0)
    w, h = FRAME_SIZE
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // w, y * 255 // h, (x + y) * 255 // (w + h)], -1)
    out: dict[str, list[Path]] = {"frame": [], "clip": []}
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(frames):
        path = folder / f"frame-{i:03d}.png"
        Image.fromarray((base + rng.integers(0, 8, (h, w, 3))).clip(0, 255).astype("uint8")).save(path)
        out["frame"].append(path)
    for i in range(clips):
        path = folder / f"clip-{i:03d}.mp4"
        path.write_bytes(rng.bytes(CLIP_BYTES))
        out["clip"].append(path)
    return out


@contextmanager
def store_of(kind: str, tmp: Path) -> Iterator[MakeStore]:
    """A fresh, empty store of that kind for one run; a maker of handles on it, one per cache."""
    if kind == "folder":
        outputs = tmp / "data" / "outputs"
        yield lambda cache: FolderStore(outputs, url=str(outputs), must_exist=False)
        return
    if kind == "s3":
        url = f"s3://{BUCKET}/run-{uuid.uuid4().hex[:8]}"
        yield lambda cache: S3Store(url, cache)
        return
    with scratch_url(kind, build_config()) as url:
        db = create(url)
        try:
            init(db)
            yield lambda cache: DatabaseStore(db, cache)
        finally:
            db.dispose()


def one_run(kind: str, payloads: dict[str, list[Path]], tmp: Path) -> dict[str, dict[str, float]]:
    """Write then read every payload through a fresh store of `kind`: rates per payload."""
    rates: dict[str, dict[str, float]] = {}
    with store_of(kind, tmp) as make:
        for payload, files in payloads.items():
            staged = tmp / "staged" / payload  # a copy per run: the folder store moves files in
            staged.mkdir(parents=True)
            copies = [Path(shutil.copyfile(f, staged / f.name)) for f in files]
            total_mb = sum(f.stat().st_size for f in files) / 1e6
            writer = make(tmp / "cache-writer")
            t0 = time.perf_counter()
            stored = [writer.publish(f"outputs/bench/{payload}/{f.name}", f, {}) for f in copies]
            write_s = time.perf_counter() - t0
            reader = make(tmp / f"cache-reader-{payload}")  # a PC that never saw the files
            t0 = time.perf_counter()
            for s in stored:
                reader.fetch(s.output_path, {"sha256": s.sha256}).read_bytes()
            read_s = time.perf_counter() - t0
            rates[payload] = {
                "write_per_s": len(files) / write_s,
                "write_mb_s": total_mb / write_s,
                "read_per_s": len(files) / read_s,
                "read_mb_s": total_mb / read_s,
            }
    return rates


def completion_run(kind: str, clips: dict[str, list[Path]], tmp: Path) -> dict[str, dict[str, list[float]]]:
    """Complete one task per clip, each with a dependent, with the clip kept `within` the
    completion's transaction or stored `apart` before it (each way its own clips, so none is
    found stored): each completion's and each whole publish-and-complete's milliseconds."""
    from pipeline_kit import engine

    out: dict[str, dict[str, list[float]]] = {}
    with scratch_url(kind, build_config()) as url:
        db = create(url)
        try:
            init(db)
            engine.seed_default_lanes(db)
            store = DatabaseStore(db, tmp / "cache")
            for way in ("within", "apart"):
                held, whole = [], []
                for i, clip in enumerate(clips[way]):
                    task = f"{way}-{i}"
                    with db.engine.begin() as conn:
                        engine.enqueue(
                            conn,
                            [
                                engine.TaskSpec(task_id=task, kind="noop", lane="default"),
                                engine.TaskSpec(
                                    task_id=f"{task}-next", kind="noop", lane="assembly", depends_on=(task,)
                                ),
                            ],
                        )
                    (lease,) = engine.claim(db, "bench", ["default"], limit=1)
                    t0 = time.perf_counter()
                    stored = store.publish(
                        f"outputs/{task}.mp4", clip, {}, lease=(task, lease.token) if way == "within" else None
                    )
                    uploads = [
                        Upload(u.sha256, u.size, str(clip)) for u in stored.uploads
                    ]  # the clip is where it was made
                    t1 = time.perf_counter()
                    result = {"sha256": stored.sha256, "bytes": stored.size}
                    completion = engine.Completion(task_id=task, token=lease.token, result=result, uploads=uploads)
                    assert engine.complete(db, completion) is engine.Ack.ACCEPTED
                    t2 = time.perf_counter()
                    held.append((t2 - t1) * 1000)
                    whole.append((t2 - t0) * 1000)
                out[way] = {"held_ms": held, "whole_ms": whole}
        finally:
            db.dispose()
    return out


def completion_bench(runs: int, clips: int) -> int:
    """`--completion`: how long a completion holds its rows with a 20 MB clip kept within it."""
    kinds = ("sqlite", "postgresql", "mariadb")
    with tempfile.TemporaryDirectory(prefix="pk_store_bench_") as scratch:
        tmp = Path(scratch)
        files = make_payloads(tmp / "payloads", 0, 2 * clips * runs)["clip"]
        measured: dict[str, dict[str, dict[str, list[float]]]] = {k: {} for k in kinds}
        for n in range(runs):
            for kind in kinds:  # the kinds take turns, each run on its own distinct clips
                mine = files[2 * n * clips : 2 * (n + 1) * clips]
                got = completion_run(kind, {"within": mine[:clips], "apart": mine[clips:]}, tmp / f"run-{n}-{kind}")
                for way, figures in got.items():
                    for name, values in figures.items():
                        measured[kind].setdefault(way, {}).setdefault(name, []).extend(values)
                medians = {way: {k: statistics.median(v) for k, v in f.items()} for way, f in got.items()}
                said = "; ".join(
                    f"{w} held {m['held_ms']:.0f} ms, whole {m['whole_ms']:.0f} ms" for w, m in medians.items()
                )
                print(f"run {n + 1}/{runs} {kind}: {said}", flush=True)
    lines = [
        f"A completion with a 20 MB clip, medians of {clips * runs} clips, {datetime.now():%Y-%m-%d %H:%M}, "
        f"{platform.node()} ({os.cpu_count()} cores).",
        "",
        "| database | completion holds its rows, clip within | whole, within | completion, clip apart | whole, apart |",
        "|---|---|---|---|---|",
    ]
    for kind in kinds:
        m = {way: {k: statistics.median(v) for k, v in f.items()} for way, f in measured[kind].items()}
        lines.append(
            f"| {kind} | {m['within']['held_ms']:,.0f} ms | {m['within']['whole_ms']:,.0f} ms | "
            f"{m['apart']['held_ms']:,.0f} ms | {m['apart']['whole_ms']:,.0f} ms |"
        )
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "store_completion.json").write_text(
        json.dumps({"at": datetime.now().isoformat(timespec="seconds"), "runs": measured}, indent=2)
    )
    print("\n".join(lines))
    return 0


def summarise(
    runs: list[dict[str, dict[str, dict[str, float]]]], payloads: dict[str, list[Path]], kinds: list[str]
) -> list[dict[str, object]]:
    """One row per kind and payload: medians over the runs, and the ratio to the folder store."""
    rows: list[dict[str, object]] = []
    for kind in kinds:
        for payload, files in payloads.items():
            row: dict[str, object] = {
                "kind": kind,
                "payload": payload,
                "files": len(files),
                "mb_each": round(sum(f.stat().st_size for f in files) / len(files) / 1e6, 2),
                "runs": len(runs),
            }
            for metric in METRICS:
                row[metric] = statistics.median(r[kind][payload][metric] for r in runs)
                if "folder" in kinds:
                    folder = statistics.median(r["folder"][payload][metric] for r in runs)
                    row[f"{metric}_vs_folder"] = row[metric] / folder  # type: ignore[operator]
            rows.append(row)
    return rows


def markdown(rows: list[dict[str, object]], runs: int) -> str:
    lines = [
        f"Store throughput, medians of {runs} runs (kinds taking turns), {datetime.now():%Y-%m-%d}, "
        f"{platform.node()} ({os.cpu_count()} cores).",
        "",
        "| store | payload | written /s | write MB/s | read /s | read MB/s | write vs folder | read vs folder |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        vs = [f"{r[k]:.2f}x" if k in r else "–" for k in ("write_mb_s_vs_folder", "read_mb_s_vs_folder")]
        lines.append(
            f"| {r['kind']} | {r['files']} x {r['payload']} ({r['mb_each']} MB) | {r['write_per_s']:,.1f} | "
            f"{r['write_mb_s']:,.1f} | {r['read_per_s']:,.1f} | {r['read_mb_s']:,.1f} | {vs[0]} | {vs[1]} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 runs, 8 frames, 2 clips")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--clips", type=int, default=5)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--completion", action="store_true", help="a 20 MB clip kept within its completion, or apart")
    args = ap.parse_args()
    if args.completion:
        return completion_bench(args.runs, args.clips)
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or set(kinds) - set(KINDS) or min(args.runs, args.frames, args.clips) < 1:
        print(f"--kinds takes {','.join(KINDS)}; --runs, --frames and --clips at least 1", file=sys.stderr)
        return 2
    runs, frames, clips = (2, 8, 2) if args.quick else (args.runs, args.frames, args.clips)
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pk_store_bench_")))
        if "s3" in kinds:
            endpoint = stack.enter_context(seaweed_s3(tmp / "seaweed", BUCKET))
            os.environ.update(
                {
                    ENDPOINT_VAR: endpoint,
                    "AWS_ACCESS_KEY_ID": "bench",
                    "AWS_SECRET_ACCESS_KEY": "bench",
                    "AWS_DEFAULT_REGION": "us-east-1",
                }
            )
        payloads = make_payloads(tmp / "payloads", frames, clips)
        measured = []
        for n in range(runs):
            this_run = {}
            for kind in kinds:
                run_dir = tmp / f"run-{n}-{kind}"
                this_run[kind] = one_run(kind, payloads, run_dir)
                shutil.rmtree(run_dir)
                print(
                    f"run {n + 1}/{runs} {kind}: "
                    + "; ".join(
                        f"{p} write {r['write_mb_s']:.0f} MB/s read {r['read_mb_s']:.0f} MB/s"
                        for p, r in this_run[kind].items()
                    ),
                    flush=True,
                )
            measured.append(this_run)
        rows = summarise(measured, payloads, kinds)
    out = ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "store.json").write_text(
        json.dumps(
            {
                "at": datetime.now().isoformat(timespec="seconds"),
                "machine": platform.node(),
                "cores": os.cpu_count(),
                "config": {"runs": runs, "frames": frames, "clips": clips, "kinds": kinds},
                "results": rows,
                "runs": measured,
            },
            indent=2,
        )
    )
    text = markdown(rows, runs)
    (out / "store.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
