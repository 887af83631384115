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

Confinement (DESIGN.md invariant 10): a Source registers its storage root with :func:`confine`, the
host also with the root's *anchor* (the deepest directory that may be a link: the workspace for
``<workspace>/.mnemon``, the root itself for a root the user configured). Every write below a
registered root, and every read through :func:`read_bytes_or_none`, first checks with ``lstat`` only
that each directory below the anchor down to the file is a real directory and the file itself is not
a symbolic link (:func:`check_store_path`); files are opened ``O_NOFOLLOW`` and temp files created
``O_EXCL|O_NOFOLLOW``. A symlinked store file (``memories.json``, ``MEMORY.md``, ``index.json``,
``mnemon.db``...) is refused, never written through and never silently replaced by the rename:
replacing it would copy what it pointed at into the root. OS errors of these functions leave as
:class:`~mnemon_ls.errors.StorageError` subclasses (still :class:`OSError`) naming the target path.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import random
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from . import markerlock, nowait
from .errors import StorageError, StorageUnreadable, StorageUnsafe, storage_error

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
#: ``open()`` flag refusing a symbolic link as the final component (0 where the platform has none).
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# ---------------------------------------------------------------- confinement (invariant 10)

_CONFINED: dict[str, str] = {}  # storage root -> the directory its checks start from (its anchor)
_CONFINED_GUARD = threading.Lock()
_F = TypeVar("_F", bound=Callable[..., Any])


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


def _norm(path: Path | str) -> str:
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def confine(root: Path | str, anchor: Path | str | None = None) -> None:
    """Register ``root`` (a storage root) so that every later read of a store file and every write below
    it is checked by :func:`check_store_path`, starting at ``anchor``.

    ``anchor`` is the deepest directory that may be a symbolic link: the root itself (default: a root
    given explicitly), or a directory above it (the workspace for ``<workspace>/.mnemon``, the data
    directory for ``workspaces/<hash>``, see :func:`mnemon_ls.roots_safety.trusted_anchor`), so the root and
    everything between are checked too. It must be ``root`` or contain it. A root registered twice keeps
    the anchor nearer the file system root (the stricter check). In memory only; never touches the disk.
    """
    key = _norm(root)
    start = key if anchor is None else _norm(anchor)
    if os.path.commonpath([key, start]) != start:
        raise ValueError(f"confine: anchor {start} does not contain root {key}")
    with _CONFINED_GUARD:
        known = _CONFINED.get(key)
        if known is None or os.path.commonpath([known, start]) == start:
            _CONFINED[key] = start


def confining_root(path: Path | str) -> tuple[Path, Path] | None:
    """``(root, anchor)`` of the nearest registered root that lexically contains ``path``, else ``None``."""
    found = _confining(_norm(path))
    return None if found is None else (Path(found[0]), Path(found[1]))


def _confining(text: str) -> tuple[str, str] | None:
    probe = os.path.dirname(text)
    while True:
        anchor = _CONFINED.get(probe)
        if anchor is not None:
            return probe, anchor
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def check_store_path(path: Path | str, *, final: bool = True) -> None:
    """Refuse to read or write ``path`` where a symbolic link could redirect it (``lstat`` only).

    For the nearest root registered with :func:`confine`, every existing directory from below its
    anchor down to ``path``'s parent (the root included when the anchor lies above it) must be a real
    directory, and ``path`` itself (when ``final`` and it exists) must not be a symbolic link.
    Directories that do not exist yet are fine (they will be created real). Raises
    :class:`~mnemon_ls.errors.StorageUnsafe` naming the link, or :class:`~mnemon_ls.errors.StorageUnreadable`
    (``ENOTDIR``) for a file where a directory belongs. A path under no registered root is not checked.
    Costs one ``lstat`` per component below the anchor (string operations only: it runs on every read).
    """
    _walk(_norm(path), final)


def checked_dir_exists(directory: Path | str) -> bool:
    """:func:`check_store_path` of ``directory`` (every directory below its root's anchor, itself included, is
    a real directory or missing) and whether it exists; the same ``lstat`` calls, no more. Raises what
    :func:`check_store_path` raises."""
    found = _walk(os.path.join(_norm(directory), "_"), False)
    return os.path.isdir(directory) if found is None else found


