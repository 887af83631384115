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
also clears the plugin's ownerless markers). A marker nobody holds is published directly
(:mod:`mnemon_ls.markerlock`, the same bytes filelock writes); filelock handles the contended case.

Confinement (DESIGN.md invariant 10), the reads of store files and the mapping of OS errors to
:class:`~mnemon_ls.errors.StorageError` are :mod:`mnemon_ls.fsread`; every write here runs its checks
(:func:`~mnemon_ls.fsread.check_store_path`, ``O_NOFOLLOW``, temp files created ``O_EXCL|O_NOFOLLOW``) and raises
its errors (:func:`~mnemon_ls.fsread.storage_errors`). Its public names are also this module's
(``fsio.read_bytes_or_none``, ``fsio.confine``, ...), so a caller of both imports one module.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import random
import secrets
import stat
import sys
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import fsread, fswatch, markerlock, nowait
from .errors import StorageError, storage_error
from .fsread import O_NOFOLLOW, check_store_path, storage_errors

#: The read side's public names (:mod:`mnemon_ls.fsread`), also this module's (module doc).
confine = fsread.confine
confining_root = fsread.confining_root
checked_dir_exists = fsread.checked_dir_exists
read_bytes_or_none = fsread.read_bytes_or_none
read_bytes_if_present = fsread.read_bytes_if_present
writes_refused = fsread.writes_refused
sqlite_storage_error = fsread.sqlite_storage_error
#: What a watched write displaced and how it is waited for (:mod:`mnemon_ls.fswatch`), also this module's names.
Displaced = fswatch.Displaced
DISPLACED_WAIT_SECONDS = fswatch.DISPLACED_WAIT_SECONDS
wait_for_writers = fswatch.wait_for_writers

