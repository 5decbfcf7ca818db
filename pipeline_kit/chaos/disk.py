"""A small output disk that a chaos run can fill up: a tmpfs over the work folder's outputs.

`fill(seconds)` takes every free byte with a filler file and gives it back later, so workers hit
ENOSPC while writing outputs (a full disk must cost retries, never a lost or corrupt output).
Mounting needs root on Linux; where it fails the run goes on without this fault.
"""

from __future__ import annotations

import errno
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

BLOCK = b"\0" * (1 << 16)


@dataclass(frozen=True)
class SmallDisk:
    mountpoint: Path

    @classmethod
    def mount(cls, mountpoint: Path, size_mb: int) -> SmallDisk | None:
        """Mount a tmpfs of `size_mb` MiB there; None when this machine does not allow it."""
        mountpoint.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mountpoint)], capture_output=True, text=True
        )
        return cls(mountpoint) if done.returncode == 0 else None

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True, text=True)

    def fill(self, seconds: float) -> None:
        """Use up all free space now; free it again after `seconds` (in a timer)."""
        filler = self.mountpoint / ".chaos-filler"
        try:
            with filler.open("wb") as fh:
                while True:
                    fh.write(BLOCK)
                    fh.flush()
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
        threading.Timer(seconds, lambda: filler.unlink(missing_ok=True)).start()
