"""Storage scope -> storage root path, the canonical workspace path, and the ``runtimeUserScope`` split.

Scopes follow ``shared/reference/dsh-mnemon.md`` section 2.1:

============  ===================================================================================
global        ``$MNEMON_DATA_DIR`` (trimmed, when non-empty) else ``~/.mnemon``
workspace     ``<workspace>/.mnemon``
workspaces    (default) ``<base>/workspaces/<sha256 hex of the canonical workspace path>``; base =
              ``dataDir`` when set, else the global root. With no workspace: the global root.
custom        ``dataDir``
============  ===================================================================================

"No workspace" means the caller has no folder: the language server has none when the client opened
no workspace folder; the CLI has none when ``--workspace`` is not given and no directory from the
current one upward holds a ``.git`` (directory or file) or a ``.mnemon`` (see :func:`find_workspace`,
the rule the Neovim plugin uses to pick its root).

With ``worktreeSharing=shared`` (default) a workspace inside a linked git worktree is first mapped to
the same relative place in the repository's main working tree, so every worktree of one repository
shares one root (branch scope keeps them apart). With ``runtimeUserScope=global`` Runtime reads and
writes ``target=user`` in the global root while everything else stays in the selected root.

Invariant 7 (DESIGN.md): resolving never creates, opens for writing or changes a file or directory.
A root inside a git working tree gets a ``.gitignore`` of ``*`` when a write first creates it
(:func:`mnemon_ls.roots_gitignore.arm_root_creation`, DESIGN.md section 4); an existing ``.gitignore`` is
never overwritten.

This module owns where a root is (resolution); the refusals of a root in the way, too long, or inside the
repository are :mod:`mnemon_ls.roots_checks`, the ``.gitignore`` :mod:`mnemon_ls.roots_gitignore`, the link
checks of invariant 10 :mod:`mnemon_ls.roots_safety`.
"""

from __future__ import annotations

import errno
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .errors import InvalidInput, NotFound, echo_repr
from .roots_checks import check_root_path, refuse_root_in_repository, refuse_too_long
from .settings import Settings, own_home_path

ROOT_AREAS = ("runtime", "documents", "data", "state")



@dataclass(frozen=True, slots=True)
class RootResolution:
    """Where one workspace's memory lives.

    ``root`` is the selected storage root, ``user_root`` the root whose ``runtime/`` holds target=user
    (equal to ``root`` unless ``runtimeUserScope=global``), ``workspace`` the canonical workspace path
    (``None`` when resolved without one), ``shared_from`` the linked worktree that was mapped to its main
    working tree (``None`` when no mapping happened), ``scope`` the storage scope used.
    """

    root: Path
    user_root: Path
    scope: str
    workspace: Path | None
    shared_from: Path | None = None

    @property
    def split_user(self) -> bool:
        """True when USER.md lives in another root than MEMORY.md."""
        return self.user_root != self.root


def canonical_workspace_path(path: str | os.PathLike[str]) -> Path:
    """The canonical form of a workspace path (reference section 2.1).

    The path must be absolute (or start with ``~`` / ``~/``: your own home) and free of NUL. The longest
    existing prefix is resolved with ``realpath`` (symlinks followed) and the not-yet-existing rest re-appended
    unchanged. Nothing is created. Raises :class:`InvalidInput` (field ``workspace``) for a relative path, a NUL,
    ``~name`` (another user's home, :func:`mnemon_ls.settings.own_home_path`: every surface's workspace comes
    through here), a path too long for the file system, or an existing prefix that is not a directory while more
    segments follow (ENOTDIR) or a symbolic link loop there (ELOOP).
    """
    text = os.fspath(path)
    if "\x00" in text:
        raise InvalidInput("workspace", "must not contain NUL")
    text = own_home_path(text, "workspace")  # ~ and ~/ only: ~name would read another user's home
    if not os.path.isabs(text):
        raise InvalidInput("workspace", f"must be an absolute path (got {echo_repr(text)})")
    refuse_too_long(text, "workspace")
    normalized = os.path.normpath(text)
    head, rest = normalized, []
    while True:
        if os.path.lexists(head):
            break
        parent, name = os.path.split(head)
        if parent == head:
            break
        rest.append(name)
        head = parent
    real = os.path.realpath(head)
    if rest and not os.path.isdir(real):
        if _is_link_loop(real):
            raise InvalidInput("workspace", f"{real} is a symbolic link loop (ELOOP), so {normalized} cannot exist "
                                            "under it")
        raise InvalidInput("workspace", f"{real} is not a directory, so {normalized} cannot exist under it")
    return Path(real, *reversed(rest)) if rest else Path(real)


