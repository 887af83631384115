"""Storage root safety (DESIGN.md invariant 10): no store access follows a link a repository could commit.

Owns: where a root may be a symbolic link (:func:`trusted_anchor`), the confinement of every store file
operation to the roots (:func:`confine_roots`, through :func:`mnemon_ls.fsio.confine`), the read-only scan for
links in a root and its layout (:func:`storage_root_problems`, :func:`check_storage_root`), and the ``doctor``
findings about where the roots live (:func:`storage_findings`). Where a root is lives in :mod:`mnemon_ls.roots`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import fsio
from .errors import StorageUnsafe
from .roots import ROOT_AREAS

if TYPE_CHECKING:
    from .findings import Finding
    from .roots import RootResolution


#: A native space's vector side index, ``data/<id>/.mnemon-ls-vectors.db`` (derived; written by
#: :mod:`mnemon_ls.semantic.vectors`, which takes the name from here: the link scan below knows it without
#: importing the semantic package).
VECTOR_FILE = ".mnemon-ls-vectors.db"


def confine_roots(resolution: RootResolution) -> None:
    """Register ``resolution``'s roots with :func:`mnemon_ls.fsio.confine` from their trusted anchors, so that
    no read of a store file and no write follows a link a repository could commit (invariant 10). In memory
    only."""
    fsio.confine(resolution.root, trusted_anchor(resolution.root, resolution.scope, resolution.workspace))
    if resolution.split_user:  # runtimeUserScope=global: the global root's rule
        fsio.confine(resolution.user_root, trusted_anchor(resolution.user_root, "global", resolution.workspace))



#: How deep below a storage root :func:`storage_root_problems` looks for links (``data/<id>/mnemon.db``).
_SCAN_DEPTH = 3


def trusted_anchor(root: Path, scope: str, workspace: Path | None) -> Path:
    """The deepest directory on the way to ``root`` that may be a symbolic link (read-only, pure).

    Rule (DESIGN.md invariant 10): a place the user configured outside any repository may be a link
    (``~/.mnemon`` moved to another disk); nothing a repository could commit may be:

    ==========  ==========================================================================================
    global      the root itself (``$MNEMON_DATA_DIR`` / ``~/.mnemon`` come from the environment, even
                when the workspace is the home directory); also for the ``runtimeUserScope=global`` root
    workspaces  the data directory ``<base>``: ``workspaces/<hash>`` below it must be real
    custom      the canonical workspace when ``dataDir`` lies inside it (a repository's editor settings
                could name it), else the root itself
    workspace   the canonical workspace (already free of links): ``.mnemon`` must be real
    ==========  ==========================================================================================
    """
    if scope == "global":
        return root
    if scope == "workspaces":
        return root.parent.parent
    if workspace is not None and (root == workspace or workspace in root.parents):
        return workspace
    return root


def storage_root_problems(resolution: RootResolution) -> list[StorageUnsafe]:
    """Every symbolic link that makes the roots of ``resolution`` unsafe, without writing (lstat/scandir).

    Looks at each directory between :func:`trusted_anchor` and the root, the root, and its layout up to
    :data:`_SCAN_DEPTH` levels below (``runtime/``, ``documents/active/``, ``data/<id>/mnemon.db``,
    ``state/`` ...; for a split ``user_root`` only its ``runtime/``). Returns
    :class:`~mnemon_ls.errors.StorageUnsafe` errors naming each link and where it points (empty when
    safe). Missing directories are fine.
    """
    problems: list[StorageUnsafe] = []
    targets = [(resolution.root, resolution.scope, ROOT_AREAS)]
    if resolution.split_user:
        targets.append((resolution.user_root, "global", ("runtime",)))
    for root, scope, areas in targets:
        anchor = trusted_anchor(root, scope, resolution.workspace)
        probe, reached = anchor, True
        for part in root.relative_to(anchor).parts:
            probe = probe / part
            if os.path.islink(probe):
                rule = ("the storage root must not be a symbolic link" if probe == root
                        else "a directory on the way to the storage root must not be a symbolic link")
                problems.append(_unsafe(probe, rule, root))
                reached = False
                break
            if not os.path.isdir(probe):
                reached = False
                break
        if not reached:
            continue
        for area in areas:
            _scan_links(root / area, 1, root, problems)
    return problems


def check_storage_root(resolution: RootResolution) -> None:
    """Raise the first of :func:`storage_root_problems` (:class:`~mnemon_ls.errors.StorageUnsafe`,
    ``data.file`` the link, ``data.rule`` the rule); return when the roots are safe. Never writes."""
    problems = storage_root_problems(resolution)
    if problems:
        raise problems[0]


def storage_findings(resolution: RootResolution) -> list["Finding"]:
    """Doctor findings about where the roots live (read-only): one ``problem`` per link of
    :func:`storage_root_problems`, with the way out; a ``warning`` when the file system holding a root
    is full or read-only (:func:`mnemon_ls.fsio.writes_refused`); an ``ok`` note when a root the user
    configured is itself a link (allowed, see :func:`trusted_anchor`)."""
    from .findings import Finding

    findings = [Finding("problem", str(p.data["file"]),
                        f"{p.data['rule']}; a repository (or anyone who can write there) could make it "
                        "redirect memory writes outside the storage root, so every read and write of this "
                        "root is refused (storage-unsafe)",
                        f"replace the link with a real directory or file (e.g. `rm {p.data['file']}` after "
                        "checking what it points to), or choose another storageScope")
                for p in storage_root_problems(resolution)]
    from .fsio import writes_refused

    roots = {resolution.root: resolution.scope}
    roots.setdefault(resolution.user_root, "global")
    for root, scope in roots.items():
        refused = writes_refused(root)
        if refused == "full":
            findings.append(Finding("warning", str(root), "the file system holding this storage root is full: "
                                    "reads and the wake keep working, every write fails (storage-full)",
                                    "free some space on that file system"))
        elif refused == "read-only":
            findings.append(Finding("warning", str(root), "the file system holding this storage root is mounted "
                                    "read-only: reads and the wake keep working, every write fails (storage-readonly)",
                                    "remount it read-write or choose another storageScope / dataDir"))
        if os.path.islink(root) and trusted_anchor(root, scope, resolution.workspace) == root:
            findings.append(Finding("ok", str(root), f"the storage root is a symbolic link to "
                                                     f"{os.path.realpath(root)}; allowed because it was configured "
                                                     "outside any repository (links inside it are refused)"))
    return findings


def _unsafe(path: Path, rule: str, root: Path) -> StorageUnsafe:
    try:
        points = repr(os.readlink(path))
    except OSError:
        points = "an unreadable target"
    return StorageUnsafe(str(path), f"{rule} (it points to {points})", root=str(root))


def _scan_links(path: Path, depth: int, root: Path, problems: list[StorageUnsafe]) -> None:
    """Append a problem for ``path`` when it is a link, else for each link below it (``depth`` of
    ``path`` under ``root``; stops at :data:`_SCAN_DEPTH`). The vector side index of a native space
    (``data/<id>/.mnemon-ls-vectors.db``, derived) is exempt: when it is a link the semantic side leaves
    it alone and never writes through it (recall stays keyword-only with a notice and a doctor finding,
    :func:`mnemon_ls.semantic.engine.unusable_reason`), so it must not block the whole root."""
    if depth == 3 and path.parent.parent == root / "data" and path.name == VECTOR_FILE:
        return
    if os.path.islink(path):
        kind = "a directory" if os.path.isdir(path) else "a file"
        problems.append(_unsafe(path, f"{kind} inside the storage root must not be a symbolic link", root))
        return
    if depth >= _SCAN_DEPTH or not os.path.isdir(path):
        return
    try:
        names = sorted(entry.name for entry in os.scandir(path))
    except OSError:
        return
    for name in names:
        _scan_links(path / name, depth + 1, root, problems)
