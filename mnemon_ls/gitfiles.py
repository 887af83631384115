"""The common repository layouts read from their files, without libgit2 (pygit2 costs ~80 ms to import, more
than the rest of an assistant's hook process: :mod:`mnemon_ls.gitstate` asks here first).

:func:`find` walks up from a directory like git's discovery and answers only when the layout is one whose
meaning is certain from a few small files; anything else is ``None``, and :mod:`mnemon_ls.gitstate` asks
libgit2 as before (so every unusual case keeps libgit2's answer and its reason text):

- a ``.git`` directory, or a ``.git`` file ``gitdir: <path>`` (a linked worktree, a submodule), found before
  any directory that is itself a git dir (a bare repository, a path inside ``.git/``) and before a change of
  filesystem (libgit2 does not cross one);
- the git dir has ``HEAD``, and its common dir ``objects/`` and ``refs/`` (what libgit2 checks), every one
  of them read without error; the working tree and the git dir belong to the current user (libgit2 refuses
  another user's repository unless ``safe.directory`` says so);
- the common dir's ``config`` sets nothing that moves the working tree or the refs: no ``worktree``
  (``core.worktree``, ``extensions.worktreeConfig``), no ``bare``, no ``include``, no ``refStorage``.

:func:`read_head` reads ``HEAD``: ``ref: refs/heads/<name>`` (the branch; its commit from the loose ref file,
else ``packed-refs``; neither: unborn) or a bare object id (detached); anything else (another symbolic
target, a symbolic branch ref, a malformed value, an unsafe name) is ``None``. Nothing here writes or starts
a process.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

_HEADS = "refs/heads/"
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: Configuration keys (lower case, in any section) that make the layout one only libgit2 reads right.
_UNUSUAL_KEYS = frozenset({"worktree", "worktreeconfig", "refstorage"})


@dataclass(frozen=True, slots=True)
class Repository:
    """A repository found by :func:`find`: its git dir (``.git`` or ``.git/worktrees/<name>``), common dir
    and working tree top, all absolute without a trailing separator."""

    gitdir: str
    common: str
    workdir: str


#: :func:`find`'s answer when there is no ``.git`` up to the filesystem root (and nothing unusual on the way).
NOT_A_REPOSITORY = Repository("", "", "")


def read_small(path: str, limit: int = 4096) -> bytes:
    """At most ``limit`` bytes from the start of the file ``path`` (all of a smaller one), read with
    ``os.open``/``os.read``: a probe reads a handful of small files every time a branch is asked for, and a
    buffered ``open`` costs three more system calls a file (and a ``limit``-sized buffer). Raises
    :class:`OSError` as ``open`` would (``IsADirectoryError`` for a directory, when it is read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes read from the open descriptor ``fd`` (until end of file), in reads of at most
    64 KiB. Raises :class:`OSError` as ``os.read`` does; the descriptor stays open."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 65536))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


_read = read_small


def _owned(path: str, uid: int) -> bool:
    return os.stat(path).st_uid == uid


def common_dir(gitdir: str) -> str:
    """The common dir of ``gitdir`` from its ``commondir`` file (relative to it, or absolute), else ``gitdir``.
    Raises ``OSError`` other than a missing file."""
    try:
        content = _read(os.path.join(gitdir, "commondir")).decode("utf-8", "replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        return gitdir
    return os.path.normpath(os.path.join(gitdir, content)) if content else gitdir


def _usable(gitdir: str, uid: int, gitdir_uid: int | None = None) -> str | None:
    """The common dir when ``gitdir`` is a git dir this module reads right, else ``None`` (``gitdir_uid``: its
    owner when the caller has just looked)."""
    if not stat.S_ISREG(os.stat(os.path.join(gitdir, "HEAD")).st_mode):
        return None
    common = common_dir(gitdir)
    if not (os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(os.path.join(common, "refs"))):
        return None
    owns_gitdir = gitdir_uid == uid if gitdir_uid is not None else _owned(gitdir, uid)
    if not (owns_gitdir and (common == gitdir or _owned(common, uid))):
        return None
    try:
        config = _read(os.path.join(common, "config"), 1 << 20).decode("utf-8", "replace")
    except FileNotFoundError:
        config = ""
    return common if _plain_config(config) else None


def _plain_config(text: str) -> bool:
    """Whether a git ``config`` text sets nothing that moves the working tree or the refs (module doc): no
    ``worktree``/``worktreeConfig``/``refStorage`` key, no ``bare`` other than false, no ``[include]`` or
    ``[includeIf]`` section (its file could set them)."""
    for raw in text.splitlines():
        line = raw.strip().lower()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if line[1:].lstrip().startswith("include"):
                return False
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key in _UNUSUAL_KEYS:
            return False
        if key == "bare" and value.split("#")[0].split(";")[0].strip() not in ("false", "no", "off", "0"):
            return False
    return True


def find(start: str) -> Repository | None:
    """The repository containing the existing real directory ``start`` (see the module doc), or
    :data:`NOT_A_REPOSITORY`, or ``None`` when libgit2 must answer. Never raises for the filesystem."""
    try:
        uid = os.geteuid()
        here = os.stat(start)  # of ``current`` (its device, its owner)
        device = here.st_dev
        current = start
        while True:
            dotgit = os.path.join(current, ".git")
            try:
                info = os.lstat(dotgit)
            except FileNotFoundError:
                info = None
            if info is not None:
                gitdir_uid = None
                if stat.S_ISDIR(info.st_mode):
                    gitdir, gitdir_uid = dotgit, info.st_uid  # not a link: lstat is stat
                elif stat.S_ISREG(info.st_mode):
                    first = _read(dotgit).decode("utf-8", "replace").splitlines()
                    if not first or not first[0].startswith("gitdir: "):
                        return None
                    gitdir = os.path.realpath(os.path.join(current, first[0][len("gitdir: "):].strip()))
                    if not os.path.isdir(gitdir):
                        return None
                else:  # a symbolic link or anything else: libgit2's rules
                    return None
                common = _usable(gitdir, uid, gitdir_uid)
                if common is None or here.st_uid != uid:
                    return None
                return Repository(gitdir, common, current)
            if os.path.lexists(os.path.join(current, "HEAD")):  # maybe a git dir itself (bare, inside .git/)
                return None
            parent = os.path.dirname(current)
            if parent == current:
                return NOT_A_REPOSITORY
            here = os.stat(parent)
            if here.st_dev != device:
                return None
            current = parent
    except (OSError, ValueError):
        return None


def _safe_ref(name: str) -> bool:
    parts = name.split("/")
    return (name.startswith(_HEADS) and len(name) > len(_HEADS) and "\\" not in name and "\x00" not in name
            and not name.endswith((".lock", "/")) and all(p and not p.startswith(".") for p in parts))


def _packed(common: str, refname: str) -> str | None:
    """The object id of ``refname`` in ``packed-refs`` (``None``: not there, or no such file)."""
    try:
        data = _read(os.path.join(common, "packed-refs"), 64 << 20).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    for line in data.splitlines():
        oid, _, name = line.partition(" ")
        if name == refname and _OID.fullmatch(oid):
            return oid
    return None


def read_head(repo: Repository, head: bytes | None = None) -> tuple[bool, str | None, str | None, bool] | None:
    """``(detached, branch, object id, unborn)`` of ``repo``'s HEAD (``head``: its bytes if already read), or
    ``None`` when libgit2 must read it (module doc). Raises ``OSError`` from the reads."""
    text = (_read(os.path.join(repo.gitdir, "HEAD")) if head is None else head).decode("utf-8", "replace")
    if _OID.fullmatch(text.strip()):
        return True, None, text.strip(), False
    if not text.startswith("ref: ") or not text.endswith("\n") or text.count("\n") != 1:
        return None
    refname = text[len("ref: "):].strip()
    if not _safe_ref(refname):
        return None
    try:
        loose = _read(os.path.join(repo.common, *refname.split("/"))).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        loose = None
    except (IsADirectoryError, NotADirectoryError):
        return None
    if loose is not None:
        return (False, refname[len(_HEADS):], loose, False) if _OID.fullmatch(loose) else None
    oid = _packed(repo.common, refname)
    return False, refname[len(_HEADS):], oid, oid is None
