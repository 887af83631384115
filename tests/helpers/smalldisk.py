"""A real small file system for storage-failure tests: a tmpfs mounted under ``tmp_path``.

``SmallDisk.fill()`` writes a filler file until the kernel answers ``ENOSPC`` (a really full disk, not a
mock); ``free()`` deletes it; ``read_only()`` remounts the tmpfs read-only (``EROFS``). Mounting needs
root (``CAP_SYS_ADMIN``); elsewhere the fixture skips with the reason. The mount is always unmounted at
teardown.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest


class SmallDisk:
    """A mounted tmpfs of ``size`` bytes at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler"

    def fill(self) -> None:
        """Write the filler until ``ENOSPC`` at every chunk size down to one byte."""
        with open(self.filler, "ab", buffering=0) as handle:
            for chunk in (1 << 16, 1 << 12, 1):
                while True:
                    try:
                        handle.write(b"\0" * chunk)
                    except OSError as exc:
                        assert exc.errno == errno.ENOSPC, exc
                        break
        info = os.statvfs(self.path)
        assert info.f_bfree == 0, f"{self.path} still has {info.f_bfree} free blocks"

    def free(self) -> None:
        """Delete the filler (the disk has room again)."""
        self.filler.unlink()

    def read_only(self) -> None:
        """Remount read-only: every write fails with ``EROFS``."""
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True, capture_output=True)


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 2 MiB tmpfs at ``tmp_path/disk`` (see :class:`SmallDisk`); skipped where mounting is not allowed."""
    path = tmp_path / "disk"
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield SmallDisk(path)
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)
