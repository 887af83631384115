"""Reads of store files and the checks every read and write of a storage root makes (DESIGN.md invariant 10);
the durable writes, file modes and locks that use them are :mod:`mnemon_ls.fsio`, which also offers this
module's public names (``fsio.read_bytes_or_none``, ``fsio.confine``, ...), so a caller imports one module.

Confinement: a Source registers its storage root with :func:`confine`, the host also with the root's *anchor*
(the deepest directory that may be a link: the workspace for ``<workspace>/.mnemon``, the root itself for a root
the user configured). Every write below a registered root, and every read through :func:`read_bytes_or_none`,
first checks with ``lstat`` only that each directory below the anchor down to the file is a real directory and
the file itself is not a symbolic link (:func:`check_store_path`); files are opened ``O_NOFOLLOW`` (and
:mod:`mnemon_ls.fsio`'s temp files created ``O_EXCL|O_NOFOLLOW``). A symlinked store file (``memories.json``,
``MEMORY.md``, ``index.json``, ``mnemon.db``...) is refused, never read or written through and never silently
replaced by a rename: replacing it would copy what it pointed at into the root. OS errors leave as
:class:`~mnemon_ls.errors.StorageError` subclasses (still :class:`OSError`) naming the target path
(:func:`storage_errors`).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .errors import StorageError, StorageUnreadable, StorageUnsafe, storage_error

#: ``open()`` flag refusing a symbolic link as the final component (0 where the platform has none).
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# ---------------------------------------------------------------- confinement (invariant 10)

_CONFINED: dict[str, str] = {}  # storage root -> the directory its checks start from (its anchor)
_CONFINED_GUARD = threading.Lock()
_F = TypeVar("_F", bound=Callable[..., Any])


def _norm(path: Path | str) -> str:
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def is_within(path: Path | str, directory: Path | str) -> bool:
    """Whether ``path`` is ``directory`` or lies under it, by their text (both absolute and normalized the same
    way, e.g. ``os.path.normpath`` or ``os.path.realpath``: nothing is looked up on disk here)."""
    path, directory = os.fspath(path), os.fspath(directory)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


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


def storage_errors(fn: _F) -> _F:
    """Decorator: ``fn`` (any signature) unchanged, but an :class:`OSError` it raises that is a storage failure
    (:func:`~mnemon_ls.errors.storage_error`: ``ENOSPC``, ``EROFS``, ``EACCES``, ``EISDIR``, ``ELOOP``...) leaves
    as that :class:`~mnemon_ls.errors.StorageError` subclass (still an :class:`OSError`, chained to the original)
    naming the exception's file, a temp file's name (:func:`mnemon_ls.fsio.temp_name`) mapped back to the file it
    was replacing. Any other ``OSError`` (``ENOENT``...) and every other exception passes unchanged."""

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
    """``filename``, or the file a temp name of :func:`mnemon_ls.fsio.temp_name` stands for."""
    text = os.fsdecode(filename) if isinstance(filename, (bytes, os.PathLike)) else str(filename)
    match = _TEMP_PATTERN.match(os.path.basename(text))
    return os.path.join(os.path.dirname(text), match.group("name")) if match else text


@storage_errors
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
    fd = open_for_read(path)
    return None if fd is None else _read_and_close(fd, path)


@storage_errors
def read_bytes_if_present(path: Path) -> bytes | None:
    """:func:`read_bytes_or_none` for a side file that is usually missing (the citation, lineage and
    confirmation files read on every recall): the open comes first, so a missing file costs one failed
    ``open`` and no directory walk (nothing is read, so no link can have redirected the read: ``None``
    even under a linked directory); a file that exists is checked as :func:`read_bytes_or_none` checks it
    (:func:`check_store_path`) before its bytes are returned. Raises what :func:`read_bytes_or_none`
    raises for a file that exists."""
    fd = open_for_read(path)
    if fd is None:
        return None
    try:
        check_store_path(path, final=False)  # the directories (O_NOFOLLOW refused a linked file itself)
    except BaseException:
        os.close(fd)
        raise
    return _read_and_close(fd, path)


def open_for_read(path: Path) -> int | None:
    """A read-only file descriptor (``int``, the caller closes it) of ``path``, opened ``O_NOFOLLOW``,
    ``O_CLOEXEC`` and ``O_NONBLOCK`` (a FIFO in a store file's place does not block the open), or ``None`` when
    ``path`` does not exist. It does not check the directories (call :func:`check_store_path` first, as
    :func:`read_bytes_or_none` does). Raises :class:`~mnemon_ls.errors.StorageUnsafe` (from
    :func:`check_store_path`: what the link is and where it points) when ``path`` is a symbolic link, else the
    :class:`OSError` of the open (``EACCES``, ``EISDIR``... unmapped: wrap the caller in :func:`storage_errors`)."""
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