FILE_MODE = 0o600
DIR_MODE = 0o700
#: The files SQLite keeps beside a database (rollback journal, write-ahead log, shared-memory index).
SQLITE_SIDE_SUFFIXES = ("-journal", "-wal", "-shm")
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

    :mod:`mnemon_ls.roots_gitignore` arms this for storage roots, so the ``.gitignore`` of a root inside a git
    working tree is written by the first write that creates the root, never by resolving it (DESIGN.md
    invariant 7). A hook that raises fails the write that created the directory.
    """
    _CREATION_HOOKS[Path(path)] = hook


@storage_errors
def ensure_dir(path: Path, mode: int = DIR_MODE) -> None:
    """Create ``path`` and missing parents with ``mode`` (0700); existing directories are left as they are.

    A directory registered with :func:`on_directory_created` gets its hook run right after this call
    created it (not when it already existed, nor when another process won the race to create it).
    Below a confined root (:func:`confine`) a symbolic link among them raises
    :class:`~mnemon_ls.errors.StorageUnsafe`; OS errors leave as :class:`~mnemon_ls.errors.StorageError`.
    """
    check_store_path(Path(path) / "_", final=False)
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
        except FileNotFoundError as exc:
            if not os.path.isdir(directory.parent):
                raise  # the parent went away meanwhile: what is missing is named as it is
            # the parent is there and refuses a new directory (/proc, /sys and other virtual file systems)
            raise StorageError(str(directory), exc.errno, "this file system does not allow creating a directory "
                                                           "here") from exc
        os.chmod(directory, mode)  # umask may have narrowed or widened nothing, but be exact
        _fsync_dir(directory.parent)
        hook = _CREATION_HOOKS.get(directory)
        if hook is not None:
            hook(directory)


def temp_name(target: Path) -> Path:
    """A unique temp path beside ``target``: ``.<basename>.<pid>.<epochMs>.<8 hex>.tmp``."""
    stamp = int(time.time() * 1000)
    return target.with_name(f".{target.name}.{os.getpid()}.{stamp}.{secrets.token_hex(4)}.tmp")


@storage_errors
def write_files_atomically(
    writes: Sequence[tuple[Path, bytes]], mode: int = FILE_MODE, *, unsynced: Collection[Path] = (),
    checked: bool = False, watched: Mapping[Path, bytes | None] | None = None,
) -> dict[Path, bytes]:
    """Durably replace each ``(path, bytes)``, renaming in the given order (put the commit marker last).

    All paths must share one directory (so renames are atomic and one directory fsync covers them).
    Every temp file is written (and fsynced, unless its path is in ``unsynced``) before the first rename;
    temp files are removed if anything fails. Raises :class:`~mnemon_ls.errors.StorageError` (an
    :class:`OSError`) from the filesystem, naming the target, and :class:`~mnemon_ls.errors.StorageUnsafe`
    before writing anything when a target or a directory below its confined root is a symbolic link; on
    failure before the first rename no target changed. ``checked=True``: the caller checked the directory
    in this operation (:func:`check_store_path`), so only the targets themselves are looked at (``lstat``).

    ``unsynced`` names files whose content need not reach the disk before the acknowledgement because
    they are derived and rebuilt from a synced file when found stale or empty (the Runtime projections,
    the last-good copy): after a power loss they may hold old or no bytes, never a SIGKILL's partial state
    (the rename order still holds for a crashed process). The directory is fsynced in every case.

    ``watched`` maps targets to the bytes the caller read under its lock (``None``: no file). Someone who takes
    no lock (a person saving in an editor) may save a target between that read and the rename; a plain rename
    would drop the save without a trace. A watched target is swapped in atomically on Linux
    (``renameat2(RENAME_EXCHANGE)``; elsewhere, or where the file system refuses, it is read again just before
    the rename) and what it displaced, when not the bytes read, is returned: ``{target: displaced bytes}``, for
    the caller to save (DESIGN.md invariant 5). Without ``watched`` the result is empty. The displaced file is
    looked at once nobody has it open for writing (an editor saving in place truncates, then writes through its
    open descriptor, maybe after the swap), waiting at most :data:`DISPLACED_WAIT_SECONDS`; one still written
    then is returned with ``held`` set (:class:`Displaced`): the caller keeps it with :func:`keep_displaced`.
    """
    nowait.check(writes[0][0] if writes else "a write")  # a durable write: not on an event loop
    displaced: dict[Path, bytes] = {}
    if not writes:
        return displaced
    directory = writes[0][0].parent
    if any(path.parent != directory for path, _ in writes):
        raise ValueError("write_files_atomically: all paths must be in one directory")
    for path, _ in writes:
        if not checked:
            check_store_path(path)
            continue
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.lstat(path).st_mode):
                check_store_path(path)  # raises the detailed refusal
    folder, pid, stamp = str(directory), os.getpid(), int(time.time() * 1000)
    temps: list[str] = []
    renamed = 0
    try:
        for path, data in writes:
            tmp = os.path.join(folder, f".{path.name}.{pid}.{stamp}.{random.getrandbits(32):08x}.tmp")  # temp_name's
            temps.append(tmp)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
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
            if watched is not None and path in watched:
                if (saved := _rename_watching(tmp, path, watched[path])) is not None:
                    displaced[path] = saved
            else:
                os.replace(tmp, path)
            renamed += 1
        _fsync_dir(directory)
    finally:
        for tmp in temps[renamed:]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    return displaced


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_RENAME_NOREPLACE = 1


@functools.cache
def _renameat2() -> Any:
    """libc's ``renameat2`` (glibc 2.28+), or ``None`` where there is none (not Linux, another libc)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # on use: only a write that watches its target needs it

    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def exchange(first: str, second: str) -> bool:
    """Swap the two names atomically; ``False`` when the system or file system cannot (then nothing moved).
    Raises the :class:`OSError` of any other failure (``ENOENT``: one of them is missing)."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), second)


def _rename_watching(tmp: str, path: Path, expected: bytes | None) -> bytes | None:
    """Rename ``tmp`` over ``path``; what it displaced (:class:`Displaced`) when that differs from ``expected``
    or is still being written, else ``None`` (see :func:`write_files_atomically`).

    The displaced file is looked at once its writers are gone (:func:`~mnemon_ls.fswatch.settled_displaced`): an
    editor saving in place may have truncated it before our read and write its bytes only after the swap, through
    the descriptor it still holds; read at once, the file would equal the (cut) bytes read and the save would go
    with it."""
    try:
        swapped = exchange(tmp, str(path))
    except FileNotFoundError:
        swapped = False  # no file at path (any more): a plain rename creates it
    if swapped:
        displaced = fswatch.settled_displaced(tmp)  # the name tmp now holds what path held at the swap
        if displaced is not None and displaced.held:
            return displaced  # still written: the file itself is kept (keep_displaced), never unlinked here
        try:
            os.unlink(tmp)
        except OSError:  # no file (a directory put there since the read): swapped back, never left at tmp
            with contextlib.suppress(OSError):
                exchange(tmp, str(path))
            raise
    else:
        try:
            fd: int | None = os.open(path, os.O_RDONLY | O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            fd = None
        os.replace(tmp, path)
        displaced = None if fd is None else fswatch.settled_displaced(str(path), fd)
        if displaced is not None:
            displaced.held = None  # unlinked by the rename: only its bytes can be kept
    return displaced if displaced is not None and displaced != expected else None


def remove_watching(path: Path, expected: bytes | None, keep: Callable[[Displaced], str]) -> str | None:
    """Remove ``path``, which the caller read under its lock as ``expected``, unless someone outside the lock
    saved it since: the file is first renamed to a hidden temp name (atomic: a save by rename after that
    lands at ``path`` again and is left there), then looked at as :func:`write_files_atomically` looks at a
    displaced file; when it holds other bytes than ``expected`` (or is still written), ``keep`` is called with
    them (``held``: the file itself, for :func:`keep_displaced`) and what it returns (where it kept them) is
    returned. ``None``: removed as read (or already gone). When ``keep`` raises, the file is put back at ``path``
    (a hard link, never over a file saved there since; else left at its temp name) and the error raised. The
    directory is fsynced. Raises the :class:`OSError` of the rename, or of the removal when what stands at ``path``
    is no file (a directory put there since the read: renamed back first, never removed)."""
    nowait.check(path)
    tmp = str(temp_name(path))
    try:
        os.rename(path, tmp)
    except FileNotFoundError:
        return None
    displaced = fswatch.settled_displaced(tmp)
    if displaced is not None and (displaced.held or displaced != expected):
        displaced.held = tmp  # the file itself is kept: its bytes may still grow
        try:
            return keep(displaced)
        except BaseException:
            with contextlib.suppress(OSError):
                os.link(tmp, path, follow_symlinks=False)  # FileExistsError: saved again meanwhile: tmp stays
                os.unlink(tmp)
            raise
    try:
        os.unlink(tmp)
    except OSError:  # not a file (a directory put there since the read): put back as it is, never left at tmp
        _put_back(tmp, path)
        raise
    _fsync_dir(path.parent)
    return None


def _put_back(tmp: str, path: Path) -> None:
    """Rename ``tmp`` back to ``path`` unless something stands there again (then ``tmp`` stays); never raises."""
    function = _renameat2()
    with contextlib.suppress(OSError):
        if function is not None:
            if function(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_NOREPLACE) == 0:
                return
            import ctypes

            if ctypes.get_errno() not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
                return  # EEXIST: saved there again meanwhile
        if not os.path.lexists(path):
            os.rename(tmp, path)


@storage_errors
def keep_displaced(directory: Path, name: str, displaced: bytes) -> Path:
    """Keep what a watched write displaced as a *new* file ``directory/name`` (``-2``, ``-3``... on a clash) and
    return its path: a :class:`Displaced` still written (``held``) is moved there itself (a hard link, then its
    temp name removed: same file system), so what its writer writes later is kept too; other bytes are copied
    (:func:`copy_file_exclusive`). Raises :class:`~mnemon_ls.errors.StorageError`."""
    held = getattr(displaced, "held", None)
    if not held:
        return copy_file_exclusive(directory, name, bytes(displaced))
    candidate = _first_free(directory, name, lambda path: os.link(held, path, follow_symlinks=False))
    os.unlink(held)
    _fsync_dir(directory)
    _fsync_dir(Path(held).parent)
    return candidate


def replace_watching(path: Path, data: bytes, expected: bytes | None) -> bytes | None:
    """Durably replace ``path`` with ``data`` (:func:`write_files_atomically` with ``watched``) and return the
    bytes the replacement displaced when they differ from ``expected`` (what the caller read under its lock;
    ``None``: it found no file), else ``None``: the caller saves them."""
    return write_files_atomically([(path, data)], watched={path: expected}).get(path)


def file_stamp(moment: Any) -> str:
    """A filename-safe stamp of ``moment`` (a :class:`datetime.datetime`, already in UTC) with milliseconds:
    ``20261130T052804.123Z``; the prefix of the copies saved under ``edits/`` and ``quarantine/``."""
    return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"


def write_file_atomically(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Durably replace one file (see :func:`write_files_atomically`)."""
    write_files_atomically([(path, data)], mode)


