"""Someone outside our lock writing a file we replace: the watched writes of :mod:`mnemon_ls.fsio` look at what they
displaced only once nobody has it open for writing any more (DESIGN.md invariant 5: no data is ever lost).

An editor that saves in place truncates the file, then writes through the descriptor it holds, perhaps after our
``renameat2(RENAME_EXCHANGE)`` swapped our version in: read at once, the displaced file still holds the cut bytes
we read, and the save would go into a file we remove. A read lease (``F_SETLEASE``/``F_RDLCK``) is granted only
while nobody has the file open for writing, so it tells exactly when the bytes are final (Linux; elsewhere an empty
file just written is waited for). A leaf of the standard library and :mod:`mnemon_ls.fsread`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from pathlib import Path
from typing import Callable

from .fsread import O_NOFOLLOW


#: Longest seconds a watched write waits for someone still writing the file it displaced (an editor saving in
#: place: it truncated the file and has not written or closed it yet) before keeping that file as it is.
DISPLACED_WAIT_SECONDS = 1.0
#: Seconds between two looks at a displaced file someone still writes.
DISPLACED_POLL_SECONDS = 0.005
#: Where no lease can tell whether a displaced file is still open for writing: seconds an *empty* one must have
#: been left alone (its modification time) before it is taken as final (a file with bytes is taken at once: waiting
#: on every write just after another would slow each commit, and the exact answer is the lease's).
DISPLACED_SETTLE_SECONDS = 0.15
_F_SETLEASE = 1024  # fcntl.F_SETLEASE on Linux (absent from the module elsewhere)
_F_SETSIG = 10  # fcntl.F_SETSIG on Linux


class Displaced(bytes):
    """The bytes a watched write displaced (:func:`write_files_atomically`), to be saved by the caller.

    ``held``: ``None`` when the bytes are final (nobody had the displaced file open for writing any more); else
    the path of the displaced file itself, left in place because someone still wrote it when the write returned
    (an editor between its truncation and its close, longer than :data:`DISPLACED_WAIT_SECONDS`): what they write
    later lands in it, so the caller keeps *that file* (:func:`keep_displaced`), not a copy of these bytes."""

    held: str | None = None


def _writers_gone(fd: int) -> bool | None:
    """Whether nobody has the file of ``fd`` (opened read-only) open for writing: a read lease
    (``F_SETLEASE``/``F_RDLCK``) is granted only then, and is given back at once. ``None`` where no lease can
    be taken (not Linux, leases disabled, another owner, a file system without them).

    A lease is broken when someone opens the file for writing while it is held (the instant between the two
    calls); the break is told with ``SIGURG`` (``F_SETSIG``), which is ignored unless handled, not the default
    ``SIGIO``, which would end the process."""
    if not sys.platform.startswith("linux"):
        return None
    import fcntl  # on use: only a watched write that displaced a file needs it
    import signal

    try:
        fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)  # a break of the lease (never expected) signals nothing deadly
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return False if exc.errno == errno.EAGAIN else None
    fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    return True


def _await_writers(fd: int, timeout: float, unknown: Callable[[], bool]) -> bool:
    """Wait until nobody has the file of ``fd`` open for writing (:func:`_writers_gone`; ``unknown()`` decides
    where that cannot be told), polling every :data:`DISPLACED_POLL_SECONDS`, at most ``timeout`` seconds; returns
    whether they were gone in time."""
    deadline = time.monotonic() + timeout
    while True:
        gone = _writers_gone(fd)
        if gone or (gone is None and unknown()):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(DISPLACED_POLL_SECONDS)


def settled_displaced(path: str, fd: int | None = None) -> Displaced | None:
    """The final bytes of the displaced file at ``path`` (or already open as ``fd``, closed here), once nobody
    writes it any more (:func:`_writers_gone`; where that cannot be told, an empty file once it has been left
    alone :data:`DISPLACED_SETTLE_SECONDS`), waiting at most :data:`DISPLACED_WAIT_SECONDS`; past that the bytes of
    the moment, ``held`` naming ``path`` (:class:`Displaced`). ``None`` for a link, a special file or an
    unreadable one: they hold nobody's text."""
    try:
        if fd is None:
            fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        def settled() -> bool:  # where no lease tells: an empty file just written is a save cut mid-way
            info = os.fstat(fd)
            return info.st_size > 0 or time.time() - info.st_mtime >= DISPLACED_SETTLE_SECONDS

        held = not _await_writers(fd, DISPLACED_WAIT_SECONDS, settled)
        chunks, offset = [], 0
        while chunk := os.pread(fd, 1 << 20, offset):
            chunks.append(chunk)
            offset += len(chunk)
        displaced = Displaced(b"".join(chunks))
        displaced.held = path if held else None
        return displaced
    except OSError:
        return None
    finally:
        os.close(fd)


def wait_for_writers(path: Path | str, timeout: float = DISPLACED_WAIT_SECONDS) -> None:
    """Wait until nobody has the regular file ``path`` open for writing (:func:`_writers_gone`), at most
    ``timeout`` seconds; at once when it is missing, not a regular file or where that cannot be told. For a writer
    about to read a file under its lock that someone outside the lock may be saving in place (truncate, then
    write): the read then holds the save, not the cut file. Never raises."""
    try:
        fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        _await_writers(fd, timeout, lambda: True)
    except OSError:
        return
    finally:
        os.close(fd)
