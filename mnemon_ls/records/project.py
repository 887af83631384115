"""The project a ``shared-project`` record belongs to: the same in every clone of the repository.

``<workspace>/.dsh/workspace-memory/shared.jsonl`` is committed and travels with the code, so its records'
``scopeKey`` must name the project, not the clone: a clone's path hash (``rootId``, the key of the private
``project`` scope) differs in every clone, and a record pulled in from another clone would be filtered out.

- A new shared-project record gets ``git:<oid>``, ``<oid>`` the root commit reached from ``HEAD`` by first
  parents (:func:`write_key`): every clone of the repository has it, another repository does not. In a
  shallow clone the walk stops at the shallow boundary, whose commit every full clone has too. A workspace in
  no repository, or in one with no commit yet, keeps its ``rootId`` (nothing else names it).
- A record is this project's (:meth:`Project.accepts`) when its key is ``git:<oid>`` of a commit this
  repository holds (any commit: its history is this project's; a shallow clone cannot see behind its boundary,
  so there a commit it lacks is accepted too), or this clone's own ``rootId`` (records written before keys
  named the project). A record of another repository copied into the file stays hidden.

Reading the key of a record opens the repository (no walk); the walk runs only for a write, once per ``HEAD``.
Never writes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .paths import root_id

#: The prefix of a key naming a project by a commit of its history.
PREFIX = "git:"
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _errors() -> tuple[type[BaseException], ...]:
    """What pygit2 raises for a repository it cannot read (imports pygit2)."""
    import pygit2

    return (pygit2.GitError, OSError, KeyError, ValueError)


class Project:
    """The project of ``workspace`` (module doc). Constructing it opens nothing."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.legacy = root_id(workspace)
        self._repo: Any = None
        self._opened = False
        self._known: set[str] = set()
        self._roots: dict[str, str] = {}

    def _repository(self) -> Any:
        """The pygit2 repository holding the workspace, or ``None`` (none, or it cannot be opened)."""
        if not self._opened:
            self._opened = True
            import pygit2

            try:
                self._repo = pygit2.Repository(str(self.workspace))
            except _errors():
                self._repo = None
        return self._repo

    def write_key(self) -> str:
        """``git:<oid of the first-parent root of HEAD>``, or this clone's ``rootId`` when the workspace is in
        no repository or ``HEAD`` has no commit."""
        repo = self._repository()
        if repo is None:
            return self.legacy
        try:
            if repo.head_is_unborn:
                return self.legacy
            head = str(repo.head.target)
            if head not in self._roots:
                from pygit2.enums import SortMode

                walker = repo.walk(repo.head.target, SortMode.NONE)
                walker.simplify_first_parent()
                last = None
                for last in walker:
                    pass
                self._roots[head] = PREFIX + str(last.id) if last is not None else self.legacy
            return self._roots[head]
        except _errors():
            return self.legacy

    def accepts(self, key: str) -> bool:
        """Whether a shared-project record with scopeKey ``key`` is this project's (module doc)."""
        if key == self.legacy or key in self._known:
            return True
        if not key.startswith(PREFIX) or not _OID.fullmatch(key[len(PREFIX):]):
            return False
        repo = self._repository()
        if repo is None:
            return False
        try:
            held = key[len(PREFIX):] in repo
            if not held and repo.is_shallow:
                held = True  # history behind the boundary is not here: cannot tell, so not hidden
        except _errors():
            return False
        if held:
            self._known.add(key)  # a commit does not leave; one missing may arrive with the next fetch
        return held