@storage_errors
def copy_file_exclusive(directory: Path, name: str, data: bytes) -> Path:
    """Durably write ``data`` to a *new* file ``directory/name`` (never overwriting; ``-2``, ``-3``... on clash).

    Used to preserve hand edits and quarantined files. Returns the path written. Creates ``directory``
    (0700) when missing.
    """
    candidate = _first_free(directory, name, lambda path: _write_durably(path, data, os.O_EXCL, FILE_MODE))
    _fsync_dir(directory)
    return candidate


def _first_free(directory: Path, name: str, create: Callable[[Path], None]) -> Path:
    """The path ``create`` made a new file at: ``directory/name``, else ``name-2.ext``, ``name-3.ext``... while
    ``create`` raises :class:`FileExistsError` (it must create exclusively). Creates ``directory`` (0700)."""
    nowait.check(directory)
    ensure_dir(directory)
    stem, dot, ext = name.rpartition(".")
    candidate, n = directory / name, 1
    while True:
        try:
            create(candidate)
        except FileExistsError:
            n += 1
            candidate = directory / (f"{stem}-{n}.{ext}" if dot else f"{name}-{n}")
            continue
        return candidate


@storage_errors
def append_file_durably(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Append ``data`` to ``path`` (created ``mode`` when missing) and fsync it; never through a symbolic
    link (``O_NOFOLLOW``, directories checked by :func:`check_store_path`). Raises
    :class:`~mnemon_ls.errors.StorageError` naming ``path``."""
    check_store_path(path)
    _write_durably(path, data, os.O_APPEND, mode)


@storage_errors
def create_file_durably(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write ``data`` to the *new* file ``path`` (created ``mode``, its directory 0700 when missing) and
    fsync it; never through a symbolic link (``O_NOFOLLOW``) and never over an existing file
    (``O_EXCL``: :class:`FileExistsError`). The caller fsyncs the directory when the name must be
    durable too (a staged tree that is renamed into place later). Raises
    :class:`~mnemon_ls.errors.StorageError` naming ``path``."""
    ensure_dir(path.parent)
    _write_durably(path, data, os.O_EXCL, mode)


def _write_durably(path: Path, data: bytes, flags: int, mode: int) -> None:
    """Open ``path`` for writing (``O_CREAT | O_NOFOLLOW | O_CLOEXEC`` plus ``flags``), write all of
    ``data`` (``os.write`` may write less than asked) and fsync before closing."""
    nowait.check(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


@storage_errors
def create_file_nofollow(path: Path, mode: int = FILE_MODE) -> None:
    """Make sure the regular file ``path`` exists (created empty with ``mode`` when missing), refusing a
    symbolic link in its place or in a directory below its confined root (and the SQLite side files
    ``-wal``, ``-shm``, ``-journal`` beside it). Used before handing a database path to SQLite, which
    follows links. Raises :class:`~mnemon_ls.errors.StorageUnsafe` / :class:`~mnemon_ls.errors.StorageError`."""
    for candidate in (path, *(Path(f"{path}{suffix}") for suffix in SQLITE_SIDE_SUFFIXES)):
        check_store_path(candidate)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode))


