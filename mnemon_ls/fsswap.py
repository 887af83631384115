"""Replace a file and get back what the replacement displaced, when it is not what the caller read.

A writer holding a store's lock reads a managed file (a Document's Markdown), decides what to keep from it,
writes the new version to a temp file and renames it into place. Someone who never takes the lock (a person
saving the file in an editor) can save between that read and the rename; a plain ``os.replace`` then drops the
save without a trace. :func:`replace_watching` closes that window: on Linux the temp file and the target are
swapped atomically (``renameat2(RENAME_EXCHANGE)``), so the bytes displaced are exactly the target's at the
instant of the swap and come back to the caller, who saves them (DESIGN.md invariant 5: a hand edit that a
write would overwrite is saved first). Where the swap is not available (another system, a file system that
refuses it) the target is read again just before ``os.replace``, which leaves only that narrow gap.

Durability is :mod:`mnemon_ls.fsio`'s: temp file in the same directory, fsync, rename, directory fsync.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import sys
from pathlib import Path
from typing import Any

from . import fsio
from .fsread import O_NOFOLLOW, check_store_path, read_bytes_or_none, storage_errors

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Any:
    """libc's ``renameat2`` (glibc 2.28+), or ``None`` where there is none (not Linux, another libc)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _exchange(first: str, second: str) -> bool:
    """Swap the two names atomically; ``False`` when the system or file system cannot (then nothing moved).
    Raises the :class:`OSError` of any other failure (``ENOENT``: one of them is missing)."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), second)


def _read_displaced(path: str) -> bytes | None:
    """The bytes of the displaced file at ``path`` (never through a link: a link or a special file holds no
    text of anyone's, ``None``)."""
    try:
        return read_bytes_or_none(Path(path))
    except OSError:
        return None


@storage_errors
def replace_watching(path: Path, data: bytes, expected: bytes | None, mode: int = fsio.FILE_MODE) -> bytes | None:
    """Durably replace ``path`` with ``data`` (temp file in its directory, fsync, rename, directory fsync) and
    return the bytes the replacement displaced when they differ from ``expected`` (what the caller read under
    its lock; ``None``: it found no file), else ``None``. The caller saves what comes back (module doc). Raises
    :class:`~mnemon_ls.errors.StorageError` naming ``path`` (nothing replaced) and
    :class:`~mnemon_ls.errors.StorageUnsafe` when ``path`` or a directory of it is a symbolic link."""
    check_store_path(path)
    tmp = str(fsio.temp_name(path))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        try:
            swapped = _exchange(tmp, str(path))
        except FileNotFoundError:
            swapped = False  # no file at path (any more): a plain rename creates it
        if swapped:
            displaced = _read_displaced(tmp)  # the name tmp now holds what path held at the swap
        else:
            displaced = _read_displaced(str(path))
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsio.fsync_dir(path.parent)
    return displaced if displaced is not None and displaced != expected else None