def home_directory(variable: str, default_name: str, env: Mapping[str, str] | None = None, *,
                   absolute: bool = False) -> Path:
    """``$<variable>`` (trimmed, ``~`` or ``~/`` expanded, made absolute) or ``~/<default_name>``: the form of every
    data directory a tool on this machine shares (``MNEMON_DATA_DIR``, ``DSH_HOME``). With ``absolute`` the
    value must be an absolute path or start with ``~/`` (as the ``dataDir`` setting and ``--data-dir``): a
    relative one would move with the working directory. Raises :class:`InvalidInput` naming the variable when
    it holds a NUL, starts with ``~name`` (another user's home: :func:`mnemon_ls.settings.own_home_path`), or
    (``absolute``) is a relative path."""
    env = os.environ if env is None else env
    configured = (env.get(variable) or "").strip()
    if configured:
        if "\x00" in configured:
            raise InvalidInput(variable, "must not contain NUL")
        expanded = own_home_path(configured, variable)
        if absolute and not os.path.isabs(expanded):
            raise InvalidInput(variable, f"must be an absolute path or start with ~/ (got "
                                         f"{echo_repr(configured)})")
        return Path(os.path.abspath(expanded))
    return Path(os.path.expanduser("~")) / default_name


def global_root(env: Mapping[str, str] | None = None) -> Path:
    """The global storage root: ``$MNEMON_DATA_DIR`` (trimmed, ``~`` expanded, made absolute) or ``~/.mnemon``.
    Raises :class:`InvalidInput` naming ``MNEMON_DATA_DIR`` when it holds a NUL or a relative path
    (:func:`home_directory`)."""
    return home_directory("MNEMON_DATA_DIR", ".mnemon", env, absolute=True)


def global_env(settings: Settings, env: Mapping[str, str] | None = None) -> Mapping[str, str] | None:
    """``env`` as what the global scope owns reads it: with ``storageScope=global`` and a ``dataDir`` (that
    directory is the global root, :func:`resolve_root`) a copy of ``env`` (default ``os.environ``) whose
    ``MNEMON_DATA_DIR`` is the ``dataDir``, so the places found from the global root (the ``pack export`` folder,
    the ``user`` and ``session`` records unless ``DSH_HOME`` names theirs) lie under it too, not under the home
    directory; else ``env`` itself. Pure: reads nothing."""
    if settings.storage_scope == "global" and settings.data_dir:
        return {**(os.environ if env is None else env), "MNEMON_DATA_DIR": settings.data_dir}
    return env


def workspace_hash(canonical: Path) -> str:
    """The 64-character sha256 hex of the canonical workspace path's UTF-8 bytes (``workspaces`` scope id)."""
    return hashlib.sha256(os.fsencode(canonical)).hexdigest()


def resolve_root(
    workspace: str | os.PathLike[str] | None,
    settings: Settings,
    env: Mapping[str, str] | None = None,
    *,
    require_workspace: bool = True,
) -> RootResolution:
    """Resolve the storage root of ``workspace`` under ``settings``; never writes to disk.

    ``workspace`` may be ``None`` for the ``global``, ``custom`` and ``workspaces`` scopes (``workspaces``
    without a workspace resolves to the global root, reported as scope ``global``). A ``dataDir`` with the
    ``global`` scope is the global root of this resolution (the root, and USER.md's under ``runtimeUserScope``
    ``global``). With
    ``require_workspace`` (default) an existing directory is required. Raises :class:`NotFound`
    (workspace missing), :class:`InvalidInput` (field ``workspace``, ``dataDir`` or ``MNEMON_DATA_DIR``:
    not absolute, not a directory, or a file in the way of the root; a ``dataDir`` root that is the workspace
    itself or lies in its ``.git``).
    """
    canonical: Path | None = None
    shared_from: Path | None = None
    if workspace is not None:
        canonical = check_workspace(workspace) if require_workspace else canonical_workspace_path(workspace)
        # Only the workspace-derived scopes depend on the path, so only they pay for the git probe.
        if settings.worktree_sharing == "shared" and settings.storage_scope in ("workspace", "workspaces"):
            mapped = _main_worktree_equivalent(canonical)
            if mapped is not None and mapped != canonical:
                shared_from, canonical = canonical, mapped
    scope = settings.storage_scope
    if scope == "workspaces" and canonical is None:
        scope = "global"  # no workspace: the global root, as with the TypeScript plugin's default
    if scope == "global":  # the global root; a dataDir given with this scope is that root (not ignored)
        root = Path(settings.data_dir) if settings.data_dir else global_root(env)
        field = "dataDir" if settings.data_dir else "MNEMON_DATA_DIR"
    elif scope == "custom":
        assert settings.data_dir is not None  # enforced by load_settings
        root = Path(settings.data_dir)
        field = "dataDir"
    else:
        if canonical is None:
            raise InvalidInput("workspace", f"is required when storageScope is {scope}")
        if scope == "workspace":
            root = canonical / ".mnemon"
            field = "workspace"
        else:
            base = Path(settings.data_dir) if settings.data_dir else global_root(env)
            root = base / "workspaces" / workspace_hash(canonical)
            field = "dataDir" if settings.data_dir else "MNEMON_DATA_DIR"
    check_root_path(root, field)
    if canonical is not None and scope in ("global", "custom"):
        refuse_root_in_repository(root, canonical, field)
    user_root = root
    if settings.runtime_user_scope == "global" and not (scope == "global" and settings.data_dir):
        user_root = global_root(env)
        check_root_path(user_root, "MNEMON_DATA_DIR")
    return RootResolution(root=root, user_root=user_root, scope=scope, workspace=canonical, shared_from=shared_from)