def _walk(target: str, final: bool) -> bool | None:
    """The checks of :func:`check_store_path`; returns whether every component it looked at exists (``None``
    when it looked at none: a path under no registered root, or the anchor's own child with ``final`` off)."""
    found = _confining(target)
    if found is None:
        return None
    root, anchor = found
    parts = target[len(anchor):].strip(os.sep).split(os.sep)
    probe = anchor
    last_index = len(parts) - 1
    for index, part in enumerate(parts):
        probe = os.path.join(probe, part)
        last = index == last_index
        if last and not final:
            return True if index else None
        try:
            mode = os.lstat(probe).st_mode
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise (storage_error(exc, probe) or exc) from None
        if stat.S_ISLNK(mode):
            if probe == root:
                what = "the storage root"
            elif len(probe) < len(root):
                what = "a directory on the way to the storage root"
            elif last:
                what = "a file inside the storage root"
            else:
                what = "a directory inside the storage root"
            raise StorageUnsafe(probe, f"{what} must not be a symbolic link (it points to "
                                       f"{_link_text(Path(probe))})", root=root)
        if not last and not stat.S_ISDIR(mode):
            raise StorageUnreadable(probe, errno.ENOTDIR, "a file is where a directory of the storage root belongs")
    return True


def writes_refused(path: Path | str) -> str | None:
    """Why the file system holding ``path`` (a file or directory) takes no write now: ``"read-only"``
    (mounted read-only), ``"full"`` (no free block for this process), else ``None``. ``statvfs`` of the
    nearest existing ancestor; never raises (``None`` when it cannot tell)."""
    probe = os.path.abspath(os.fspath(path))
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    try:
        info = os.statvfs(probe)
    except (OSError, AttributeError):
        return None
    if info.f_flag & getattr(os, "ST_RDONLY", 1):
        return "read-only"
    free = info.f_bfree if hasattr(os, "geteuid") and os.geteuid() == 0 else info.f_bavail
    return "full" if free == 0 else None


def sqlite_storage_error(exc: BaseException, path: Path | str) -> StorageError | None:
    """:func:`~mnemon_ls.errors.storage_error` for a ``sqlite3.Error`` on the database ``path``, refined
    by :func:`writes_refused`: SQLite reports a full disk as an I/O error when it cannot grow ``-shm``
    (``SQLITE_IOERR_SHMSIZE``), so an I/O or open error on a full or read-only file system is
    ``storage-full`` / ``storage-readonly``. ``None`` when it is not a storage failure."""
    from .errors import StorageFull, StorageReadOnly

    mapped = storage_error(exc, path)
    if mapped is not None and not isinstance(mapped, StorageUnreadable):
        return mapped
    refused = writes_refused(path)
    reason = f"{getattr(exc, 'sqlite_errorname', type(exc).__name__)}: {exc}"
    if refused == "full":
        return StorageFull(str(path), errno.ENOSPC, reason)
    if refused == "read-only":
        return StorageReadOnly(str(path), errno.EROFS, reason)
    return mapped


def _link_text(path: Path) -> str:
    try:
        return repr(os.readlink(path))
    except OSError:
        return "an unreadable target"


def _storage_errors(fn: _F) -> _F:
    """Let OS errors of ``fn`` leave as :class:`~mnemon_ls.errors.StorageError` naming the target file
    (a temp file's name is mapped back to the file it was replacing)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            mapped = storage_error(exc, _target_of(exc.filename) if exc.filename is not None else None)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc

    return wrapper  # type: ignore[return-value]


_TEMP_PATTERN = re.compile(r"^\.(?P<name>.+)\.\d+\.\d+\.[0-9a-f]{8}\.tmp$")


def _target_of(filename: Any) -> str:
    """``filename``, or the file a temp name of :func:`temp_name` stands for."""
    text = os.fsdecode(filename) if isinstance(filename, (bytes, os.PathLike)) else str(filename)
    match = _TEMP_PATTERN.match(os.path.basename(text))
    return os.path.join(os.path.dirname(text), match.group("name")) if match else text


@_storage_errors
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


@_storage_errors
def write_files_atomically(
    writes: Sequence[tuple[Path, bytes]], mode: int = FILE_MODE, *, unsynced: Collection[Path] = (),
    checked: bool = False,
) -> None:
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
    """
    nowait.check(writes[0][0] if writes else "a write")  # a durable write: not on an event loop
    if not writes:
        return
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
            os.replace(tmp, path)
            renamed += 1
        _fsync_dir(directory)
    finally:
        for tmp in temps[renamed:]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def file_stamp(moment: Any) -> str:
    """A filename-safe stamp of ``moment`` (a :class:`datetime.datetime`, already in UTC) with milliseconds:
    ``20261130T052804.123Z``; the prefix of the copies saved under ``edits/`` and ``quarantine/``."""
    return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"


