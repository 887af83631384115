"""The workspace folders of one editor session: each folder's :class:`~mnemon_ls.host.WorkspaceHost`, the
folder a URI or path belongs to, and the ``file:`` URIs that name them.

The language server keeps one :class:`HostRegistry` (folders from ``initialize`` and
``workspace/didChangeWorkspaceFolders``, each with its own settings and so its own storage root); the MCP
server and the operations turn the URIs their clients send into paths with :func:`uri_to_path`. Nothing
here imports pygls or writes to disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from .errors import InvalidInput, echo_repr

if TYPE_CHECKING:
    from .host import WorkspaceHost
    from .runtime.store import Clock
    from .settings import Settings


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
                 clock: Clock | None = None) -> None:
        self._default_settings = default_settings
        self.env = env
        self.clock = clock
        self.folders: dict[str, FolderState] = {}

    @property
    def default_settings(self) -> Settings:
        """The settings of a folder added without its own (built on first use: pydantic is imported then)."""
        if self._default_settings is None:
            from .settings import Settings

            self._default_settings = Settings()
        return self._default_settings

    def add_folder(self, uri: str, path: Path, name: str = "", settings: Settings | None = None) -> FolderState:
        """Register (or replace) a folder; raises the errors of :func:`mnemon_ls.roots.resolve_root` for a bad
        root."""
        from .host import WorkspaceHost  # here: the MCP server reads URIs with this module before it needs a host

        settings = settings or self.default_settings
        host = WorkspaceHost(path, settings, env=self.env, clock=self.clock)
        state = FolderState(uri, Path(path), name or Path(path).name, settings, host)
        self.folders[uri] = state
        return state

    def remove_folder(self, uri: str) -> FolderState | None:
        """Forget a folder; returns its state when it was known."""
        return self.folders.pop(uri, None)

    def folder_for_path(self, path: Path) -> FolderState | None:
        """The folder containing ``path`` (longest prefix), or ``None``. Safe from a worker thread while the
        event loop adds or removes folders (it reads a snapshot)."""
        best: FolderState | None = None
        target = Path(os.path.realpath(path))
        for state in list(self.folders.values()):
            base = Path(os.path.realpath(state.path))
            if target == base or base in target.parents:
                if best is None or len(str(base)) > len(str(best.path)):
                    best = state
        return best

    def resolve(self, uri_or_path: str | None, field: str = "workspace") -> FolderState:
        """The folder for a folder URI, a file URI/path inside one, or ``None`` when exactly one is open.

        Raises :class:`~mnemon_ls.errors.NotInWorkspace` (outside every folder, or no folder open) and
        :class:`InvalidInput` (field ``workspace``: required when several folders are open; ``""``,
        ``file:`` and ``file://`` are refused, never taken as the working directory). Safe from a worker thread
        while the event loop adds or removes folders (it reads a snapshot).
        """
        from .errors import NotInWorkspace

        folders = dict(self.folders)
        if uri_or_path is None:
            if len(folders) == 1:
                return next(iter(folders.values()))
            if not folders:
                raise NotInWorkspace("workspace: no workspace folder is open", field="workspace")
            raise InvalidInput("workspace", f"is required when {len(folders)} folders are open "
                                            f"({', '.join(sorted(folders))})")
        if uri_or_path in folders:
            return folders[uri_or_path]
        path = uri_to_path(uri_or_path, field)
        state = self.folder_for_path(path)
        if state is None:
            raise NotInWorkspace(f"workspace: {uri_or_path} is outside every open workspace folder",
                                 field="workspace", uri=uri_or_path)
        return state


def uri_to_path(uri_or_path: str, field: str = "workspace") -> Path:
    """A ``file:`` URI (percent-decoded; ``file:///c%3A/x`` is ``c:/x`` on Windows) or a plain absolute
    path -> :class:`Path`; a plain path may start with ``~`` or ``~/`` (your own home,
    :func:`mnemon_ls.settings.own_home_path`).

    Raises :class:`InvalidInput` naming ``field`` for a value that is not a string, contains NUL (also
    percent-encoded as ``%00``), starts with ``~name`` (another user's home), has another URI scheme or a remote
    host, or names no absolute path (``""``, ``file:``, ``file://``, ``file:relative``): none of them ever means
    the working directory. The
    value is repeated at most :data:`~mnemon_ls.errors.ECHO_LIMIT` UTF-8 bytes long.
    """
    from urllib.parse import unquote, urlparse

    if not isinstance(uri_or_path, str):
        raise InvalidInput(field, f"must be a file: URI or an absolute path (got {type(uri_or_path).__name__})")
    shown = echo_repr(uri_or_path)  # an error repeats it short: it may be megabytes
    if "\x00" in uri_or_path:
        raise InvalidInput(field, f"must not contain NUL (U+0000) (got {shown})")
    if uri_or_path.startswith("file:"):
        parsed = urlparse(uri_or_path)
        if parsed.netloc not in ("", "localhost"):
            raise InvalidInput(field, f"remote file URIs are not supported (got {shown})")
        path = unquote(parsed.path)
        if os.name == "nt" and len(path) >= 3 and path[0] == "/" and path[2] == ":":
            path = path[1:]
        if "\x00" in path:
            raise InvalidInput(field, f"must not contain NUL (U+0000), also not as %00 (got {shown})")
        if not os.path.isabs(path):
            raise InvalidInput(field, f"a file: URI must name an absolute path (got {shown})")
        return Path(path)
    if "://" in uri_or_path or uri_or_path.startswith(("untitled:", "vscode")):
        raise InvalidInput(field, f"only file: URIs are supported (got {shown})")
    from .settings import own_home_path

    path = own_home_path(uri_or_path, field)  # a plain ~ or ~/x is in your home; ~name is refused
    if not os.path.isabs(path):
        raise InvalidInput(field, f"must be a file: URI or an absolute path (got {shown})")
    return Path(path)
