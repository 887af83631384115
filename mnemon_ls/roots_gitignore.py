"""The ``.gitignore`` of a storage root inside a git working tree, and what ``doctor`` says about git there.

Owns: :data:`ROOT_GITIGNORE` and its writing when a write first creates a root or one of its areas
(:func:`arm_root_creation`, :func:`write_root_gitignore`; DESIGN.md section 4: resolving never writes, the
first write does), and :func:`diagnose_git` (a root tracked by, or not ignored by, the repository around it).
Where a root is lives in :mod:`mnemon_ls.roots`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import fsio
from .roots import ROOT_AREAS

if TYPE_CHECKING:
    from .findings import Finding
    from .roots import RootResolution


#: The ``.gitignore`` written at the top of a root created inside a git working tree (ignore everything,
#: as virtualenvs and tool caches do).
ROOT_GITIGNORE = b"# Created by mnemon-ls: this storage root is private memory, not source.\n*\n"


def arm_root_creation(resolution: RootResolution) -> None:
    """Make the first write that creates one of ``resolution``'s roots also write its ``.gitignore``.

    Registers :func:`write_root_gitignore` with :func:`mnemon_ls.fsio.on_directory_created` for
    ``root`` and ``user_root``, and for each of their :data:`ROOT_AREAS` the same unless the root's own
    ``.gitignore`` (ours) already covers it; nothing is written now (invariant 7).
    """
    for root in {resolution.root, resolution.user_root}:
        fsio.on_directory_created(root, write_root_gitignore)
        for area in ROOT_AREAS:  # a root that already existed (a folder of the repository) was not ignored
            fsio.on_directory_created(root / area, _write_area_gitignore)


def _write_area_gitignore(area: Path) -> bool:
    """:func:`write_root_gitignore` for an area (``runtime/``, ``data/``...) just created in a root that has no
    ``.gitignore`` of ours: a root that existed before (a folder of the repository given as ``dataDir``) is not
    ignored as a whole, so each area mnemon-ls creates in it is. ``True`` when it wrote the file."""
    try:
        with open(area.parent / ".gitignore", "rb") as ours:
            if ours.read(len(ROOT_GITIGNORE) + 1) == ROOT_GITIGNORE:
                return False  # the root is ignored as a whole
    except OSError:
        pass
    return write_root_gitignore(area)



def write_root_gitignore(root: Path, body: bytes = ROOT_GITIGNORE) -> bool:
    """Write ``root/.gitignore`` (``body``, default :data:`ROOT_GITIGNORE`; mode 0600) when ``root`` lies
    inside a git working tree and has no ``.gitignore``; an existing one is never overwritten or read.
    (A directory meant to be partly committed, such as a ``.dsh/`` whose ``shared.jsonl`` is shared,
    passes its own ``body``, e.g. ``b"*\n!shared.jsonl\n"``, with :func:`functools.partial`.)

    Returns ``True`` when it wrote the file. Raises :class:`OSError` from the filesystem after
    removing the partial file and the still-empty root, so the write that created the root fails and
    its retry creates both again.
    """
    from . import gitstate  # local import: pygit2 is only needed when a root is created

    if gitstate.working_tree_containing(root) is None:
        return False
    try:
        fd = os.open(root / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     fsio.FILE_MODE)
    except FileExistsError:
        return False
    try:
        try:
            os.write(fd, body)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        # Leave no root without its .gitignore: the retried write creates both again.
        with contextlib.suppress(OSError):
            os.unlink(root / ".gitignore")
            os.rmdir(root)
        raise
    return True


def diagnose_git(root: Path) -> list["Finding"]:
    """``doctor`` findings for a storage root inside a git working tree (read-only; pygit2 index).

    A warning when files under ``root`` are in the git index (tracked: memory one commit away from
    being shared), or when nothing makes git ignore the root; ``ok`` when it is ignored; nothing when
    the root does not exist or is outside every working tree.
    """
    from . import gitstate
    from .findings import Finding

    if not root.is_dir():
        return []
    top = gitstate.working_tree_containing(root)
    if top is None:
        return []
    relative = os.path.relpath(os.path.realpath(root), top)
    tracked = gitstate.tracked_files_under(root)
    if tracked:
        shown = ", ".join(tracked[:3]) + (f" and {len(tracked) - 3} more" if len(tracked) > 3 else "")
        return [Finding("warning", str(root),
                        f"{len(tracked)} file(s) under this storage root are tracked by the git repository {top} "
                        f"({shown}); memory is private and would be pushed with the repository",
                        f"git -C {top} rm -r --cached -- {relative} (the files stay on disk), and keep "
                        f"{root / '.gitignore'} containing the line *")]
    if not gitstate.ignored_by_git(root / "runtime" / "memories.json"):
        return [Finding("warning", str(root),
                        f"lies inside the git working tree {top} and is not ignored: `git add .` would commit it",
                        f"create {root / '.gitignore'} containing the line *")]
    return [Finding("ok", str(root), f"inside the git working tree {top}; ignored by git")]