def write_file_atomically(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Durably replace one file (see :func:`write_files_atomically`)."""
    write_files_atomically([(path, data)], mode)


@_storage_errors
def copy_file_exclusive(directory: Path, name: str, data: bytes) -> Path:
    """Durably write ``data`` to a *new* file ``directory/name`` (never overwriting; ``-2``, ``-3``... on clash).

    Used to preserve hand edits and quarantined files. Returns the path written. Creates ``directory``
    (0700) when missing.
    """
    nowait.check(directory)
    ensure_dir(directory)
    stem, dot, ext = name.rpartition(".")
    candidate, n = directory / name, 1
    while True:
        try:
            _write_durably(candidate, data, os.O_EXCL, FILE_MODE)
        except FileExistsError:
            n += 1
            candidate = directory / (f"{stem}-{n}.{ext}" if dot else f"{name}-{n}")
            continue
        _fsync_dir(directory)
        return candidate


@_storage_errors
def read_bytes_or_none(path: Path, *, checked: bool = False) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist.

    The final component is opened ``O_NOFOLLOW`` and the directories are checked
    (:func:`check_store_path`; ``checked=True``: the caller checked ``path``'s directory in this operation,
    see :meth:`mnemon_ls.runtime.store.RuntimeStore.locked`): a linked store file or directory raises
    :class:`~mnemon_ls.errors.StorageUnsafe` rather than reading another file. Other OS
    errors leave as :class:`~mnemon_ls.errors.StorageError` (e.g. ``EISDIR``: storage-unreadable).
    Four system calls for a file that exists (open, fstat, read to the end, close).
    """
    if not checked:
        check_store_path(path, final=not O_NOFOLLOW)  # O_NOFOLLOW refuses a linked file itself (ELOOP)
    fd = _open_for_read(path)
    return None if fd is None else _read_and_close(fd, path)


@_storage_errors
def read_bytes_if_present(path: Path) -> bytes | None:
    """:func:`read_bytes_or_none` for a side file that is usually missing (the citation, lineage and
    confirmation files read on every recall): the open comes first, so a missing file costs one failed
    ``open`` and no directory walk (nothing is read, so no link can have redirected the read: ``None``
    even under a linked directory); a file that exists is checked as :func:`read_bytes_or_none` checks it
    (:func:`check_store_path`) before its bytes are returned. Raises what :func:`read_bytes_or_none`
    raises for a file that exists."""
    fd = _open_for_read(path)
    if fd is None:
        return None
    try:
        check_store_path(path, final=False)  # the directories (O_NOFOLLOW refused a linked file itself)
    except BaseException:
        os.close(fd)
        raise
    return _read_and_close(fd, path)


def _open_for_read(path: Path) -> int | None:
    """A read-only ``O_NOFOLLOW`` descriptor of ``path``, ``None`` when it does not exist; a linked file
    raises :func:`check_store_path`'s detailed refusal."""
    try:
        # O_NONBLOCK: a FIFO put in a store file's place would otherwise block the open (a wake hung on it);
        # it changes nothing for a regular file
        return os.open(path, os.O_RDONLY | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            check_store_path(path)  # raises the detailed refusal (what the link is and where it points)
        raise


def _read_and_close(fd: int, path: Path) -> bytes:
    """Every byte of the open regular file ``fd`` (``path`` names it in errors); closes ``fd``."""
    try:
        info = os.fstat(fd)
        if stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode) or stat.S_ISCHR(info.st_mode):
            raise StorageUnreadable(str(path), None, "not a regular file: a pipe, socket or device is never read")
        size = info.st_size
        data = os.read(fd, size + 1 if size else 65536)
        if len(data) > size:  # grew meanwhile, or a file whose size says nothing: read to the end
            chunks = [data]
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    except OSError as exc:  # EISDIR, EIO: name the path, not the descriptor
        raise (storage_error(exc, path) or exc) from exc
    finally:
        os.close(fd)


@_storage_errors
def append_file_durably(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Append ``data`` to ``path`` (created ``mode`` when missing) and fsync it; never through a symbolic
    link (``O_NOFOLLOW``, directories checked by :func:`check_store_path`). Raises
    :class:`~mnemon_ls.errors.StorageError` naming ``path``."""
    check_store_path(path)
    _write_durably(path, data, os.O_APPEND, mode)


@_storage_errors
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


@_storage_errors
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
