"""Where git says a cited file went: the renames of the working tree's repository, so a citation whose file is
not at its path any more reads ``renamed`` (with ``renamedTo``) instead of ``gone`` (:mod:`.freshness`).

The renames git reports, found with its own similarity detection (libgit2's ``find_similar``, the rule of
``git diff -M``: 50 % alike by default):

- staged (``git mv a b``, or ``a`` deleted and ``b`` added to the index): HEAD's tree against the index, what
  ``git status`` shows as ``renamed: a -> b``;
- committed: each of the last :data:`HISTORY` commits on HEAD's first-parent line against its first parent
  (``git log -M --diff-filter=R``), newest first, so a file renamed twice (``a -> b``, later ``b -> c``)
  leads to ``c``.

The walk is bounded (:data:`BUDGET`, :class:`Budget`): it is on the wake path when a cited file is missing, and
on a large history it took over a second (``bench/rename_table.py``, ``bench/results/rename_table.md``). After the
first 10 commits it stops when the time budget (100 ms) or the commit budget has run out; the table is then *cut
short* after the commits searched, and a citation whose file is missing and found in no rename of it reads
``gone`` with ``renameSearchCut`` (those commits: :func:`lookup`), which the wake words as ``gone (git's renames
searched in the last N commits only)``.

The table is kept per repository with HEAD's commit, the index file's size and mtime (ns) and the budget: a
commit, a checkout or a staged change builds it again. libgit2 (pygit2) is imported only when a cited file is missing.
A rename whose new path is no regular file in the working tree now, or lies outside the workspace, is not
reported. Never raises: a workspace that is no repository, or that libgit2 cannot read, has no renames.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..fsread import is_within

#: Commits of HEAD's first-parent history searched for renames.
HISTORY = 200
#: Renames followed from one path at most (``a -> b -> c ...``).
_CHAIN = 16


@dataclass(frozen=True)
class Budget:
    """How far one build of the table may go: ``seconds`` of wall time and ``commits`` of history (at most
    :data:`HISTORY`). The first ``always`` commits are searched whatever the time (so a short history, or a rename
    in the last few commits, gives one answer however loaded the machine is: about 20 ms on the bench's large
    repository); past them the walk stops, *cut short*, when either budget has run out."""

    seconds: float = 0.1
    commits: int = HISTORY
    always: int = 10


#: The budget of every build (module doc).
BUDGET = Budget()

_lock = threading.Lock()
#: repository working tree -> (signature, {old repository-relative path: new one}, commits searched when cut short)
_tables: dict[str, tuple[tuple[object, ...], dict[str, str], int | None]] = {}


def _table(repo: object, workdir: str) -> tuple[dict[str, str], int | None]:
    """``({old repository-relative path: new one}, cut)`` of ``repo`` (module doc): ``cut`` is the number of
    commits searched when :data:`BUDGET` cut the walk short, else ``None``."""
    import pygit2

    try:
        head = repo.head.target  # type: ignore[attr-defined]
    except (pygit2.GitError, KeyError):
        head = None
    index_path = os.path.join(repo.path, "index")  # type: ignore[attr-defined]
    try:
        info = os.stat(index_path)
        index_sig: tuple[int, int] | None = (info.st_size, info.st_mtime_ns)
    except OSError:
        index_sig = None
    budget = BUDGET
    signature = (str(head), index_sig, budget)
    with _lock:
        kept = _tables.get(workdir)
    if kept is not None and kept[0] == signature:
        return kept[1], kept[2]
    found: dict[str, str] = {}
    cut: int | None = None
    deadline = time.monotonic() + budget.seconds

    def collect(diff: object) -> None:
        diff.find_similar()  # type: ignore[attr-defined]
        for delta in diff.deltas:  # type: ignore[attr-defined]
            if delta.status == pygit2.enums.DeltaStatus.RENAMED:
                found.setdefault(delta.old_file.path, delta.new_file.path)

    if head is not None:
        commit = repo[head]  # type: ignore[index]
        collect(repo.index.diff_to_tree(commit.tree))  # type: ignore[attr-defined]  # staged: newest of all
        for searched in range(HISTORY):
            if not commit.parents:
                break
            if searched >= budget.commits or (searched >= budget.always and time.monotonic() > deadline):
                cut = searched
                break
            parent = commit.parents[0]
            collect(parent.tree.diff_to_tree(commit.tree))
            commit = parent
    with _lock:
        if len(_tables) >= 64:
            _tables.clear()
        _tables[workdir] = (signature, found, cut)
    return found, cut


def renamed_to(workspace: Path, path: str) -> str | None:
    """The workspace-relative path (POSIX) that git says the file at workspace-relative ``path`` was renamed to
    (module doc), when that file is a regular file in the working tree now; else ``None``."""
    return lookup(workspace, path)[0]


def lookup(workspace: Path, path: str) -> tuple[str | None, int | None]:
    """``(renamed_to, cut)``: :func:`renamed_to` of ``path`` and, when the table it was read from was cut short
    by :data:`BUDGET`, the number of commits searched (``None``: the whole :data:`HISTORY`, or no repository)."""
    try:
        import pygit2

        repo = pygit2.Repository(str(workspace))
        workdir = repo.workdir
        if workdir is None:
            return None
        top = os.path.realpath(workdir)
        base = os.path.realpath(workspace)
        prefix = os.path.relpath(base, top).replace(os.sep, "/")
        if prefix.startswith(".."):
            return None
        table, cut = _table(repo, top)
    except Exception:  # no repository, one libgit2 cannot read: nothing is known of renames
        return None, None
    start = path if prefix == "." else f"{prefix}/{path}"
    current, seen = start, {start}
    for _ in range(_CHAIN):
        nxt = table.get(current)
        if nxt is None or nxt in seen:
            break
        seen.add(nxt)
        current = nxt
    if current == start:
        return None, cut
    relative = current if prefix == "." else current[len(prefix) + 1:] if current.startswith(prefix + "/") else None
    if relative is None:
        return None, cut
    full = os.path.join(base, *relative.split("/"))
    real = os.path.realpath(full)
    if not os.path.isfile(full) or real == base or not is_within(real, base):
        return None, cut
    return relative, cut


def clear() -> None:
    """Forget every repository's table (tests; a long-lived host needs none: the signature decides)."""
    with _lock:
        _tables.clear()
