"""Per-workspace state: settings, storage root, the Sources and the branch; the one place that wires them.

The CLI builds one :class:`WorkspaceHost` per command; the language server keeps one per workspace
folder. Nothing here imports pygls.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from .errors import InvalidInput
from .roots import RootResolution, arm_root_creation, find_workspace, resolve_root
from .runtime.model import branch_name_problem
from .runtime.snapshot import WakeSnapshot
from .runtime.source import RuntimeSource
from .runtime.store import Clock, RepairReport, RuntimeStore, _utc_now
from .settings import Settings

if TYPE_CHECKING:
    from typing import Any

    from . import gitstate
    from .documents import DocumentStore
    from .records import RecordsSource
    from .spaces import SpacesService


class WorkspaceHost:
    """One workspace (a directory, usually a git working tree) and its memory.

    ``workspace`` must be an existing directory, or ``None`` for the ``global``/``custom`` scopes
    without a workspace. Raises :class:`~mnemon_ls.errors.NotFound` / :class:`InvalidInput` from
    :func:`mnemon_ls.roots.resolve_root`. Constructing a host never writes to disk.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        settings: Settings,
        *,
        env: Mapping[str, str] | None = None,
        clock: Clock = _utc_now,
    ) -> None:
        self.settings = settings
        self.resolution: RootResolution = resolve_root(workspace, settings, env)
        arm_root_creation(self.resolution)  # in memory: the first write that creates a root ignores it in git
        # The branch comes from the workspace as opened (a linked worktree has its own HEAD), even when
        # its storage root is shared with the main working tree.
        self.workspace: Path | None = (
            self.resolution.shared_from or self.resolution.workspace if workspace is not None else None
        )
        self._clock = clock
        self._env = env
        self.runtime = RuntimeSource(self.resolution, settings, clock=clock)

    @property
    def root(self) -> Path:
        """The selected storage root."""
        return self.resolution.root

    @functools.cached_property
    def documents(self) -> "DocumentStore":
        """The Documents Source of this root (built on first use; constructing it writes nothing).

        ``sourcePaths`` resolve against the workspace as opened (a linked worktree's own tree).
        """
        from .documents import DocumentStore

        limits = self.settings.documents
        return DocumentStore(self.root, self.workspace, max_body_bytes=limits.max_body_bytes,
                             active_limit_bytes=limits.active_limit_bytes, clock=self._clock)

    @functools.cached_property
    def spaces(self) -> "SpacesService":
        """The Memory Spaces Source of this root (built on first use; constructing it writes nothing)."""
        from .spaces import RecallQuality, SpacesService

        return SpacesService(self.root, clock=self._clock,
                             quality=RecallQuality.from_dict({"policy": self.settings.recall_policy}))

    @functools.cached_property
    def records(self) -> "RecordsSource":
        """The Records Source of this workspace without a session (seed 002: project, shared-project and
        user scopes; the session scope needs :meth:`open_records`). Constructing it writes nothing."""
        return self.open_records(None)

    def open_records(self, session_id: str | None) -> "RecordsSource":
        """A Records Source for ``session_id`` (the language server: one per server lifetime and folder)."""
        from .records import RecordsSource

        return RecordsSource(self.workspace, session_id=session_id, env=self._env)

    def recall(self, query: str, **options: "Any") -> "Any":
        """Federated recall with this workspace's branch scope applied (``branchRecall``,
        ``detachedHeadPolicy``, the probed branch). ``options`` go to :meth:`SpacesService.recall`."""
        return self.spaces.recall(query, branch=self.branch_state().branch,
                                  branch_recall=self.settings.branch_recall,
                                  detached_head_policy=self.settings.detached_head_policy, **options)

    def flush(self) -> None:
        """Write batched soft state (document access times, space access counters) now."""
        if "documents" in self.__dict__:
            self.documents.flush_access()
        if "spaces" in self.__dict__:
            self.spaces.flush_access()

    def close(self) -> None:
        """Flush soft state (document access times, space access counters) and release resources;
        safe to call twice."""
        if "documents" in self.__dict__:
            self.documents.close()
        if "spaces" in self.__dict__:
            self.spaces.close()

    def branch_state(self) -> "gitstate.BranchState":
        """Probe the workspace's branch now (pygit2; never writes)."""
        from . import gitstate  # lazy: pygit2 costs ~40 ms of import and most commands never probe

        return gitstate.probe_branch(self.workspace)

    def wake(
        self, branch: str | None = None, budget_chars: int | None = None, *,
        probed: "gitstate.BranchState | None" = None,
    ) -> tuple[WakeSnapshot, list[tuple[RuntimeStore, RepairReport]]]:
        """Repair projections and render the wake snapshot.

        ``branch`` overrides the probed branch (validated like stored branch names; raises
        :class:`InvalidInput` naming ``branch``). ``probed`` is a probe the caller already made (the
        server announces it), so the snapshot renders exactly that branch without probing again.
        ``budget_chars`` overrides ``wakeBudgetChars`` (1024..4194304 characters).
        """
        if budget_chars is not None and (isinstance(budget_chars, bool) or not isinstance(budget_chars, int)
                                         or not 1024 <= budget_chars <= 4_194_304):
            raise InvalidInput("budget", f"must be an integer in 1024..4194304 characters (got {budget_chars!r})")
        if branch is not None:
            name = branch.strip()
            problem = branch_name_problem(name)
            if problem:
                raise InvalidInput("branch", f"{problem} (got {branch!r})")
            reason: str | None = "given"
        else:
            state = probed if probed is not None else self.branch_state()
            name, reason = state.branch, state.reason
        budget = budget_chars or self.settings.wake_budget_chars
        covers = self._cover_texts(budget // 20)
        used = sum(len(text) + 2 for text in covers)
        snapshot, repairs = self.runtime.wake(name, reason, budget_chars=budget - used)
        if covers:
            text = "\n\n".join([snapshot.text, *covers])
            snapshot = dataclasses.replace(snapshot, text=text, chars=len(text))
        return snapshot, repairs

    def current_branch(self, field: str = "scopeToBranch") -> str:
        """The checked-out branch for a branch-scoped write; raises :class:`InvalidInput` naming ``field``
        when no branch can be known (detached HEAD, not a repository)."""
        state = self.branch_state()
        if state.branch is None:
            raise InvalidInput(field, f"no branch is checked out ({state.reason})")
        return state.branch

    def status(self, branch: "gitstate.BranchState | None" = None) -> dict[str, "Any"]:
        """This workspace's status: ``{path, root, userRoot, scope, branch, branchReason, detached, entries:
        {user, memory}, usage: {user|memory: {used, limit}} (UTF-8 bytes), problems, documents}``.

        ``documents`` is ``{active, archived, activeBytes, limitBytes, problem}`` or ``None`` before the
        Documents Source was first used. ``branch`` is a probe the caller already made (else probes now).
        """
        state = branch if branch is not None else self.branch_state()
        effective = self.runtime.read()
        limits = self.settings.runtime_memory
        documents = None
        if (self.root / "documents" / "index.json").exists():
            index = self.documents.read()
            active = [r for r in index.records if r.status == "active"]
            documents = {"active": len(active), "archived": len(index.records) - len(active),
                         "activeBytes": sum(r.size_bytes for r in active),
                         "limitBytes": self.settings.documents.active_limit_bytes, "problem": index.problem}
        return {
            "path": str(self.workspace) if self.workspace else None, "root": str(self.root),
            "userRoot": str(self.resolution.user_root), "scope": self.settings.storage_scope,
            "branch": state.branch, "branchReason": state.reason, "detached": state.detached,
            "entries": {"user": len(effective.user), "memory": len(effective.memory)},
            "usage": {t: {"used": effective.used[t], "limit": limits.limit_for(t)} for t in ("user", "memory")},
            "problems": list(effective.problems),
            "documents": documents,
        }

    def _cover_texts(self, budget_chars: int) -> list[str]:
        """The bounded covers of the other tiers that exist in this root (Documents), each within
        ``budget_chars``; a tier that was never used adds nothing."""
        covers = []
        if (self.root / "documents" / "index.json").exists():
            cover = self.documents.cover(budget_chars)
            if cover.text:
                covers.append(cover.text.strip("\n"))
        if (self.root / "data").is_dir():
            text = self.spaces.cover(budget_chars).text
            if text:
                covers.append(text.strip("\n"))
        pending = self.pending_proposals()
        if pending:
            covers.append(f"Workspace memory records: {pending} proposal{'s' if pending != 1 else ''} wait for a "
                          "person to verify or reject (mnemon-ls records list --proposals)."[:budget_chars])
        return covers

    def pending_proposals(self) -> int:
        """Assistant proposals waiting for review in this workspace's record scopes (0 when none, or
        when the records cannot be read: the wake never fails because of them)."""
        from .errors import MnemonError

        try:
            return self.records.pending_proposals()
        except (MnemonError, OSError):
            return 0


def default_workspace(env: Mapping[str, str] | None = None) -> Path | None:
    """The CLI's workspace when ``--workspace`` is not given: the nearest directory from the current one
    upward holding ``.git`` or ``.mnemon`` (:func:`mnemon_ls.roots.find_workspace`), or ``None`` (no
    workspace: the global root is used)."""
    return find_workspace(os.getcwd(), env)


class FolderState:
    """One workspace folder of an editor session: its URI, path, raw settings and :class:`WorkspaceHost`."""

    def __init__(self, uri: str, path: Path, name: str, settings: Settings, host: WorkspaceHost) -> None:
        self.uri = uri
        self.path = path
        self.name = name
        self.settings = settings
        self.host = host
        self.branch = host.branch_state()
        # Branch probes are numbered so that results apply in the order the probes started.
        self.probe_started = 0
        self.probe_applied = 0


class HostRegistry:
    """The workspace folders of one editor session (the language server keeps exactly one).

    Folders are keyed by URI; a file URI maps to the folder whose path is its longest prefix. Each
    folder has its own settings (client defaults overlaid by per-folder ``workspace/configuration``)
    and therefore its own storage root; two folders under ``global`` share one root. Never writes.
    """

    def __init__(self, default_settings: Settings | None = None, env: Mapping[str, str] | None = None,
                 clock: Clock = _utc_now) -> None:
        self.default_settings = default_settings or Settings()
        self.env = env
        self.clock = clock
        self.folders: dict[str, FolderState] = {}

    def add_folder(self, uri: str, path: Path, name: str = "", settings: Settings | None = None) -> FolderState:
        """Register (or replace) a folder; raises the errors of :func:`resolve_root` for a bad root."""
        settings = settings or self.default_settings
        host = WorkspaceHost(path, settings, env=self.env, clock=self.clock)
        state = FolderState(uri, Path(path), name or Path(path).name, settings, host)
        self.folders[uri] = state
        return state

    def remove_folder(self, uri: str) -> FolderState | None:
        """Forget a folder; returns its state when it was known."""
        return self.folders.pop(uri, None)

    def folder_for_path(self, path: Path) -> FolderState | None:
        """The folder containing ``path`` (longest prefix), or ``None``."""
        best: FolderState | None = None
        target = Path(os.path.realpath(path))
        for state in self.folders.values():
            base = Path(os.path.realpath(state.path))
            if target == base or base in target.parents:
                if best is None or len(str(base)) > len(str(best.path)):
                    best = state
        return best

    def resolve(self, uri_or_path: str | None, field: str = "workspace") -> FolderState:
        """The folder for a folder URI, a file URI/path inside one, or ``None`` when exactly one is open.

        Raises :class:`~mnemon_ls.errors.NotInWorkspace` (outside every folder, or no folder open) and
        :class:`InvalidInput` (field ``workspace``: required when several folders are open).
        """
        from .errors import NotInWorkspace

        if uri_or_path is None or uri_or_path == "":
            if len(self.folders) == 1:
                return next(iter(self.folders.values()))
            if not self.folders:
                raise NotInWorkspace("workspace: no workspace folder is open", field="workspace")
            raise InvalidInput("workspace", f"is required when {len(self.folders)} folders are open "
                                            f"({', '.join(sorted(self.folders))})")
        if uri_or_path in self.folders:
            return self.folders[uri_or_path]
        path = uri_to_path(uri_or_path, field)
        state = self.folder_for_path(path)
        if state is None:
            raise NotInWorkspace(f"workspace: {uri_or_path} is outside every open workspace folder",
                                 field="workspace", uri=uri_or_path)
        return state


def uri_to_path(uri_or_path: str, field: str = "workspace") -> Path:
    """A ``file:`` URI (percent-decoded; ``file:///c%3A/x`` is ``c:/x`` on Windows) or a plain absolute
    path -> :class:`Path`.

    Raises :class:`InvalidInput` naming ``field`` for other URI schemes, remote hosts or relative paths.
    """
    from urllib.parse import unquote, urlparse

    if uri_or_path.startswith("file:"):
        parsed = urlparse(uri_or_path)
        if parsed.netloc not in ("", "localhost"):
            raise InvalidInput(field, f"remote file URIs are not supported (got {uri_or_path!r})")
        path = unquote(parsed.path)
        if os.name == "nt" and len(path) >= 3 and path[0] == "/" and path[2] == ":":
            path = path[1:]
        return Path(path)
    if "://" in uri_or_path or uri_or_path.startswith(("untitled:", "vscode")):
        raise InvalidInput(field, f"only file: URIs are supported (got {uri_or_path!r})")
    if not os.path.isabs(uri_or_path):
        raise InvalidInput(field, f"must be a file: URI or an absolute path (got {uri_or_path!r})")
    return Path(uri_or_path)
