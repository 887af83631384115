"""Change notifications for editor views: ``mnemon/memoryChanged`` ``{workspace, source}``.

Registered from :mod:`.server` with :func:`register`, like :mod:`.records`. An editor's Memory view
(VS Code's tree views, Neovim's pickers) lists Runtime entries, Documents, Memory Spaces and record
proposals with the existing requests (``mnemon/runtime/snapshot``, ``mnemon/documents/list``,
``mnemon/spaces/list``, ``mnemon/records/list``); this module tells it *when* to list again, so that no
editor polls.

Per folder, one watcher per directory holding a Source's truth file (:data:`TRUTH_FILES`); a change of
one of those files, by this server, another server on the same root (a second window), the CLI, the MCP
server or the TypeScript plugin, sends ``mnemon/memoryChanged`` with ``source`` one of ``runtime``
(``runtime/memories.json`` of the folder's MEMORY.md or USER.md store), ``documents``
(``documents/index.json``), ``spaces`` (``data/.dsh-memory-bodies.json`` or
``state/memory-providers.json``) or ``records`` (a records ``*.jsonl`` file of the folder or of
:func:`~mnemon_ls.records.paths.records_home_dir`). A burst of writes arrives as one notification per source and batch
(the watcher's debounce, :data:`mnemon_ls.lsp.watch.DEBOUNCE_MS`). Projections (USER.md, MEMORY.md, managed Markdown)
are not truth: their hand edits are imported (``mnemon/projectionRepaired``) and the import changes ``memories.json``,
which is then announced here.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import MnemonError
from ..folders import FolderState

if TYPE_CHECKING:
    from .core import MnemonLanguageServer

log = logging.getLogger("mnemon_ls.lsp.views")

#: Server -> client notification: a Source's truth changed on disk.
MEMORY_CHANGED = "mnemon/memoryChanged"

#: The truth files of each source: exact names (``records``: name suffixes).
TRUTH_FILES: dict[str, tuple[str, ...]] = {
    "runtime": ("memories.json",),
    "documents": ("index.json",),
    "spaces": (".dsh-memory-bodies.json", "memory-providers.json"),
    "records": (".jsonl",),
}


def _accepts(source: str) -> Callable[[str], bool]:
    """A watcher filter for the truth files of ``source`` (temp and lock files are never accepted)."""
    names = TRUTH_FILES[source]

    def accept(path: str) -> bool:
        name = Path(path).name
        if source == "records":
            return name.endswith(names)
        return name in names

    return accept


class ViewsFeature:
    """Watches each folder's truth files and sends :data:`MEMORY_CHANGED` (one instance per server)."""

    def __init__(self, server: "MnemonLanguageServer") -> None:
        self.server = server

    def directories(self, state: FolderState) -> list[tuple[str, Path]]:
        """``(source, directory)`` pairs watched (non-recursively) for one folder."""
        from ..records.paths import project_dir, records_home_dir

        root = state.host.root
        dirs: list[tuple[str, Path]] = [("runtime", store.runtime_dir) for store in state.host.runtime.stores]
        dirs += [("documents", root / "documents"), ("spaces", root / "data"), ("spaces", root / "state"),
                 ("records", project_dir(state.path) / "workspace-memory")]
        try:
            dirs.append(("records", records_home_dir(state.host.global_env)))
        except MnemonError:
            pass
        unique: list[tuple[str, Path]] = []
        for pair in dirs:
            if pair not in unique:
                unique.append(pair)
        return unique

    def watchers_for(self, state: FolderState) -> list[Any]:
        """The watchers of one folder (started by the server with its others)."""
        from .watch import Watcher

        return [Watcher(f"views:{source}:{state.uri}:{n}", [path], _accepts(source),
                        functools.partial(self.changed, state.uri, source), recursive=False)
                for n, (source, path) in enumerate(self.directories(state))]

    async def changed(self, uri: str, source: str, _paths: set[str]) -> None:
        """Send ``mnemon/memoryChanged {workspace, source}`` if the folder is still open."""
        if uri in self.server.registry.folders:
            from .lensrefresh import refresh_lenses

            self.server.protocol.notify(MEMORY_CHANGED, {"workspace": uri, "source": source})
            refresh_lenses(self.server)  # a lens counts the memories citing its lines


def register(server: "MnemonLanguageServer") -> None:
    """Attach :class:`ViewsFeature` as ``server.views_feature``."""
    server.views_feature = ViewsFeature(server)  # type: ignore[attr-defined]
