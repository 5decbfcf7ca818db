"""What the database and S3 stores share: content-addressed blobs, names only in task rows.

A blob is stored once per sha256 and never replaced, so a fenced worker uploading late changes
nothing anyone reads: the output of a task is the blob its completed row names (`result.sha256`,
side files in `result.sides`), and `output_path` is the PC-independent name itself. Reads go
through this PC's cache; a file this PC published moves into the cache once its completion was
sent.
"""

from __future__ import annotations

from collections.abc import Mapping
import tempfile
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pipeline_kit.errors import GenerationError
from pipeline_kit.store import Holder, Kept, Stored, side_name
from pipeline_kit.store.cache import Cache, file_digest

if TYPE_CHECKING:
    from pipeline_kit.store.gc import Listed


class BlobStore:
    """A store of blobs by checksum; a kind says how to test, put and get one blob."""

    url = ""
    root = None  # its files are not in a folder of this PC
    verify_by_default = False  # whether `store gc` checks every blob unasked (cheap to read back)

    def __init__(self, cache: Path) -> None:
        self.cache = Cache(cache)

    # -- what a kind of blob store provides ----------------------------------------------------
    def has(self, sha256: str, lease: Holder = None) -> bool:
        """Whether a blob is stored under `sha256` (whole, not yet checked against it); `lease`:
        the task a worker publishes it for."""
        raise NotImplementedError

    def keep(self, sha256: str, lease: Holder = None) -> bool:
        """A stored blob a publish reuses, made young again, so a sweep that listed it as an old
        orphan leaves it; False if it went meanwhile (then it is stored again)."""
        raise NotImplementedError

    def drop_damaged(self, sha256: str) -> None:
        """Take away a stored blob that does not match its checksum, so it can be stored again."""
        raise NotImplementedError

    def put(self, sha256: str, size: int, source: Path, lease: Holder = None) -> None:
        """Store `source` as blob `sha256` (a concurrent put of the same blob is fine)."""
        raise NotImplementedError

    def get(self, sha256: str, target: Path) -> None:
        """Write blob `sha256` to `target`; StoreUnavailable if it is not (wholly) there."""
        raise NotImplementedError

    def listed(self) -> list[Listed]:
        """Every blob stored, with its age by the store's own clock (for `store gc`)."""
        raise NotImplementedError

    def remove(self, blob: Listed) -> bool:
        """Delete a listed blob unless it was stored again since; whether it was deleted."""
        raise NotImplementedError

    def intact(self, sha256: str) -> bool:
        """Whether the stored blob `sha256` is there and hashes to it (a row or object planted
        ahead of a deterministic output, or damaged, is not trusted)."""
        with tempfile.TemporaryDirectory(prefix="pk-verify-") as scratch:
            target = Path(scratch) / "blob"
            try:
                self.get(sha256, target)
            except GenerationError:
                return False
            return file_digest(target)[1] == sha256

    # -- the Store interface -------------------------------------------------------------------
    def publish(
        self, name: str, main: Path, sides: Mapping[str, Path], *, lease: Holder = None, first: bool = False
    ) -> Stored:
        side_shas = {suffix: self._upload(path, lease)[1] for suffix, path in sorted(sides.items())}
        size, sha = self._upload(main, lease)
        return Stored(output_path=name, size=size, sha256=sha, sides=side_shas)

    def settle(self, stored: Stored, main: Path, sides: Mapping[str, Path]) -> None:
        target = self._local(stored.output_path, stored.sha256, stored.sides)
        for suffix, path in sides.items():
            self.cache.adopt(side_name(target, suffix), path)
        self.cache.adopt(target, main)

    def conclude(self, stored: Stored, *, accepted: bool, keep: Kept = None) -> None:
        """Nothing to do: a blob is never replaced, and only a completion's record serves it."""

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        sha = result.get("sha256")
        if not isinstance(sha, str):
            raise GenerationError(
                f"{output_path} has no checksum recorded: not in this store", error_kind="missing_input", retryable=True
            )
        sides = dict(result.get("sides") or {})
        target = self._local(output_path, sha, sides)
        for suffix, side_sha in sides.items():
            self.cache.fill(side_name(target, suffix), side_sha, partial(self.get, side_sha))
        return self.cache.fill(target, sha, partial(self.get, sha))

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        sides = dict(result.get("sides") or {})
        sha = result.get("sha256")
        if suffix not in sides or not isinstance(sha, str):
            return None
        target = side_name(self._local(output_path, sha, sides), suffix)
        return self.cache.fill(target, sides[suffix], partial(self.get, sides[suffix]))

    def _local(self, name: str, sha: str, sides: Mapping[str, str]) -> Path:
        return self.cache.folder(sha, sides) / PurePosixPath(name).name

    def _upload(self, path: Path, lease: Holder) -> tuple[int, str]:
        size, sha = file_digest(path)
        if self.has(sha, lease):  # stored once: the same frame drawn twice is one blob, if it is that blob
            if not self.intact(sha):
                self.drop_damaged(sha)
            elif self.keep(sha, lease):
                return size, sha
        self.put(sha, size, path, lease)
        return size, sha
