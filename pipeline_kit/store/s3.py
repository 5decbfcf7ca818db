"""The store in S3-compatible object storage (`s3://BUCKET/PREFIX`), through boto3 (extra `s3`).

Blobs are objects PREFIX/blobs/AB/SHA256; an upload appears whole or not at all. The endpoint
comes from PIPELINE_KIT_S3_ENDPOINT (else boto3's own AWS_ENDPOINT_URL), keys and region from
boto3's usual environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION). A
server that does not answer, or answers 5xx, is StoreUnavailable: the worker pauses and retries;
keys it refuses (403) and a missing bucket are BadInput: one line saying what to fix.
`store gc` (store/gc.py) lists PREFIX/blobs/ page by page, ages each object by its LastModified
against the server's own clock (the Date of its answer), and deletes one only if its
LastModified is still the one listed (a publish that found it stored, which refreshes it, or
replaced it since keeps it).
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pipeline_kit.errors import BadInput, GenerationError, StoreUnavailable
from pipeline_kit.store import Holder
from pipeline_kit.store.blobs import BlobStore
from pipeline_kit.store.gc import Listed

ENDPOINT_VAR = "PIPELINE_KIT_S3_ENDPOINT"
# What S3 answers for keys it does not accept: a configuration to fix, not an outage to wait out.
REFUSED = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken")
BLOB_KEY = re.compile(r"([0-9a-f]{2})/([0-9a-f]{64})")  # AB/SHA256 under PREFIX/blobs/, AB its first two


class S3Store(BlobStore):
    """Blobs as objects in one bucket under a prefix."""

    verify_by_default = False  # checking an object means downloading it: `store gc --verify`

    def __init__(self, url: str, cache: Path) -> None:
        super().__init__(cache)
        parsed = urlparse(url)
        self.url, self.bucket, self.prefix = url, parsed.netloc, parsed.path.strip("/")
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3  # type: ignore[import-untyped]
                from botocore.config import Config  # type: ignore[import-untyped]
            except ImportError:
                raise BadInput("an s3:// store needs boto3: pip install 'pipeline_kit[s3]'") from None
            self._client = boto3.session.Session().client(  # keys as the environment has them now
                "s3",
                endpoint_url=os.environ.get(ENDPOINT_VAR) or None,
                config=Config(
                    connect_timeout=5, read_timeout=60, retries={"max_attempts": 2}, s3={"addressing_style": "path"}
                ),
            )
        return self._client

    def check(self) -> None:
        key = "/".join(p for p in (self.prefix, "probe", f"pipeline-kit-{os.getpid()}") if p)
        try:
            _call("writing a probe", self.client.put_object, Bucket=self.bucket, Key=key, Body=b"probe")
            _call("reading the probe back", self.client.get_object, Bucket=self.bucket, Key=key)
            _call("deleting the probe", self.client.delete_object, Bucket=self.bucket, Key=key)
        except StoreUnavailable as exc:
            raise BadInput(f"{self.url}: {exc}") from None

    def key(self, sha256: str) -> str:
        return "/".join(p for p in (self.prefix, "blobs", sha256[:2], sha256) if p)

    def listed(self) -> list[Listed]:
        """Every blob object under PREFIX/blobs/ (keys of another shape are not ours to judge),
        aged since its LastModified by the server's clock."""
        blobs = "/".join(p for p in (self.prefix, "blobs") if p) + "/"
        pages: list[dict[str, Any]] = []
        _call(
            "listing the blobs",
            lambda: pages.extend(
                self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=blobs)
            ),
        )
        found = []
        for page in pages:
            now = server_time(page)
            for obj in page.get("Contents", ()):
                key = BLOB_KEY.fullmatch(obj["Key"][len(blobs) :])
                if key and key[2].startswith(key[1]):
                    age = (now - obj["LastModified"]).total_seconds()
                    found.append(Listed(key[2], obj["Size"], age, obj["LastModified"]))
        return found

    def remove(self, blob: Listed) -> bool:
        head: list[dict[str, Any]] = []
        key = self.key(blob.sha256)
        if not _call(
            f"checking blob {blob.sha256[:12]}",
            lambda: head.append(self.client.head_object(Bucket=self.bucket, Key=key)),
        ):
            return False
        # stored again since it was listed? (a listing may give milliseconds, a HEAD whole seconds)
        if head[0]["LastModified"].replace(microsecond=0) != blob.seen.replace(microsecond=0):
            return False
        return _call(f"deleting blob {blob.sha256[:12]}", self.client.delete_object, Bucket=self.bucket, Key=key)

    def drop_damaged(self, sha256: str) -> None:
        """Nothing to take away: the next put replaces the object."""

    def keep(self, sha256: str, lease: Holder = None) -> bool:
        """Made young by `has` already (a publish always asks it first)."""
        return True

    def has(self, sha256: str, lease: Holder = None) -> bool:
        """Whether the object is there; one that is, is copied onto itself (server-side) so its
        LastModified is now: a gc that listed it as an old orphan leaves it to the publish reusing it."""
        key = self.key(sha256)
        return _call(
            f"checking blob {sha256[:12]}",
            self.client.copy_object,
            Bucket=self.bucket,
            Key=key,
            CopySource={"Bucket": self.bucket, "Key": key},
            MetadataDirective="REPLACE",
        )

    def put(self, sha256: str, size: int, source: Path, lease: Holder = None) -> None:
        _call(f"uploading {source.name}", self.client.upload_file, str(source), self.bucket, self.key(sha256))

    def get(self, sha256: str, target: Path) -> None:
        if not _call(
            f"fetching blob {sha256[:12]}", self.client.download_file, self.bucket, self.key(sha256), str(target)
        ):
            raise GenerationError(
                f"blob {sha256[:12]} is not in {self.url}", error_kind="missing_input", retryable=True
            )


def server_time(answer: dict[str, Any]) -> datetime:
    """The server's clock when it answered (its Date header), so ages do not depend on this PC's."""
    return parsedate_to_datetime(answer["ResponseMetadata"]["HTTPHeaders"]["date"])


def _call(what: str, fn: Any, *args: Any, **kwargs: Any) -> bool:
    """Run one client call: False if the object is not there; no answer or 5xx -> StoreUnavailable
    (the worker pauses and retries); refused keys or no bucket -> BadInput."""
    from boto3.exceptions import S3UploadFailedError  # type: ignore[import-untyped]
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

    try:
        fn(*args, **kwargs)
    except S3UploadFailedError as exc:  # upload_file wraps the ClientError in its message only
        if any(code in str(exc) for code in REFUSED):
            raise BadInput(
                f"S3 store: credentials refused while {what}: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            ) from None
        raise StoreUnavailable(f"S3 store failed while {what}: {exc}") from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if error.get("Code") == "NoSuchBucket":
            raise BadInput(f"S3 bucket of the store does not exist (while {what}): create it first") from None
        if status == 404 or error.get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        if status in (401, 403) or error.get("Code") in REFUSED:
            raise BadInput(
                f"S3 store: credentials refused while {what} ({error.get('Code') or status}): "
                "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            ) from None
        raise StoreUnavailable(
            f"S3 store answered {status or ''} {error.get('Code', '')} while {what}".replace("  ", " ")
        ) from None
    except BotoCoreError as exc:
        raise StoreUnavailable(f"S3 store unreachable while {what}: {exc}") from None
    return True
