"""The real path of a directory from an open descriptor, where the kernel says it (``/proc/self/fd``).

:func:`os.path.realpath` walks the path one ``lstat`` per component in Python; a language-server or MCP request
asks for the real path of the workspace (the branch probe, :mod:`mnemon_ls.gitstate`) and of the storage roots
(the pack gate, :mod:`mnemon_ls.packgate`) every time. The kernel knows it already once the directory is open:
on Linux ``readlink("/proc/self/fd/<fd>")`` is one system call. Anywhere that answer is not available (no
``/proc``, a deleted directory, a path the process cannot open) the callers use ``realpath`` as before, so the
answer is the same everywhere. Never writes.
"""

from __future__ import annotations

import os

_PROC_FD = "/proc/self/fd"
#: Whether ``/proc/self/fd`` can be read (Linux; looked at once).
_HAS_PROC = os.path.isdir(_PROC_FD)
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def fd_path(fd: int) -> str | None:
    """The absolute real path of the directory open as ``fd``, or ``None`` when the kernel cannot say (no
    ``/proc``; a directory removed since it was opened, which Linux names ``... (deleted)``)."""
    if not _HAS_PROC:
        return None
    try:
        target = os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        return None
    if not target.startswith("/") or target.endswith(" (deleted)"):
        return None
    return target


def real_directory(path: str | os.PathLike[str]) -> str | None:
    """``os.path.realpath(path)`` when ``path`` is a directory this process can open, in three system calls
    (open, readlink, close); ``None`` otherwise (not a directory, missing, unreadable, no ``/proc``): then the
    caller asks :func:`os.path.realpath` and gets every error and edge case as before."""
    if not _HAS_PROC:
        return None
    try:
        fd = os.open(path, _DIRECTORY_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        return fd_path(fd)
    finally:
        os.close(fd)
