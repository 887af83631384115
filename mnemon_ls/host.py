"""Per-workspace state: settings, storage root, the Sources and the branch; the one place that wires them.

The CLI builds one :class:`WorkspaceHost` per command; the language server keeps one per workspace
folder. Nothing here imports pygls.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from . import gitstate
from .errors import InvalidInput
from .roots import RootResolution, canonical_workspace_path, resolve_root
from .runtime.model import branch_name_problem
from .runtime.snapshot import WakeSnapshot
from .runtime.source import RuntimeSource
from .runtime.store import Clock, RepairReport, RuntimeStore, _utc_now
from .settings import Settings


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
        # The branch comes from the workspace as opened (a linked worktree has its own HEAD), even when
        # its storage root is shared with the main working tree.
        self.workspace: Path | None = (
            self.resolution.shared_from or self.resolution.workspace if workspace is not None else None
        )
        self.runtime = RuntimeSource(self.resolution, settings, clock=clock)

    @property
    def root(self) -> Path:
        """The selected storage root."""
        return self.resolution.root

    def branch_state(self) -> gitstate.BranchState:
        """Probe the workspace's branch now (pygit2; never writes)."""
        return gitstate.probe_branch(self.workspace)

    def wake(
        self, branch: str | None = None, budget_chars: int | None = None
    ) -> tuple[WakeSnapshot, list[tuple[RuntimeStore, RepairReport]]]:
        """Repair projections and render the wake snapshot.

        ``branch`` overrides the probed branch (validated like stored branch names; raises
        :class:`InvalidInput` naming ``branch``). ``budget_chars`` overrides ``wakeBudgetChars``
        (1024..4194304 characters).
        """
        if budget_chars is not None and (isinstance(budget_chars, bool) or not isinstance(budget_chars, int)
                                         or not 1024 <= budget_chars <= 4_194_304):
            raise InvalidInput("budget", f"must be an integer in 1024..4194304 characters (got {budget_chars!r})")
        if branch is not None:
            name = branch.strip()
            problem = branch_name_problem(name)
            if problem:
                raise InvalidInput("branch", f"{problem} (got {branch!r})")
            return self.runtime.wake(name, "given", budget_chars=budget_chars)
        state = self.branch_state()
        return self.runtime.wake(state.branch, state.reason, budget_chars=budget_chars)


def default_workspace() -> Path:
    """The current directory, canonical (the CLI's default workspace)."""
    return canonical_workspace_path(os.getcwd())
