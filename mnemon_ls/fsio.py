"""Durable atomic writes, file modes and cross-process locks (DESIGN.md invariants 2, 3 and 6).

A write is durable before it is acknowledged: each file is written to a temp file in the *same*
directory (``.<basename>.<pid>.<epochMs>.<random>.tmp``, the TypeScript plugin's naming), fsynced
(unless the caller names it derived), renamed over the target in the order given, and the directory is
fsynced once after the last rename.
Files are created 0600 and directories we create 0700.

Locks are :class:`filelock.SoftFileLock` markers: the lock file is created exclusively
(``O_CREAT|O_EXCL``), exactly the protocol the TypeScript plugin uses for ``runtime/.memories.lock``, so
a Python and a TypeScript process can share a root. A marker whose owner process is dead is broken at
once; any marker older than :data:`LOCK_STALE_SECONDS` is broken too (the plugin's own 30 s rule, which
also clears the plugin's ownerless markers).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from .errors import StoreBusy

FILE_MODE = 0o600
DIR_MODE = 0o700
#: Seconds after which a lock marker is considered abandoned whatever it says (TypeScript plugin rule).
LOCK_STALE_SECONDS = 30.0
#: Default seconds to wait for a lock before :class:`~mnemon_ls.errors.StoreBusy`.
LOCK_TIMEOUT_SECONDS = 10.0
#: Seconds between attempts while waiting for a lock (the plugin polls every 20 ms).
LOCK_POLL_SECONDS = 0.005


#: Directory -> callable run right after :func:`ensure_dir` created that directory (see
#: :func:`on_directory_created`). Filled in memory only; nothing is written when a hook is registered.
_CREATION_HOOKS: dict[Path, Callable[[Path], None]] = {}


def on_directory_created(path: Path, hook: Callable[[Path], None]) -> None:
    """Run ``hook(path)`` whenever :func:`ensure_dir` creates the directory ``path`` (absolute).

    :mod:`mnemon_ls.roots` arms this for storage roots, so the ``.gitignore`` of a root inside a git
    working tree is written by the first write that creates the root, never by resolving it (DESIGN.md
    invariant 7). A hook that raises fails the write that created the directory.
    """
    _CREATION_HOOKS[Path(path)] = hook


def ensure_dir(path: Path, mode: int = DIR_MODE) -> None:
    """Create ``path`` and missing parents with ``mode`` (0700); existing directories are left as they are.

    A directory registered with :func:`on_directory_created` gets its hook run right after this call
    created it (not when it already existed, nor when another process won the race to create it).
    """
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            continue
        os.chmod(directory, mode)  # umask may have narrowed or widened nothing, but be exact
        _fsync_dir(directory.parent)
        hook = _CREATION_HOOKS.get(directory)
        if hook is not None:
            hook(directory)


def temp_name(target: Path) -> Path:
    """A unique temp path beside ``target``: ``.<basename>.<pid>.<epochMs>.<8 hex>.tmp``."""
    stamp = int(time.time() * 1000)
    return target.with_name(f".{target.name}.{os.getpid()}.{stamp}.{secrets.token_hex(4)}.tmp")


def write_files_atomically(
    writes: Sequence[tuple[Path, bytes]], mode: int = FILE_MODE, *, unsynced: Collection[Path] = ()
) -> None:
    """Durably replace each ``(path, bytes)``, renaming in the given order (put the commit marker last).

    All paths must share one directory (so renames are atomic and one directory fsync covers them).
    Every temp file is written (and fsynced, unless its path is in ``unsynced``) before the first rename;
    temp files are removed if anything fails. Raises :class:`OSError` from the filesystem; on failure
    before the first rename no target changed.

    ``unsynced`` names files whose content need not reach the disk before the acknowledgement because
    they are derived and rebuilt from a synced file when found stale or empty (the Runtime projections,
    the last-good copy): after a power loss they may hold old or no bytes, never a SIGKILL's partial state
    (the rename order still holds for a crashed process). The directory is fsynced in every case.
    """
    if not writes:
        return
    directory = writes[0][0].parent
    if any(path.parent != directory for path, _ in writes):
        raise ValueError("write_files_atomically: all paths must be in one directory")
    temps: list[Path] = []
    try:
        for path, data in writes:
            tmp = temp_name(path)
            temps.append(tmp)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                if path not in unsynced:
                    os.fsync(fd)
            finally:
                os.close(fd)
        for (path, _), tmp in zip(writes, temps):
            os.replace(tmp, path)
        _fsync_dir(directory)
    finally:
        for tmp in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def write_file_atomically(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Durably replace one file (see :func:`write_files_atomically`)."""
    write_files_atomically([(path, data)], mode)


def copy_file_exclusive(directory: Path, name: str, data: bytes) -> Path:
    """Durably write ``data`` to a *new* file ``directory/name`` (never overwriting; ``-2``, ``-3``... on clash).

    Used to preserve hand edits and quarantined files. Returns the path written. Creates ``directory``
    (0700) when missing.
    """
    ensure_dir(directory)
    stem, dot, ext = name.rpartition(".")
    candidate, n = directory / name, 1
    while True:
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            n += 1
            candidate = directory / (f"{stem}-{n}.{ext}" if dot else f"{name}-{n}")
            continue
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(directory)
        return candidate