def _is_link_loop(path: str | os.PathLike[str]) -> bool:
    """Whether following ``path`` fails with ELOOP (a symbolic link that leads back to itself)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def check_workspace(workspace: str | os.PathLike[str]) -> Path:
    """The canonical path of ``workspace`` (:func:`canonical_workspace_path`) when it is an existing directory.
    Raises :class:`NotFound` (field ``workspace``) for a missing one and :class:`InvalidInput` for a file or a
    symbolic link loop (ELOOP, which :meth:`Path.exists` reports as missing), and what
    :func:`canonical_workspace_path` raises. Reads only."""
    canonical = canonical_workspace_path(workspace)
    if not canonical.exists():
        if _is_link_loop(canonical):  # exists() says False for a link that leads back to itself
            raise InvalidInput("workspace", f"{canonical} is a symbolic link loop (ELOOP): following it never "
                                            "reaches a directory")
        raise NotFound(f"workspace: {canonical} does not exist", field="workspace", path=str(canonical))
    if not canonical.is_dir():
        raise InvalidInput("workspace", f"{canonical} is not a directory")
    return canonical



def _main_worktree_equivalent(canonical: Path) -> Path | None:
    """For a path inside a linked worktree, the same relative path inside the main working tree."""
    from . import gitstate  # local import: roots must stay importable without a repository

    info = gitstate.probe_branch(canonical)
    if info.workdir is None:
        return None
    main = gitstate.main_worktree_root(canonical)
    if main is None:
        return None
    top = Path(os.path.realpath(info.workdir))
    main = Path(os.path.realpath(main))
    if top == main:
        return None
    try:
        relative = canonical.relative_to(top)
    except ValueError:
        return None
    return main / relative



#: Names whose presence marks a workspace folder for the CLI (the Neovim plugin's ``root_markers``).
WORKSPACE_MARKERS = (".git", ".mnemon")


def find_workspace(start: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path | None:
    """The workspace the CLI works on when ``--workspace`` is not given; ``None`` means no workspace.

    The nearest directory from ``start`` (canonicalized; a file's directory) upward that holds a
    ``.git`` (directory or file, so a linked worktree or submodule counts) or a ``.mnemon``; a
    ``.mnemon`` that is the global root, or that lies in the home directory, is not a marker (else every
    directory below ``$HOME`` would be one workspace). This is exactly how the Neovim plugin picks a
    buffer's root, and a repository's top is the folder VS Code opens, so a CLI run anywhere inside a
    repository resolves the root the editors use. Never writes.
    """
    directory = canonical_workspace_path(os.path.abspath(os.fspath(start)))
    if not directory.is_dir():
        directory = directory.parent
    home = Path(os.path.realpath(os.path.expanduser("~")))
    try:
        global_store = Path(os.path.realpath(global_root(env)))
    except InvalidInput:
        global_store = None
    while True:
        for marker in WORKSPACE_MARKERS:
            candidate = directory / marker
            if not os.path.lexists(candidate):
                continue
            if marker == ".mnemon" and (directory == home or Path(os.path.realpath(candidate)) == global_store):
                continue
            return directory
        if directory.parent == directory:
            return None
        directory = directory.parent
