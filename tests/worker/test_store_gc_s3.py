"""`store gc` sweeps the store the database uses: in S3 it deletes only old blobs nothing names
(and, with --verify, objects that do not hash to their key), and it says so; a folder store
says it has nothing to sweep; an S3 endpoint that is down is one line, not a traceback."""

from __future__ import annotations

import datetime as dt
import hashlib
import socket
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import store
from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec, enqueue
from pipeline_kit.store import s3 as s3_module
from pipeline_kit.store.s3 import S3Store

GRACE_HOURS = str(1 / 3600)  # one second: the server's clock is pinned half a second after `fresh`


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _put(s3: S3Store, key: str, data: bytes) -> dt.datetime:
    s3.client.put_object(Bucket=s3.bucket, Key=key, Body=data)
    return s3.client.head_object(Bucket=s3.bucket, Key=key)["LastModified"]


def _bucket(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[S3Store, dict[str, str]]:
    """The database's store set to a fresh prefix of the S3 server holding a blob a task row
    names, an unnamed one and one whose bytes are not its checksum (both stored before the
    grace period), an unnamed one stored inside it, and an object of another shape under
    blobs/; the server's clock pinned so the grace period falls between them."""
    url = store.set_url(db, f"s3://films/{tmp_path.name}")
    s3 = S3Store(url, tmp_path / "cache")
    shas = {what: _sha(what.encode()) for what in ("named", "orphan", "damaged", "fresh")}
    with db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
        conn.execute(sa.update(tasks).values(output_path="outputs/t1.png", result={"sha256": shas["named"]}))
    old = max(_put(s3, s3.key(shas[what]), what.encode()) for what in ("named", "orphan"))
    old = max(old, _put(s3, s3.key(shas["damaged"]), b"planted: not what the key says"))
    old = max(old, _put(s3, f"{tmp_path.name}/blobs/zz/notes.txt", b"not a blob"))
    while (fresh := _put(s3, s3.key(shas["fresh"]), b"fresh")) <= old:  # the server's clock moves on
        time.sleep(0.2)
    monkeypatch.setattr(s3_module, "server_time", lambda answer: fresh + dt.timedelta(seconds=0.5))
    return s3, shas


def _keys(s3: S3Store) -> set[str]:
    listed = s3.client.list_objects_v2(Bucket=s3.bucket, Prefix=f"{s3.prefix}/")
    return {obj["Key"].rsplit("/", 1)[1] for obj in listed.get("Contents", ())}


def _gc(db: Database, *flags: str) -> int:
    url = db.engine.url.render_as_string(hide_password=False)
    return main(["--db", url, "store", "gc", "--grace-hours", GRACE_HOURS, *flags])


def test_s3_gc_deletes_only_old_blobs_nothing_names(
    sqlite_db: Database,
    tmp_path: Path,
    s3_store_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --verify (nothing downloaded): `--dry-run` lists the two old unnamed blobs and
    deletes nothing; the real run deletes exactly those two, and keeps the named blob, the blob
    inside the grace period and the object that is not a blob."""
    s3, shas = _bucket(sqlite_db, tmp_path, monkeypatch)
    everything = _keys(s3)
    assert _gc(sqlite_db, "--dry-run") == 0
    dry = capsys.readouterr().out.splitlines()
    assert _keys(s3) == everything  # nothing deleted
    gone = sorted((shas["orphan"], shas["damaged"]))
    size = {shas["orphan"]: len(b"orphan"), shas["damaged"]: len(b"planted: not what the key says")}
    assert dry == [
        *(f"unnamed blob {sha} ({size[sha]} bytes) would be deleted" for sha in gone),
        f"2 unnamed blobs and 0 damaged blobs would be deleted from {s3.url} (dry run: nothing deleted)",
    ]
    assert _gc(sqlite_db) == 0
    assert capsys.readouterr().out.splitlines() == [
        *(f"unnamed blob {sha} ({size[sha]} bytes) deleted" for sha in gone),
        f"2 unnamed blobs and 0 damaged blobs deleted from {s3.url}",
    ]
    assert _keys(s3) == everything - set(gone) == {shas["named"], shas["fresh"], "notes.txt"}


def test_s3_gc_verify_deletes_an_object_that_is_not_its_checksum(
    sqlite_db: Database,
    tmp_path: Path,
    s3_store_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With --verify each old object is downloaded and hashed: the planted one is called damaged
    (not unnamed), the named blob passes and stays, the fresh one is not judged at all."""
    s3, shas = _bucket(sqlite_db, tmp_path, monkeypatch)
    assert _gc(sqlite_db, "--verify", "--dry-run") == 0
    assert f"damaged blob {shas['damaged']} (30 bytes) would be deleted" in capsys.readouterr().out
    assert _gc(sqlite_db, "--verify") == 0
    assert f"1 unnamed blob and 1 damaged blob deleted from {s3.url}" in capsys.readouterr().out
    assert _keys(s3) == {shas["named"], shas["fresh"], "notes.txt"}


def test_gc_of_a_folder_store_says_there_is_nothing_to_sweep(
    sqlite_db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder store keeps outputs by name: gc says so in one line, not '0 blobs deleted'."""
    assert _gc(sqlite_db) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "has nothing to sweep" in out[0] and "deleted" not in out[0]


def test_s3_gc_with_the_endpoint_down_is_one_line(
    sqlite_db: Database,
    s3_store_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An S3 endpoint that does not answer: exit 1 (a runtime failure, as every StoreUnavailable)
    with one line on stderr and no traceback; nothing printed as deleted."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    monkeypatch.setenv("PIPELINE_KIT_S3_ENDPOINT", f"http://127.0.0.1:{port}")
    store.set_url(sqlite_db, "s3://films/down")
    assert _gc(sqlite_db) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1 and "unreachable while listing the blobs" in captured.err


def test_an_old_orphan_a_publish_reuses_is_not_swept_under_it(
    sqlite_db: Database, tmp_path: Path, s3_store_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A publish that finds an old unnamed blob already stored (so uploads nothing) refreshes it:
    a gc that listed it as old just before does not delete it, and the next gc sees it fresh."""
    server_clock = s3_module.server_time
    s3, shas = _bucket(sqlite_db, tmp_path, monkeypatch)
    before = {blob.sha256: blob for blob in s3.listed()}
    assert before[shas["orphan"]].age_s > 1.0
    assert s3.has(shas["orphan"])  # what a publish asks before uploading
    assert not s3.remove(before[shas["orphan"]]) and shas["orphan"] in _keys(s3)
    monkeypatch.setattr(s3_module, "server_time", server_clock)
    assert {blob.sha256: blob for blob in S3Store(s3.url, tmp_path / "c").listed()}[shas["orphan"]].age_s < 3600
