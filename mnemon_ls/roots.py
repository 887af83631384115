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
(:func:`arm_root_creation`, DESIGN.md section 4); an existing ``.gitignore`` is never overwritten.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from . import fsio
from .errors import InvalidInput, NotFound, StorageUnsafe, echo_repr
from .settings import Settings, own_home_path

if TYPE_CHECKING:
    from .findings import Finding

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
    unchanged. Nothing is created. Raises :class:`InvalidInput` (field ``workspace``) for a relative path, a NUL, ``~name`` (another
    user's home, :func:`mnemon_ls.settings.own_home_path`: every surface's workspace comes through here), a path
    too long for the file system, or an existing prefix that is not a directory while more segments follow
    (ENOTDIR).
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
    _check_root_path(root, field)
    if canonical is not None and scope in ("global", "custom"):
        _refuse_root_in_repository(root, canonical, field)
    user_root = root
    if settings.runtime_user_scope == "global" and not (scope == "global" and settings.data_dir):
        user_root = global_root(env)
        _check_root_path(user_root, "MNEMON_DATA_DIR")
    return RootResolution(root=root, user_root=user_root, scope=scope, workspace=canonical, shared_from=shared_from)


def check_workspace(workspace: str | os.PathLike[str]) -> Path:
    """The canonical path of ``workspace`` (:func:`canonical_workspace_path`) when it is an existing directory.
    Raises :class:`NotFound` (field ``workspace``) for a missing one and :class:`InvalidInput` for a file, and what
    :func:`canonical_workspace_path` raises. Reads only."""
    canonical = canonical_workspace_path(workspace)
    if not canonical.exists():
        raise NotFound(f"workspace: {canonical} does not exist", field="workspace", path=str(canonical))
    if not canonical.is_dir():
        raise InvalidInput("workspace", f"{canonical} is not a directory")
    return canonical


def check_data_dir(settings: Settings) -> None:
    """Refuse a ``dataDir`` setting that cannot hold a storage root (a file, or under one; a path too long for the
    file system) before anything is served: the checks :func:`resolve_root` makes of every root under it, made
    once at the start of a server whose every request would otherwise fail with them. Raises
    :class:`InvalidInput` naming ``dataDir``; nothing when ``dataDir`` is not set. Reads only."""
    if settings.data_dir:
        _check_root_path(Path(settings.data_dir), "dataDir")


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


def _check_root_path(root: Path, field: str) -> None:
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


def _refuse_root_in_repository(root: Path, workspace: Path, field: str) -> None:
    """Raise :class:`InvalidInput` naming ``field`` when the storage ``root`` (a ``dataDir``) is the ``workspace``
    itself or lies in its ``.git``: memory written there would be mixed with the repository's own files (its
    ``data/``, ``state/``...) and committed with them, or kept where git keeps its objects. A new directory
    inside the workspace is fine (its ``.gitignore`` is written with it), and so is an existing one (each area
    created in it gets one: :func:`arm_root_creation`). Reads only (``realpath``)."""
    real = Path(os.path.realpath(root))
    if real == workspace:
        raise InvalidInput(field, f"{root} is the workspace itself: memory stored there would be mixed with the "
                                  "repository's files and committed with them; give a directory outside the "
                                  "repository, or a new one inside it (it is kept out of git)")
    if real == workspace / ".git" or workspace / ".git" in real.parents:
        raise InvalidInput(field, f"{root} is inside the workspace's .git directory, which belongs to git; give a "
                                  "directory outside the repository, or a new one inside it (it is kept out of git)")


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


#: A native space's vector side index, ``data/<id>/.mnemon-ls-vectors.db`` (derived; written by
#: :mod:`mnemon_ls.semantic.vectors`, which takes the name from here: the link scan below knows it without
#: importing the semantic package).
VECTOR_FILE = ".mnemon-ls-vectors.db"

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


def confine_roots(resolution: RootResolution) -> None:
    """Register ``resolution``'s roots with :func:`mnemon_ls.fsio.confine` from their trusted anchors, so that
    no read of a store file and no write follows a link a repository could commit (invariant 10). In memory
    only."""
    fsio.confine(resolution.root, trusted_anchor(resolution.root, resolution.scope, resolution.workspace))
    if resolution.split_user:  # runtimeUserScope=global: the global root's rule
        fsio.confine(resolution.user_root, trusted_anchor(resolution.user_root, "global", resolution.workspace))


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


# ---------------------------------------------------------------- storage root safety (invariant 10)

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