def decode_leniently(data: bytes) -> str:
    """Text of a possibly damaged file: UTF-16 when it has a BOM and decodes, else UTF-8 with U+FFFD
    for bad bytes; a leading BOM is dropped. Never raises. Used to salvage damaged truth files."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def scan_json_objects(text: str, first_key: str) -> list[Any]:
    """Every complete JSON object in ``text`` whose first key is ``first_key``, in order.

    Salvages the records of a truncated or otherwise unparseable JSON file: a cut file keeps every
    object written before the cut. Never raises.
    """
    decoder = json.JSONDecoder()
    pattern = re.compile(r'\{\s*"' + re.escape(first_key) + r'"\s*:')
    found: list[Any] = []
    position = 0
    while match := pattern.search(text, position):
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            position = match.end()
            continue
        found.append(value)
        position = end
    return found


def read_bytes_or_none(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist. Other OS errors propagate."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the exclusive-create lock marker ``path`` for the body (creating its directory 0700).

    Waits up to ``timeout`` seconds, polling every :data:`LOCK_POLL_SECONDS`; raises
    :class:`~mnemon_ls.errors.StoreBusy` (naming the lock file) on timeout. Dead owners' markers and
    markers older than :data:`LOCK_STALE_SECONDS` are broken.
    """
    from filelock import Timeout  # lazy: ~14 ms of import

    ensure_dir(path.parent)
    key = (str(path), timeout)
    lock = _LOCKS.get(key)
    if lock is None:  # one lock object per marker path, reused (building one costs ~30 us)
        if len(_LOCKS) >= 256:
            _LOCKS.clear()
        lock = _LOCKS[key] = _lock_class()(key[0], timeout=timeout, mode=FILE_MODE, lifetime=LOCK_STALE_SECONDS)
    try:
        lock.acquire(poll_interval=LOCK_POLL_SECONDS)
    except Timeout:
        raise StoreBusy(
            f"{path}: lock is held by another process (waited {timeout:g} s); "
            "if no mnemon process is running, remove the file",
            file=str(path),
            timeoutSeconds=timeout,
        ) from None
    try:
        yield
    finally:
        lock.release()


_LOCK_CLASS: type | None = None
#: (marker path, timeout) -> lock object; filelock keeps each thread's hold count apart (thread_local).
_LOCKS: dict[tuple[str, float], Any] = {}


def _lock_class() -> type:
    """:class:`filelock.SoftFileLock` whose marker is never visible empty (built once, lazily).

    filelock creates the marker with ``O_EXCL`` and writes the owner record afterwards, so a process
    killed in between leaves an empty marker, which filelock must treat as a live ownerless holder (the
    TypeScript plugin's markers are empty) and only the 30 s age rule clears. Here the record is written
    to a private temp file first and published with ``link()``, which fails with ``EEXIST`` exactly like
    ``O_EXCL``: the marker appears complete, so a dead owner's lock is always broken at once.
    Pinned to filelock 4.3.1 (``_create_marker`` is its publication hook); tested in
    ``tests/test_runtime_concurrency.py`` and ``tests/test_runtime_crash.py``.
    """
    global _LOCK_CLASS
    if _LOCK_CLASS is not None:
        return _LOCK_CLASS
    import sys
    import warnings

    from filelock import SoftFileLock, SoftFileLockLifetimeWarning

    # The 30 s age rule is deliberate: it is the TypeScript plugin's protocol, and our holds last milliseconds.
    warnings.filterwarnings("ignore", category=SoftFileLockLifetimeWarning)

    from filelock._identity import host_name, process_start_token

    record: list[tuple[int, bytes]] = []

    class PublishedSoftFileLock(SoftFileLock):
        def _write_lock_info(self, fd: int) -> None:  # type: ignore[override]
            # filelock's own format and functions (pid, host, start token), but built once per process:
            # filelock reads /proc several times to build it, a third of every lock's cost. Written at
            # offset 0 with pwrite, so filelock's second call (on the marker _create_marker returns, which
            # already holds the record) rewrites the same bytes in place instead of appending them.
            pid = os.getpid()
            if not record or record[0][0] != pid:
                info = f"{pid}\n{host_name()}\n"
                token = process_start_token(pid)
                record[:] = [(pid, (info + (f"{token}\n" if token is not None else "")).encode())]
            data, offset = record[0][1], 0
            while offset < len(data):
                offset += os.pwrite(fd, data[offset:], offset)

        def _create_marker(self, path: str, flags: int, opened: list[int]) -> int:
            if sys.platform == "win32" or not flags & os.O_EXCL:
                return super()._create_marker(path, flags, opened)
            staging = f"{path}.{os.getpid()}.{secrets.token_hex(6)}.publish"
            fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
            try:
                self._write_lock_info(fd)
                os.link(staging, path)  # EEXIST when held: filelock then waits or breaks a stale owner
            except BaseException:
                os.close(fd)
                raise
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(staging)
            # The staging descriptor is the marker's inode now: filelock keeps it (identity, release).
            opened.append(fd)
            self._mark_descriptor_pending(opened[0])
            return opened[0]

    _LOCK_CLASS = PublishedSoftFileLock
    return _LOCK_CLASS


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
