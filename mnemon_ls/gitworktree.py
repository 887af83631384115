"""Working-tree questions about a path: which working tree holds it, the main one, what git tracks or ignores.

:func:`main_worktree_root` (the main working tree of a linked worktree), :func:`working_tree_containing`,
:func:`tracked_files_under` and :func:`ignored_by_git` (``roots`` and ``doctor`` ask them about a storage
root). The common layouts are answered from the files (:mod:`mnemon_ls.gitfiles`), the others through
pygit2/libgit2 (:mod:`mnemon_ls.gitlocate`). Never raise for repository problems; never write. Re-exported by
:mod:`mnemon_ls.gitstate`.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import gitfiles
from .gitlocate import _common_dir, _locate, _Problem, _repo_errors, _start, _strip_sep


def main_worktree_root(path: str | os.PathLike[str] | None) -> Path | None:
    """Top level of the repository's main working tree.

    For a path in a linked worktree this is the working tree of the main
    repository (the one whose ``.git`` is the common dir); for a path in the
    main working tree it is that working tree's own top level. ``None`` when
    ``path`` is not in a usable repository, is in a bare repository, or is in a
    linked worktree of a bare repository (there is no main working tree). The
    main repository's ``core.worktree`` is honoured (through libgit2). Never
    raises for repository problems and never writes.
    """
    try:
        start = _start(path)
    except _Problem:
        return None
    files = gitfiles.find(start)
    if files is gitfiles.NOT_A_REPOSITORY:
        return None
    if files is not None:
        if files.common == files.gitdir:
            return Path(files.workdir)
        if os.path.basename(files.common) == ".git":  # its config is plain (gitfiles): not bare, no core.worktree
            return Path(os.path.dirname(files.common))
    import pygit2
    from pygit2.enums import RepositoryOpenFlag

    try:
        located = _locate(start)
        common = _common_dir(located.gitdir)
        if common == located.gitdir:
            repo = located.repo
        else:
            repo = pygit2.Repository(common, RepositoryOpenFlag.NO_SEARCH)
        if repo.is_bare or repo.workdir is None:
            return None
        return Path(_strip_sep(repo.workdir))
    except (_Problem, *_repo_errors()):
        return None


def working_tree_containing(path: str | os.PathLike[str]) -> Path | None:
    """Top level of the git working tree that contains ``path``, or ``None``.

    ``path`` need not exist: the nearest existing ancestor is probed (a storage root about to be
    created). ``None`` when there is no repository, the repository is bare, or ``path`` lies inside
    the git dir rather than the working tree. Never raises for repository problems; never writes.
    """
    probe = os.path.realpath(os.fspath(path))
    while not os.path.isdir(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    files = gitfiles.find(probe)
    if files is gitfiles.NOT_A_REPOSITORY:
        return None
    if files is not None:
        top, gitdir = files.workdir, files.gitdir
    else:
        try:
            located = _locate(probe)
        except _Problem:
            return None
        workdir = located.repo.workdir
        if workdir is None:
            return None
        top, gitdir = _strip_sep(workdir), located.gitdir
    target = os.path.realpath(os.fspath(path))
    if not (target == top or target.startswith(top.rstrip(os.sep) + os.sep)):
        return None
    if target == gitdir or target.startswith(gitdir + os.sep):
        return None
    return Path(top)


def tracked_files_under(path: str | os.PathLike[str]) -> list[str]:
    """Paths (relative to the working tree top, ``/``-separated) of files in the git index that lie
    under ``path``; ``[]`` when ``path`` is not inside a working tree. Reads the index only (pygit2);
    never writes. Used by ``doctor`` to warn about a storage root that is committed."""
    top = working_tree_containing(path)
    if top is None:
        return []
    relative = os.path.relpath(os.path.realpath(os.fspath(path)), top).replace(os.sep, "/")
    prefix = "" if relative == "." else relative.rstrip("/") + "/"
    import pygit2

    try:
        index = pygit2.Repository(str(top)).index
        return [entry.path for entry in index if entry.path.startswith(prefix)]
    except _repo_errors():
        return []


def ignored_by_git(path: str | os.PathLike[str]) -> bool | None:
    """Whether git ignores ``path`` (need not exist) by the ``.gitignore`` files and excludes of the
    working tree containing it; ``None`` when ``path`` is not inside a working tree. Never writes."""
    top = working_tree_containing(path)
    if top is None:
        return None
    relative = os.path.relpath(os.path.realpath(os.fspath(path)), top).replace(os.sep, "/")
    import pygit2

    try:
        return bool(pygit2.Repository(str(top)).path_is_ignored(relative))
    except _repo_errors():
        return None
