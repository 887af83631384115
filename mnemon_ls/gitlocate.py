"""Finding and opening the repository that contains a directory, for :mod:`mnemon_ls.gitstate`.

The discovery half of the branch probe: the real directory a probe starts from (:func:`_start`), the
repository containing it opened with pygit2/libgit2 (:func:`_locate`, imported on use: most probes are
answered from the files by :mod:`mnemon_ls.gitfiles`), and the diagnosis of a ``.git`` entry libgit2 skipped
(:func:`_diagnose`: a workspace whose own repository is broken is reported as such, not attributed to an
enclosing repository). Problems travel as :class:`_Problem` carrying a reason string (``"not a git
repository"``, ``"no workspace path"``, ``"corrupt repository: <detail>"``, ``"permission denied:
<detail>"``). Reads only; never writes, never runs ``git``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import gitfiles, realdirs

if TYPE_CHECKING:
    import pygit2

REASON_NOT_A_REPO = "not a git repository"
REASON_NO_PATH = "no workspace path"
_CORRUPT = "corrupt repository: "
_PERMISSION = "permission denied: "

# pygit2's init_file_backend replaces libgit2's GIT_ENOTFOUND error with this.
_NOT_FOUND_PREFIX = "Repository not found at "


def _repo_errors() -> tuple[type[BaseException], ...]:
    """Exceptions pygit2/libgit2 and the file reads below raise for repository problems (GitError covers
    NotFoundError and InvalidSpecError); imports pygit2."""
    import pygit2

    return (pygit2.GitError, OSError, KeyError, ValueError)


class _Problem(Exception):
    """Internal: carries a ready-made reason string out of helpers."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _message(exc: BaseException) -> str:
    """An exception's message on one line (KeyError's str() adds quotes)."""
    if exc.args and isinstance(exc.args[0], str):
        text = exc.args[0]
    else:
        text = str(exc)
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        text = f"{exc.filename}: {exc.strerror}"
    text = " ".join(text.split())
    return text or type(exc).__name__


def _classify(exc: BaseException) -> str:
    """Map an exception from libgit2 or a file read to a reason string."""
    text = _message(exc)
    if isinstance(exc, PermissionError) or "Permission denied" in text or "not owned by current user" in text:
        return _PERMISSION + text
    return _CORRUPT + text


def _strip_sep(path: str) -> str:
    """libgit2 returns directories with a trailing slash; drop it."""
    stripped = path.rstrip(os.sep)
    return stripped or os.sep


