"""Stat signatures: whether files a long-lived process read are exactly as they were, without reading them.

A long-lived host (the MCP server, the language server) answers the same question over and over (a wake, a
branch probe) from files that rarely change. What it derived from them may be kept and given again while
:func:`signature` of exactly the files it read is the same: ``(st_mtime_ns, st_ctime_ns, st_size, st_ino,
st_dev, st_mode)`` of each (``lstat``: a file replaced by a symbolic link differs), ``None`` for a missing one.
Every write changes ``st_ctime_ns`` (which no user call can set back) and an atomic replace changes
``st_ino`` too; a file created in or removed from a directory changes the directory's times.

Racy timestamps: a file system stamps times from a coarse clock (milliseconds), so a file written twice within
one tick with the same size can keep its signature. :func:`signature` therefore answers ``None`` (keep
nothing) while any file it looked at changed less than :data:`RACY_NS` ago; the caller reads as it did
without the memo, and keeps its answer once the files have been quiet that long (git's "racy clean" rule).
Base layer: imports only :mod:`mnemon_ls.fsio`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

#: A file changed less than this long ago (ctime, nanoseconds) is not trusted to keep a signature.
RACY_NS = 1_000_000_000

Signature = tuple[tuple[int, ...] | None, ...]


def signature(paths: Sequence[str | os.PathLike[str]], *, checked_dir: Path | str | None = None) -> Signature | None:
    """The stat signature of ``paths`` (module doc), or ``None`` when it cannot be trusted: a file changed less
    than :data:`RACY_NS` ago, or one could not be looked at for another reason than being missing.

    ``checked_dir``: a directory of a confined storage root (:func:`mnemon_ls.fsio.confine`) checked first as
    every read there is (:func:`mnemon_ls.fsio.check_store_path`: no directory on the way is a symbolic link;
    raises :class:`~mnemon_ls.errors.StorageUnsafe` as a read would). One ``lstat`` per path."""
    if checked_dir is not None:
        from . import fsio

        fsio.check_store_path(os.path.join(os.fspath(checked_dir), "_"), final=False)
    parts: list[tuple[int, ...] | None] = []
    newest = 0
    for path in paths:
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            parts.append(None)
            continue
        except OSError:
            return None
        newest = max(newest, info.st_ctime_ns, info.st_mtime_ns)
        parts.append((info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_dev, info.st_mode))
    if newest > time.time_ns() - RACY_NS:
        return None
    return tuple(parts)
