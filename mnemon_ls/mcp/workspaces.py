"""Which workspace an MCP tool call is for, and its :class:`~mnemon_ls.host.WorkspaceHost`.

Order (issue 14 item 2): ``--workspace DIR`` given to ``mnemon-ls mcp``; else the MCP client's roots
(``roots/list``, re-read after ``notifications/roots/list_changed``); else the workspace of the server's
working directory, found as the CLI finds it (:func:`mnemon_ls.roots.find_workspace`: the nearest
directory upward holding ``.git`` or ``.mnemon``; none: no workspace, the global root). A tool's optional ``workspace``
argument picks one of those; a directory outside all of them is refused (``not-in-workspace``). Nothing here imports
``mcp``: the adapter passes a roots fetcher in.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable, Mapping

from ..errors import InvalidInput, NotInWorkspace
from ..folders import uri_to_path
from ..roots import canonical_workspace_path, check_workspace, find_workspace
from ..settings import Settings

if TYPE_CHECKING:
    from ..host import WorkspaceHost

#: Fetches the client's roots as URIs; ``None`` when the client has no roots capability.
RootsFetcher = Callable[[], Awaitable["list[str] | None"]]


class McpWorkspaces:
    """The workspaces one MCP server serves, and one cached :class:`WorkspaceHost` per workspace.

    ``fixed`` is the ``--workspace`` directory (``None``: ask the client, then use ``cwd``). Hosts are
    built on first use and closed by :meth:`close`. Thread-safe for the worker threads tools run in.
    """

    def __init__(self, settings: Settings, fixed: str | os.PathLike[str] | None = None, *,
                 cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self.env = env
        self.fixed = canonical_workspace_path(fixed) if fixed is not None else None
        #: The working directory's workspace; ``None``: not inside one (the global root is used).
        self.cwd = find_workspace(cwd if cwd is not None else os.getcwd(), env)
        self._roots: list[Path] | None = None  # None: not fetched (or invalidated)
        self._hosts: dict[Path | None, WorkspaceHost] = {}
        self._lock = threading.Lock()

    def invalidate_roots(self) -> None:
        """Forget the client's roots (after ``notifications/roots/list_changed``); the next call re-reads them."""
        self._roots = None

    async def candidates(self, fetch_roots: RootsFetcher | None) -> list[Path]:
        """The workspaces a call may use, in order: the fixed one, else the client's roots, else the working
        directory's workspace (an empty list: no workspace at all)."""
        if self.fixed is not None:
            return [self.fixed]
        if self._roots is None and fetch_roots is not None:
            uris = await fetch_roots()
            if uris is not None:
                roots = []
                for uri in uris:
                    try:
                        path = uri_to_path(uri, "roots")
                    except InvalidInput:
                        continue  # a non-file root (the client may offer http roots) is not a workspace
                    if path.is_dir():
                        roots.append(canonical_workspace_path(path))
                self._roots = roots
        if self._roots:
            return list(self._roots)
        return [self.cwd] if self.cwd is not None else []

    async def host(self, workspace: str | None, fetch_roots: RootsFetcher | None) -> WorkspaceHost:
        """The host for a tool's ``workspace`` argument (a path or ``file:`` URI; ``None`` picks the only
        candidate). Raises :class:`InvalidInput` (several candidates and none given; empty or relative
        value; a file, not a directory), :class:`~mnemon_ls.errors.NotFound` (no such directory: the rule of
        ``--workspace`` at start, :func:`mnemon_ls.roots.check_workspace`) and :class:`NotInWorkspace` (outside
        every candidate)."""
        candidates = await self.candidates(fetch_roots)
        if workspace is None:
            if not candidates:
                return self._host_for(None)
            if len(candidates) > 1:
                raise InvalidInput("workspace", f"is required when the client has {len(candidates)} roots "
                                                f"({', '.join(map(str, candidates))})")
            return self._host_for(candidates[0])
        if not workspace.strip():
            raise InvalidInput("workspace", "must not be empty")
        path = uri_to_path(workspace, "workspace")
        if "\x00" in str(path):
            raise InvalidInput("workspace", "must not contain NUL")
        target = check_workspace(path)  # the rule of `mnemon-ls mcp --workspace` at start: an existing directory
        for base in candidates:
            if target == base or base in target.parents:
                return self._host_for(base)
        served = ", ".join(map(str, candidates)) or "none: not started inside a workspace, the global root is used"
        raise NotInWorkspace(f"workspace: {workspace} is outside the served workspaces ({served})",
                             field="workspace", uri=workspace)

    def _host_for(self, path: Path | None) -> WorkspaceHost:
        from ..host import WorkspaceHost  # on the first call: nothing of the host is loaded before `initialize`

        with self._lock:
            host = self._hosts.get(path)
            if host is None:
                host = self._hosts[path] = WorkspaceHost(path, self.settings, env=self.env)
            return host

    def close(self) -> None:
        """Flush and close every host (safe to call twice)."""
        with self._lock:
            hosts, self._hosts = list(self._hosts.values()), {}
        for host in hosts:
            host.close()