def _read_text(path: str) -> str | None:
    """Small state file's content, or ``None`` when it does not exist.

    PermissionError and other OSErrors propagate (they become reasons).
    """
    try:
        data = gitfiles.read_small(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return data.decode("utf-8", "replace")


def _resolve_gitfile(dotgit: str) -> str:
    """Target directory named by a ``.git`` file (``gitdir: <path>``)."""
    content = _read_text(dotgit) or ""
    first = content.splitlines()[0] if content else ""
    if not first.startswith("gitdir: "):
        raise _Problem(_CORRUPT + f"malformed .git file {dotgit}")
    target = first[len("gitdir: ") :].strip()
    return os.path.normpath(os.path.join(os.path.dirname(dotgit), target))


def _check_git_dir(gitdir: str) -> str | None:
    """Why ``gitdir`` is not a usable git dir, or ``None`` if it looks fine.

    Mirrors libgit2's ``is_valid_repository_path``: a ``HEAD`` file plus
    ``objects/`` and ``refs/`` directories (in the common dir for a linked
    worktree's git dir).
    """
    try:
        if not os.path.isdir(gitdir):
            return _CORRUPT + f"git dir {gitdir} does not exist"
        head = os.path.join(gitdir, "HEAD")
        try:
            st = os.stat(head)
        except FileNotFoundError:
            return _CORRUPT + f"{gitdir} has no HEAD"
        if not stat.S_ISREG(st.st_mode):
            return _CORRUPT + f"{head} is not a file"
        common = _common_dir(gitdir)
        for sub in ("objects", "refs"):
            if not os.path.isdir(os.path.join(common, sub)):
                return _CORRUPT + f"{common} has no {sub} directory"
        # Readability: a HEAD we cannot open is a permission problem.
        with open(head, "rb"):
            pass
    except PermissionError as exc:
        return _PERMISSION + _message(exc)
    except OSError as exc:
        return _CORRUPT + _message(exc)
    return None


def _check_dotgit(dotgit: str) -> tuple[bool, str | None]:
    """Inspect a ``.git`` entry found while walking up.

    Returns ``(exists, problem)``: ``exists`` is False when there is no such
    entry; ``problem`` is a reason string when it exists but is unusable.
    """
    try:
        lst = os.lstat(dotgit)
    except (FileNotFoundError, NotADirectoryError):
        return False, None
    except PermissionError as exc:
        return True, _PERMISSION + _message(exc)
    except OSError as exc:
        return True, _CORRUPT + _message(exc)
    try:
        st = os.stat(dotgit) if stat.S_ISLNK(lst.st_mode) else lst
    except FileNotFoundError:
        return True, _CORRUPT + f"{dotgit} is a dangling symlink"
    except OSError as exc:
        return True, _classify(exc)
    if stat.S_ISDIR(st.st_mode):
        return True, _check_git_dir(dotgit)
    if stat.S_ISREG(st.st_mode):
        try:
            target = _resolve_gitfile(dotgit)
        except _Problem as problem:
            return True, problem.reason
        except OSError as exc:
            return True, _classify(exc)
        if not os.path.isdir(target):
            return True, _CORRUPT + f"{dotgit} points to missing git dir {target}"
        return True, _check_git_dir(target)
    return True, _CORRUPT + f"{dotgit} is neither a directory nor a file"


def _diagnose(start: str, stops: tuple[str, ...]) -> str | None:
    """Walk up from ``start`` looking at ``.git`` entries libgit2 skipped.

    libgit2 (like git for a broken ``.git`` directory) silently continues
    upward past a ``.git`` it cannot use. That would attribute a workspace
    whose own repository is broken to some enclosing repository, or report a
    broken repository as "not a git repository". The walk stops at any of
    ``stops`` (the discovered repository's top level / git dir), at the first
    usable ``.git``, or at the filesystem root.
    """
    current = start
    while True:
        if current in stops:
            return None
        exists, problem = _check_dotgit(os.path.join(current, ".git"))
        if problem is not None:
            return problem
        if exists:
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _common_dir(gitdir: str) -> str:
    """The common dir for ``gitdir``, read from its ``commondir`` file as git does."""
    content = _read_text(os.path.join(gitdir, "commondir"))
    if content is None or not content.strip():
        return gitdir
    return os.path.normpath(os.path.join(gitdir, content.strip()))


@dataclass(slots=True)
class _Located:
    start: str
    gitdir: str  # without trailing slash
    repo: pygit2.Repository


def _start(path: str | os.PathLike[str] | bytes | None) -> str:
    """The real directory a probe of ``path`` starts from (a file's directory); raises ``_Problem``."""
    if path is None:
        raise _Problem(REASON_NO_PATH)
    raw = os.fsdecode(os.fspath(path))
    if raw == "":
        raise _Problem(REASON_NO_PATH)
    known = realdirs.real_directory(raw)  # a directory (every probe of a workspace): realpath in 3 system calls
    if known is not None:
        return known
    try:
        start = os.path.realpath(raw)
        st = os.stat(start)
    except (FileNotFoundError, NotADirectoryError):
        raise _Problem(REASON_NOT_A_REPO) from None
    except PermissionError as exc:
        raise _Problem(_PERMISSION + _message(exc)) from None
    except (OSError, ValueError):  # ELOOP, ENAMETOOLONG, embedded NUL ...
        raise _Problem(REASON_NOT_A_REPO) from None
    if not stat.S_ISDIR(st.st_mode):
        start = os.path.dirname(start)
    return start


def _locate(start: str) -> _Located:
    """Find and open with libgit2 the repository containing the real directory ``start``; raises ``_Problem``."""
    import pygit2

    # Not pygit2.discover_repository(): in pygit2 1.21 it returns None without
    # taking a reference when nothing is found, so every miss decrements
    # None's refcount and CPython 3.11 eventually aborts with "none_dealloc".
    # Repository(path) searches upward the same way (git_repository_open_ext)
    # and reports a miss as a GitError instead.
    try:
        repo = pygit2.Repository(start)
    except _repo_errors() as exc:
        if isinstance(exc, pygit2.GitError) and _message(exc).startswith(_NOT_FOUND_PREFIX):
            raise _Problem(_diagnose(start, ()) or REASON_NOT_A_REPO) from None
        raise _Problem(_classify(exc)) from None
    gitdir = _strip_sep(repo.path)
    stops = (gitdir,) if repo.workdir is None else (gitdir, _strip_sep(repo.workdir))
    if start not in stops:
        problem = _diagnose(start, stops)
        if problem is not None:
            raise _Problem(problem)
    return _Located(start, gitdir, repo)
