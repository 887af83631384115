"""The refusals a storage root or a path someone named meets before anything is read or written.

Owns: a path too long for the file system (:func:`refuse_too_long`, :func:`too_long`, :func:`path_error`, used
by every reader of a path a user gave); a root that is, or lies under, a file, a dangling link or a link loop
(:func:`check_root_path`, :func:`check_data_dir`); a ``dataDir`` root that is the workspace itself or lies in its
``.git`` (:func:`refuse_root_in_repository`). Where a root is (:mod:`mnemon_ls.roots`) calls these; they read
only (``lstat``, ``stat``, ``realpath``) and import nothing of the storage layer.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInput, echo_repr

if TYPE_CHECKING:
    from .settings import Settings


def check_data_dir(settings: Settings) -> None:
    """Refuse a ``dataDir`` setting that cannot hold a storage root (a file, or under one; a path too long for the
    file system) before anything is served: the checks :func:`mnemon_ls.roots.resolve_root` makes of every root
    under it, made once at the start of a server whose every request would otherwise fail with them. Raises
    :class:`InvalidInput` naming ``dataDir``; nothing when ``dataDir`` is not set. Reads only."""
    if settings.data_dir:
        check_root_path(Path(settings.data_dir), "dataDir")


def refuse_too_long(path: str | os.PathLike[str], field: str) -> None:
    """Raise :class:`InvalidInput` naming ``field`` when the file system refuses ``path`` as too long
    (``ENAMETOOLONG``: a name over its NAME_MAX bytes or the whole over PATH_MAX), the path repeated clipped
    (:func:`~mnemon_ls.errors.echo_value`); any other answer (the path exists or not) passes. Reads only."""
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise too_long(path, field, exc) from None


def too_long(path: str | os.PathLike[str], field: str, exc: OSError) -> InvalidInput:
    """The :class:`InvalidInput` naming ``field`` for ``path`` the file system refused with ``exc``
    (``ENAMETOOLONG``): ``must be a path the file system can hold (File name too long; got '/tmp/aaa...')``, the
    path clipped (:func:`~mnemon_ls.errors.echo_repr`)."""
    return InvalidInput(field, f"must be a path the file system can hold ({exc.strerror}; got "
                               f"{echo_repr(os.fspath(path))})")


def path_error(exc: OSError, path: str | os.PathLike[str], field: str) -> Exception:
    """``exc``, an ``OSError`` of ``path`` someone named, as its reader raises it: :func:`too_long` naming ``field``
    for ``ENAMETOOLONG`` (bad input, exit 2), else ``exc`` itself (``raise path_error(exc, name, "file") from
    None``)."""
    return too_long(path, field, exc) if exc.errno == errno.ENAMETOOLONG else exc


def check_root_path(root: Path, field: str) -> None:
    """Reject a root that is, or lies under, something other than a directory (a file, a dangling link, a
    symbolic link loop), or a path too long for the file system (the rule of :func:`refuse_too_long`); read-only
    checks, one ``lstat`` for a root that exists or whose parent does (a link costs one ``stat`` more)."""
    probe = root
    while True:
        try:
            mode = os.lstat(probe).st_mode
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise too_long(root, field, exc) from None
            parent = probe.parent  # missing, under a file (ENOTDIR) or a loop (ELOOP): its parent says which
            if parent == probe:
                return
            probe = parent
            continue
        problem = None
        if stat.S_ISLNK(mode):
            try:
                mode = os.stat(probe).st_mode
            except OSError as exc:
                problem = ("is a symbolic link loop (ELOOP)" if exc.errno == errno.ELOOP
                           else "is a file")  # a dangling link, as before
        if problem is None and not stat.S_ISDIR(mode):
            problem = "is a file"
        if problem is not None:
            what = "the storage root" if probe == root else f"a parent of the storage root {root}"
            raise InvalidInput(field, f"{probe} {problem}, but {what} must be a directory")
        return


def refuse_root_in_repository(root: Path, workspace: Path, field: str) -> None:
    """Raise :class:`InvalidInput` naming ``field`` when the storage ``root`` (a ``dataDir``) is the ``workspace``
    itself or lies in its ``.git``: memory written there would be mixed with the repository's own files (its
    ``data/``, ``state/``...) and committed with them, or kept where git keeps its objects. A new directory
    inside the workspace is fine (its ``.gitignore`` is written with it), and so is an existing one (each area
    created in it gets one: :func:`mnemon_ls.roots_gitignore.arm_root_creation`). Reads only (``realpath``)."""
    real = Path(os.path.realpath(root))
    if real == workspace:
        raise InvalidInput(field, f"{root} is the workspace itself: memory stored there would be mixed with the "
                                  "repository's files and committed with them; give a directory outside the "
                                  "repository, or a new one inside it (it is kept out of git)")
    if real == workspace / ".git" or workspace / ".git" in real.parents:
        raise InvalidInput(field, f"{root} is inside the workspace's .git directory, which belongs to git; give a "
                                  "directory outside the repository, or a new one inside it (it is kept out of git)")