def private_database(path: Path) -> None:
    """Before handing a database file of ours (a derived index: the side search index, the document chunk
    index) to SQLite: :func:`create_file_nofollow` with :data:`FILE_MODE` (0600) when missing, so the
    journal, ``-wal`` and ``-shm`` files SQLite creates beside it get the same mode (SQLite gives them the
    database file's permissions, whatever the umask), then :func:`narrow_database`."""
    create_file_nofollow(path)
    narrow_database(path)


def narrow_database(path: Path) -> None:
    """Narrow the database file ``path`` and its journal, ``-wal`` and ``-shm`` files to :data:`FILE_MODE`
    (0600) when one grants group or other access (left by a version that let SQLite create the file: 0644
    under umask 022). Regular files only (``lstat``: a link is never followed); missing files and files
    we may not change are left as they are."""
    for candidate in (path, *(Path(f"{path}{suffix}") for suffix in SQLITE_SIDE_SUFFIXES)):
        try:
            info = os.lstat(candidate)
            if stat.S_ISREG(info.st_mode) and info.st_mode & 0o077:
                os.chmod(candidate, FILE_MODE)
        except (FileNotFoundError, PermissionError):
            continue


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = LOCK_TIMEOUT_SECONDS, *, checked: bool = False) -> Iterator[bool]:
    """Hold the exclusive-create lock marker ``path`` for the body (creating its directory 0700).

    Waits up to ``timeout`` seconds, polling every :data:`LOCK_POLL_SECONDS`; raises
    :class:`~mnemon_ls.errors.StoreBusy` (naming the lock file) on timeout. Dead owners' markers and
    markers older than :data:`LOCK_STALE_SECONDS` are broken. Reentrant within one thread.

    ``checked=True`` says the caller has run :func:`check_store_path` on ``path``'s directory in this
    operation and the directory exists (the Runtime store checks it once per operation); otherwise it is
    checked and created here. The body receives ``True`` when the marker was there first (another holder was
    waited for, or a dead one's marker broken), ``False`` when it was taken at once (or is held already by
    this thread). An uncontended marker is published by :mod:`mnemon_ls.markerlock`; a contended one is
    left to filelock (waiting, breaking, the timeout), and both write the same marker.
    """
    key = str(path)
    nowait.check(path)  # a lock is taken to write: an operation run on an event loop goes to a thread
    hold = markerlock.held(key)
    if hold is not None:  # this thread holds it already
        hold.count += 1
        try:
            yield False
        finally:
            markerlock.release(hold)
        return
    if not checked:
        ensure_dir(path.parent)  # checks the directories down to it, too
    try:
        hold = markerlock.publish(key)
    except OSError as exc:  # ENOSPC, EROFS, ENOENT... creating the marker
        raise (storage_error(exc, path) or exc) from exc
    contended = hold is None
    if hold is None:
        check_store_path(path)  # a symbolic link at the marker's name: refused, never waited for
        hold = markerlock.adopt(key, markerlock.acquire_contended(path, timeout, LOCK_POLL_SECONDS,
                                                                  LOCK_STALE_SECONDS, FILE_MODE))
    try:
        yield contended
    finally:
        markerlock.release(hold)


def _fsync_dir(directory: Path) -> None:
    """fsync the directory ``directory`` (makes the names created, renamed or removed in it durable)."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: Public name of :func:`_fsync_dir` (tests stop a commit at the step named by its code object).
fsync_dir = _fsync_dir


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (signal 0; another user's process counts as alive; a
    pid <= 0 names no writer). Used to tell a dead writer's leftovers (temp and lock staging files)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
