"""The lock markers of :func:`mnemon_ls.fsio.file_lock`: publish one nobody holds, hold it, remove it; and
filelock's path for a marker that is there already (:func:`acquire_contended`).

A marker is published exactly as the filelock subclass below (:func:`_lock_class`) publishes it: the
owner record (filelock's ``<pid>\\n<host>\\n[<start token>\\n]``, :func:`owner_record`) is written to a private
staging file ``<marker>.<pid>.<12 hex>.publish`` (``O_EXCL | O_NOFOLLOW``), which is then ``link()``-ed to the
marker name (``EEXIST`` when anything is there, a symbolic link included: ``link`` never follows its new
name) and unlinked. The marker therefore never appears without its record, and a process killed at any
point leaves either nothing, a staging file (swept by :func:`mnemon_ls.runtime.repair.sweep_orphans` once its
pid is gone) or a complete marker naming a dead owner, which the next writer breaks at once.

:func:`publish` handles the case where the marker does not exist (``None`` otherwise); waiting, breaking a dead
or stale owner's marker and the timeout stay filelock's (:func:`acquire_contended`, what
:func:`mnemon_ls.fsio.file_lock` falls back to). A marker published here is indistinguishable on disk from
one filelock published, so a filelock waiter in another process (or another thread of this one) waits for it
and breaks it only when this process is gone, and the TypeScript plugin's ``O_EXCL`` create fails on it.

Release (:func:`release`) removes the marker only while it is still the file this process published (same
device and inode as the descriptor kept open until that comparison, which keeps the inode number from being
reused), as filelock does: a marker another process put there after breaking ours (the 30 s age rule) is left
alone.

Holds are per thread and reentrant (:func:`held`), like filelock's ``thread_local`` contexts; a hold made
before a ``fork`` is not the child's (the pid is compared), and the child never removes the parent's marker.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
from dataclasses import dataclass
from typing import Any

from .errors import StoreBusy, storage_error

#: ``open()`` flags of the staging file.
_STAGING_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_RECORD: list[tuple[int, bytes]] = []  # [(pid, record)]: built once per process (filelock reads /proc for it)
_LOCAL = threading.local()


@dataclass(slots=True)
class Hold:
    """One thread's hold of one marker: ``fd`` (the marker's descriptor, ``-1`` when ``fallback`` holds it),
    ``identity`` (``(st_dev, st_ino)`` of the marker), the ``pid`` that took it, the reentry ``count``, and
    ``fallback`` (the filelock object holding it when the marker was contended, else ``None``)."""

    key: str
    fd: int
    identity: tuple[int, int]
    pid: int
    count: int = 1
    fallback: Any = None


def owner_record() -> bytes:
    """This process's owner record in filelock's format: ``<pid>\\n<host>\\n[<start token>\\n]`` (built once
    per process from filelock's own functions, and again after a ``fork``)."""
    pid = os.getpid()
    if not _RECORD or _RECORD[0][0] != pid:
        from filelock._identity import host_name, process_start_token

        token = process_start_token(pid)
        text = f"{pid}\n{host_name()}\n" + (f"{token}\n" if token is not None else "")
        _RECORD[:] = [(pid, text.encode())]
    return _RECORD[0][1]


def _write_lock_info(fd: int) -> None:
    """Write the owner record at offset 0 of ``fd`` (the staging file; named as filelock's hook is, so a
    test's breakpoint on ``_write_lock_info`` stops both paths between creating the file and filling it)."""
    data, offset = owner_record(), 0
    while offset < len(data):
        offset += os.pwrite(fd, data[offset:], offset)


def _holds() -> dict[str, Hold]:
    holds = getattr(_LOCAL, "holds", None)
    if holds is None:
        holds = _LOCAL.holds = {}
    return holds


def held(key: str) -> Hold | None:
    """This thread's hold of the marker ``key`` (its path as a string) in this process, else ``None``."""
    hold = _holds().get(key)
    if hold is not None and hold.pid != os.getpid():  # taken before a fork: the parent's, not ours
        del _holds()[key]
        return None
    return hold


def _publish_fd(key: str) -> int:
    """Create the marker ``key`` whole, holding this process's record: written to a private staging file
    (``<key>.<pid>.<random>.publish``) and hard-linked to ``key``, so no reader ever sees it empty or half
    written. Returns the open descriptor of the marker's inode. Raises :class:`FileExistsError` when a file (or
    link) is already at ``key``, other :class:`OSError` as they come; the staging name is gone either way."""
    staging = f"{key}.{os.getpid()}.{random.getrandbits(48):012x}.publish"
    fd = os.open(staging, _STAGING_FLAGS, 0o600)
    try:
        _write_lock_info(fd)
        os.link(staging, key)
    except BaseException:
        os.close(fd)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
    return fd


def publish(key: str) -> Hold | None:
    """Create the marker ``key`` with this process's record and hold it (see the module doc); ``None`` when a
    file (or link) is already at that name. Raises :class:`OSError` (``ENOENT`` when the directory is missing,
    ``ENOSPC``, ``EROFS``...) with nothing left behind. Always ``None`` on Windows (filelock's own path there)."""
    if os.name == "nt":
        return None
    try:
        fd = _publish_fd(key)
    except FileExistsError:
        return None
    try:
        info = os.fstat(fd)
    except BaseException:
        _remove(key, fd, None)
        raise
    hold = Hold(key, fd, (info.st_dev, info.st_ino), os.getpid())
    _holds()[key] = hold
    return hold


def adopt(key: str, fallback: Any) -> Hold:
    """Record that ``fallback`` (a filelock object that has just acquired the marker ``key``) holds it for this
    thread, so a nested :func:`held` finds it."""
    hold = Hold(key, -1, (0, 0), os.getpid(), fallback=fallback)
    _holds()[key] = hold
    return hold


def release(hold: Hold) -> None:
    """Leave one level of ``hold``; at the last, remove the marker if it is still ours (module doc) and close
    its descriptor, or release the filelock object that holds it. Never raises for a marker already gone."""
    hold.count -= 1
    if hold.count:
        return
    holds = _holds()
    if holds.get(hold.key) is hold:
        del holds[hold.key]
    if hold.pid != os.getpid():  # a forked child leaving a block its parent entered: not its marker
        if hold.fd >= 0:
            os.close(hold.fd)
        return
    if hold.fallback is not None:
        hold.fallback.release()
        return
    _remove(hold.key, hold.fd, hold.identity)


def _remove(key: str, fd: int, identity: tuple[int, int] | None) -> None:
    """Close ``fd`` and unlink the marker ``key`` if it is the file ``fd`` is (``identity``: its device and
    inode, else read from ``fd``). The name is compared while ``fd`` still pins the inode (its number cannot
    name another file then), and closed before the unlink, so the last link goes with no open descriptor
    (ext4 then frees the inode at once instead of keeping it on its orphan list until the close)."""
    try:
        if identity is None:
            info = os.fstat(fd)
            identity = (info.st_dev, info.st_ino)
        current = os.lstat(key)
        ours = (current.st_dev, current.st_ino) == identity
    except (FileNotFoundError, NotADirectoryError):
        ours = False
    finally:
        os.close(fd)
    if ours:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(key)


# ---------------------------------------------------------------- the contended path: filelock's


def acquire_contended(path: Any, timeout: float, poll_seconds: float, stale_seconds: float, mode: int) -> Any:
    """filelock's acquisition of the marker ``path`` that was there already: wait (polling every
    ``poll_seconds``), break a dead owner's marker at once and any marker older than ``stale_seconds``, give up
    after ``timeout`` seconds; returns the lock object now holding it (:func:`release` releases it through
    :func:`adopt`'s hold). Raises :class:`~mnemon_ls.errors.StoreBusy` (naming the marker) on timeout and
    :class:`~mnemon_ls.errors.StorageError` for an OS error creating the marker."""
    from filelock import Timeout  # lazy: ~14 ms of import

    key = (str(path), timeout)
    lock = _LOCKS.get(key)
    if lock is None:  # one lock object per marker path, reused (building one costs ~30 us)
        if len(_LOCKS) >= 256:
            _LOCKS.clear()
        lock = _LOCKS[key] = _lock_class()(key[0], timeout=timeout, mode=mode, lifetime=stale_seconds)
    try:
        lock.acquire(poll_interval=poll_seconds)
    except Timeout:
        raise StoreBusy(
            f"{path}: lock is held by another process (waited {timeout:g} s); "
            "if no mnemon process is running, remove the file",
            file=str(path),
            timeoutSeconds=timeout,
        ) from None
    except OSError as exc:  # after Timeout (an OSError too): ENOSPC, EROFS... creating the marker
        raise (storage_error(exc, path) or exc) from exc
    return lock


_LOCK_CLASS: type | None = None
#: (marker path, timeout) -> lock object; filelock keeps each thread's hold count apart (thread_local).
_LOCKS: dict[tuple[str, float], Any] = {}


def _lock_class() -> type:
    """:class:`filelock.SoftFileLock` whose marker is never visible empty (built once, lazily).

    filelock creates the marker with ``O_EXCL`` and writes the owner record afterwards, so a process
    killed in between leaves an empty marker, which filelock must treat as a live ownerless holder (the
    TypeScript plugin's markers are empty) and only the 30 s age rule clears. Here the record is written
    to a private staging file first and published with ``link()`` (as :func:`publish` does), which fails
    with ``EEXIST`` exactly like ``O_EXCL``: the marker appears complete, so a dead owner's lock is always
    broken at once. Pinned to filelock 4.3.1 (``_create_marker`` is its publication hook); tested in
    ``tests/runtime/test_concurrency.py`` and ``tests/runtime/test_crash.py``.
    """
    global _LOCK_CLASS
    if _LOCK_CLASS is not None:
        return _LOCK_CLASS
    import sys
    import warnings

    from filelock import SoftFileLock, SoftFileLockLifetimeWarning

    # The 30 s age rule is deliberate: it is the TypeScript plugin's protocol, and our holds last milliseconds.
    warnings.filterwarnings("ignore", category=SoftFileLockLifetimeWarning)

    class PublishedSoftFileLock(SoftFileLock):
        def _write_lock_info(self, fd: int) -> None:  # type: ignore[override]
            # filelock's own format and functions (pid, host, start token), but built once per process
            # (owner_record): filelock reads /proc several times to build it. Written at offset 0 with pwrite,
            # so filelock's second call (on the marker _create_marker returns, which already holds the record)
            # rewrites the same bytes in place instead of appending them.
            _write_lock_info(fd)

        def _create_marker(self, path: str, flags: int, opened: list[int]) -> int:
            if sys.platform == "win32" or not flags & os.O_EXCL:
                return super()._create_marker(path, flags, opened)
            fd = _publish_fd(path)  # EEXIST when held: filelock then waits or breaks a stale owner
            # The staging descriptor is the marker's inode now: filelock keeps it (identity, release).
            opened.append(fd)
            self._mark_descriptor_pending(opened[0])
            return opened[0]

    _LOCK_CLASS = PublishedSoftFileLock
    return _LOCK_CLASS

