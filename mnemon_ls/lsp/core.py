"""The language server object (:class:`MnemonLanguageServer`): folders, settings, watchers, branch
announcements, the observers of operations and the ``mnemon/*`` request wrapper (:meth:`~MnemonLanguageServer.request`).

:mod:`.server` creates the one instance, attaches the feature modules to it and handles the lifecycle;
the feature modules import this module (for types only), never :mod:`.server`, so the import graph has no
circle. Start-up: answering ``initialize`` needs pygls and this module only; keep its module-level imports
light (see :mod:`.server`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import typing
from pathlib import Path
from typing import Any, Awaitable, Callable

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from ..packgate import run_held
from .. import __version__
from ..errors import InvalidInput, MnemonError, storage_error
from ..folders import FolderState, HostRegistry, uri_to_path
from ..view import ViewRegistry
from . import framing
from . import protocol as P
from .watch import Watcher, documents_filter, git_state_filter, git_watch_dir, runtime_filter

if typing.TYPE_CHECKING:
    from ..settings import Settings

Handler = Callable[..., Awaitable[Any]]

log = logging.getLogger("mnemon_ls.lsp")

#: Title of the action that opens a saved hand edit (``window/showMessageRequest``).
OPEN_EDIT = "Open edit"

@functools.cache
def _setting_keys() -> frozenset[str]:
    """The wire names of every known setting (pydantic is imported on first use, after ``initialize``)."""
    from ..settings import Settings

    return frozenset(Settings.model_fields[name].alias or name for name in Settings.model_fields)


def settings_section(raw: Any) -> dict[str, Any]:
    """The known ``mnemon`` settings of a client payload (``{"mnemon": {...}}``, ``{"settings": ...}`` or flat).

    Keys the server does not know (the editor plugins' own settings, e.g. ``trace``) are dropped.
    """
    if not isinstance(raw, dict):
        return {}
    for key in ("mnemon", "settings"):
        if isinstance(raw.get(key), dict):
            raw = raw[key]
            break
    keys = _setting_keys()
    return {k: v for k, v in raw.items() if k in keys and v is not None}


#: Settings that decide where a folder's memory is stored: an invalid one refuses the folder instead of being
#: left out (leaving it out would move the folder to another storage root).
ROOT_SETTINGS = frozenset({"storageScope", "dataDir", "worktreeSharing", "runtimeUserScope"})


def _without(raw: dict, path: list[str]) -> dict:
    """A copy of the settings dict ``raw`` without the key at ``path`` (dotted field split; an emptied group
    is dropped too)."""
    out = dict(raw)
    if len(path) > 1 and isinstance(out.get(path[0]), dict):
        inner = _without(out[path[0]], path[1:])
        if inner:
            out[path[0]] = inner
        else:
            out.pop(path[0])
    else:
        out.pop(path[0], None)
    return out


def _merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


class MnemonLanguageServer(LanguageServer):
    """pygls server holding the session's :class:`HostRegistry`, :class:`ViewRegistry` and watchers."""

    def __init__(self) -> None:
        super().__init__("mnemon-ls", __version__, protocol_cls=P.MnemonProtocol,
                         converter_factory=P.strict_converter)
        self.registry = HostRegistry()
        self.views = ViewRegistry()
        self.client_settings: dict[str, Any] = {}
        self.folder_settings: dict[str, dict[str, Any]] = {}
        self.watchers: dict[str, list[Watcher]] = {}
        self.git_watched: dict[str, Path] = {}  # folder URI -> the directory its branch watcher watches
        self.settings_problems: list[str] = []
        self.flush_task: asyncio.Task[None] | None = None
        self.cited_watch: Any = None  # the cited-file watch (lsp/cited.py start_watch), from `initialized`
        # Set once the initial workspace/configuration pull is done; mnemon/* requests wait for it so
        # that none is served with default settings a folder is about to override.
        self.configured: asyncio.Event | None = None
        self.initialize_params: types.InitializeParams | None = None
        #: Observers of operations (``observer(state, operation, data, error)``, after each ``mnemon/*``
        #: request of the operation layer): the notifications a result or an error causes.
        self.observers: list[Callable[..., None]] = [self._observe_lost_edits]
        #: Called once when the first folders open (after ``initialize`` is answered): :mod:`.server` binds
        #: the operation layer's requests there (it imports pydantic, which the start path keeps out).
        self.binders: list[Callable[[], None]] = []

    def start_io(self, stdin: Any = None, stdout: Any = None) -> int:  # noqa: D102 - pygls entry
        """Serve over stdio with :mod:`.framing`'s reader (resynchronises after bad frames); the exit code."""
        return framing.start_io(self, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> int:  # noqa: D102 - pygls entry
        """Serve on ``host:port`` with :mod:`.framing`'s reader; the exit code."""
        return framing.start_tcp(self, host, port)

    # --------------------------------------------------------------- capabilities

    def ready(self) -> asyncio.Event:
        """The "initial configuration applied" event (created on the running loop on first use)."""
        if self.configured is None:
            self.configured = asyncio.Event()
        return self.configured

    def supports(self, path: str) -> bool:
        """Whether the client declared capability ``path`` (dotted snake_case, e.g.
        ``window.show_document.support``)."""
        return bool(get_capability(self.client_capabilities, path, False))

    def report_server_error(self, error: Exception, source: Any) -> None:  # noqa: D102 - pygls hook
        """Log request errors only: they already travel in the response, so never pop them up as
        ``window/showMessage``."""
        log.debug("request error (%s): %s", getattr(source, "__name__", source), error)

    # --------------------------------------------------------------- folders and settings

    def open_initial_folders(self) -> None:
        """Client settings from ``initializationOptions``; folders from ``workspaceFolders``, else
        ``rootUri``/``rootPath``. A folder that is not a usable ``file:`` URI (``""``, ``file:``,
        ``file://``, another scheme, NUL) is skipped with a warning, never taken as the working directory."""
        params = self.initialize_params
        if params is None:
            return
        for bind in self.binders:  # the operation layer's mnemon/* methods (imports pydantic): .server
            bind()
        try:
            self.client_settings = settings_section(params.initialization_options)
            folders = params.workspace_folders or []
            if folders:
                for folder in folders:
                    self.add_folder(folder.uri, folder.name)
            elif params.root_uri is not None:
                self.add_folder(params.root_uri, "")
            elif params.root_path is not None:
                root = params.root_path
                self.add_folder(from_fs_path(root) or root if os.path.isabs(root) else root, "")
        except Exception:  # never leave the session half-initialized without a word
            log.exception("opening the workspace folders failed")
            self.settings_problems.append("mnemon-ls: opening the workspace folders failed; see the server log")

    def settings_for(self, uri: str) -> Settings:
        """Validated settings of a folder. An invalid setting is reported and left out (its default applies;
        the other settings stay as given), except one that decides where memory is stored (:data:`ROOT_SETTINGS`):
        then :class:`InvalidInput` is raised, so the folder is refused (or keeps its current settings) instead
        of silently moving to another storage root."""
        from ..settings import load_settings

        raw = _merge(self.client_settings, self.folder_settings.get(uri, {}))
        for _attempt in range(64):
            try:
                return load_settings(raw)
            except InvalidInput as exc:
                top = exc.field.split(".")[0]
                if top in ROOT_SETTINGS or top not in raw:
                    message = f"mnemon-ls: invalid setting for {uri}: {exc.message}"
                    if message not in self.settings_problems:
                        self.settings_problems.append(message)
                    raise
                message = f"mnemon-ls: invalid setting for {uri}: {exc.message}; its default is used"
                if message not in self.settings_problems:
                    self.settings_problems.append(message)
                smaller = _without(raw, exc.field.split("."))
                if smaller == raw:  # nothing to leave out (a rule across fields): refused as a whole
                    raise
                raw = smaller
        return load_settings({})

    def add_folder(self, uri: str, name: str = "") -> FolderState | None:
        """Register a folder (errors are reported to the client, the folder is skipped)."""
        try:
            path = uri_to_path(uri)
            return self.registry.add_folder(uri, path, name, self.settings_for(uri))
        except MnemonError as exc:
            self.settings_problems.append(f"mnemon-ls: cannot use workspace folder {uri}: {exc.message}")
            return None

    async def flush_problems(self) -> None:
        """Show queued settings/folder problems once as warnings."""
        while self.settings_problems:
            message = self.settings_problems.pop(0)
            log.warning(message)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))

    async def pull_configuration(self) -> None:
        """Ask the client for section ``mnemon`` per folder (when supported) and rebuild changed folders."""
        if not self.supports("workspace.configuration") or not self.registry.folders:
            return
        uris = list(self.registry.folders)
        items = [types.ConfigurationItem(scope_uri=uri, section="mnemon") for uri in uris]
        try:
            results = await asyncio.wait_for(
                self.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=5)
        except Exception as exc:  # the client may not answer; settings then stay as they are
            log.warning("workspace/configuration failed: %s", exc)
            return
        for uri, result in zip(uris, results or []):
            self.folder_settings[uri] = settings_section({"mnemon": result} if isinstance(result, dict) else {})
        await self.refresh_folders(uris)

    async def refresh_folders(self, uris: list[str]) -> None:
        """Re-resolve folders whose settings changed; restarts their watchers."""
        for uri in uris:
            state = self.registry.folders.get(uri)
            if state is None:
                continue
            try:
                settings = self.settings_for(uri)
            except InvalidInput:  # a bad storage setting: the folder keeps its root (reported)
                continue
            if settings == state.settings:
                continue
            # The new state serves requests at once; the old watchers are stopped afterwards.
            old_watchers = self.watchers.pop(uri, [])
            new = self.add_folder(uri, state.name)
            if new is not None:
                self.start_watchers(new)
            for watcher in old_watchers:
                await watcher.stop()
            await asyncio.to_thread(state.host.close)
        await self.flush_problems()

    # --------------------------------------------------------------- watchers

    def start_watchers(self, state: FolderState) -> None:
        """Start the git-state and projection watchers of one folder."""
        watchers: list[Watcher] = []
        # The branch tracker: the git dir (or, while there is none, the folder's own .git, waited for and then
        # watched as `git init` fills it), with a probe right after the watch is armed (catch_up).
        git_dir = git_watch_dir(state.path, state.branch.git_dir)
        self.git_watched[state.uri] = git_dir
        watchers.append(Watcher(f"git:{state.uri}", [git_dir], git_state_filter,
                                functools.partial(self.on_git_change, state.uri), catch_up=True))
        if git_dir == git_watch_dir(state.path, None):
            # A `.git` entry of the folder itself appearing or replaced (also a `.git` file: a linked worktree).
            watchers.append(Watcher(f"git-folder:{state.uri}", [state.path], lambda p: Path(p).name == ".git",
                                    functools.partial(self.on_git_change, state.uri), recursive=False))
        for store in state.host.runtime.stores:
            watchers.append(Watcher(f"runtime:{store.runtime_dir}", [store.runtime_dir], runtime_filter,
                                    functools.partial(self.on_runtime_change, state.uri), recursive=False))
        watchers.append(Watcher(f"documents:{state.host.root}", [state.host.root / "documents"], documents_filter,
                                functools.partial(self.on_documents_change, state.uri)))
        watchers.extend(self.records_feature.watchers_for(state))  # proposals written by other processes
        watchers.extend(self.views_feature.watchers_for(state))  # mnemon/memoryChanged for editor views
        self.watchers[state.uri] = watchers
        for watcher in watchers:
            watcher.start()

    async def stop_watchers(self, uri: str) -> None:
        """Stop one folder's watchers (all at once: each waits for its watch thread to notice the stop)."""
        await asyncio.gather(*(watcher.stop() for watcher in self.watchers.pop(uri, [])))

    async def on_git_change(self, uri: str, _paths: set[str]) -> None:
        """Re-probe the branch; notify ``mnemon/branchChanged`` when it changed. When the branch changed (or cannot be
        probed) the folder's cached cited files are forgotten (:mod:`mnemon_ls.citations.freshness`: a checkout
        rewrites the working tree) and the client is asked for its lenses again; a git event that moved nothing
        (the watcher's first look, ``git add``, a fetch) keeps them (the cache is also kept per file's size, mtime
        and inode, which a rewrite changes)."""
        state = self.registry.folders.get(uri)
        if state is None:
            return
        previous = state.branch
        current = await self.probe(state)
        if current is None or (current.branch, current.detached, current.reason) != (
                previous.branch, previous.detached, previous.reason):
            from ..citations import freshness
            from .lensrefresh import refresh_lenses

            freshness.invalidate_under(state.path)
            refresh_lenses(self)  # the cited lines may differ on the new branch
        if current is not None and git_watch_dir(state.path, current.git_dir) != self.git_watched.get(uri):
            # The repository appeared, moved or vanished: re-arm the watchers from a task of its own
            # (this callback runs inside the watcher being replaced); the new git watcher probes once armed.
            self.git_watched[uri] = git_watch_dir(state.path, current.git_dir)  # one restart per move
            asyncio.get_running_loop().create_task(self.restart_watchers(uri))
        if current is not None:
            self.update_branch(state, current)

    async def restart_watchers(self, uri: str) -> None:
        """Stop and start one folder's watchers (after its git dir changed)."""
        await self.stop_watchers(uri)
        state = self.registry.folders.get(uri)
        if state is not None and uri not in self.watchers:
            self.start_watchers(state)

    async def probe(self, state: FolderState) -> Any:
        """Probe the branch in a thread; ``None`` when a newer probe already finished (results are
        applied in the order the probes started, so a slow stale probe never overrides a newer one)."""
        state.probe_started += 1
        ticket = state.probe_started
        current = await asyncio.to_thread(state.host.branch_state)
        if ticket < state.probe_applied:
            return None
        state.probe_applied = ticket
        return current

    def update_branch(self, state: FolderState, current: Any) -> None:
        """Record a fresh probe; send ``mnemon/branchChanged`` when branch, detached or reason changed.

        Every probe goes through here (watcher, wake, start-up), so a change is announced exactly once
        whichever path saw it first.
        """
        previous = state.branch
        state.branch = current
        if (current.branch, current.detached, current.reason) != (previous.branch, previous.detached, previous.reason):
            self.protocol.notify(P.BRANCH_CHANGED, {
                "workspace": state.uri, "branch": current.branch, "detached": current.detached,
                "reason": current.reason, "previous": previous.branch})

    async def on_runtime_change(self, uri: str, _paths: set[str]) -> None:
        """Repair projections changed outside the server; notify about each repaired file."""
        state = self.registry.folders.get(uri)
        if state is None:
            return
        repairs = await asyncio.to_thread(run_held, state.host, state.host.runtime.repair)
        self.announce_repairs(uri, repairs)

    async def on_documents_change(self, uri: str, _paths: set[str]) -> None:
        """A managed document or the index changed outside the server: re-check hashes and the index."""
        state = self.registry.folders.get(uri)
        if state is not None:
            await asyncio.to_thread(run_held, state.host, state.host.documents.freshness.refresh)

    async def flush_access_forever(self, interval: float = 5.0) -> None:
        """Every ``interval`` seconds write pending access times of documents and spaces (no-op when none)."""
        while True:
            await asyncio.sleep(interval)
            for state in list(self.registry.folders.values()):
                try:
                    await asyncio.to_thread(run_held, state.host, state.host.flush)
                except Exception as exc:
                    log.warning("flushing access times failed: %s", exc)

    def announce_repairs(self, uri: str, repairs: list[Any]) -> None:
        """Send ``mnemon/projectionRepaired {workspace, file, preservedAs[, handEdit]}`` for every repaired
        file, then tell the person: ``window/showMessage``, or for an edit that was not applied a
        ``window/showMessageRequest`` whose "Open edit" action opens the saved edit
        (``window/showDocument``). ``handEdit`` is the store's result
        (:meth:`~mnemon_ls.runtime.repair.ProjectionRepair.repair`): ``{status:
        imported|rejected|leftover|format|conflict, message, savedAs?, added?, replaced?, removed?, problems?}``. A file
        that differed only in line endings or a BOM is announced without a message."""
        for store, report in repairs:
            for name in report.repaired:
                preserved = report.preserved.get(name)
                result = report.hand_edits.get(name)
                params: dict[str, Any] = {"workspace": uri, "file": str(store.runtime_dir / name),
                                          "preservedAs": preserved}
                if result is not None:
                    params["handEdit"] = result
                self.protocol.notify(P.PROJECTION_REPAIRED, params)
                if result is not None:
                    status = result["status"]
                    if status == "format":
                        continue
                    text = f"mnemon: {result['message']}"
                    if status in ("rejected", "conflict") and result.get("savedAs"):
                        self.offer_saved_edit(text, result["savedAs"])
                        continue
                    kind = types.MessageType.Info
                elif preserved:
                    text = (f"mnemon: {name} was edited outside mnemon; it was rebuilt from memories.json and your "
                            f"edit saved at {preserved}")
                    kind = types.MessageType.Warning
                else:
                    text = f"mnemon: {name} was missing or empty; rebuilt from memories.json"
                    kind = types.MessageType.Info
                self.window_show_message(types.ShowMessageParams(kind, text))

    def offer_saved_edit(self, text: str, saved: str) -> None:
        """A warning with an "Open edit" action (``window/showMessageRequest``), answered in a task of its
        own so no watcher waits for the person; the chosen action opens ``saved`` via ``window/showDocument``."""

        async def ask() -> None:
            try:
                choice = await self.window_show_message_request_async(types.ShowMessageRequestParams(
                    types.MessageType.Warning, text, [types.MessageActionItem(OPEN_EDIT)]))
                if choice is not None and choice.title == OPEN_EDIT and self.supports("window.show_document.support"):
                    uri = from_fs_path(saved) or Path(saved).as_uri()
                    await self.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
            except Exception as exc:  # the client may not answer or not support it
                log.info("window/showMessageRequest: %s", exc)

        asyncio.get_running_loop().create_task(ask())

    def announce_lost_edits(self, uri: str, store: Any, preserved: dict[str, str]) -> None:
        """A mutation's commit found hand edits the watcher had not imported yet: the mutation won the
        revision fence, the edits were saved (``preserved``: file name -> where it was saved); announce each
        like a rejected edit."""
        from ..runtime.store import RepairReport

        report = RepairReport(repaired=list(preserved), preserved=dict(preserved))
        for name, saved in preserved.items():
            report.hand_edits[name] = {"status": "conflict", "savedAs": saved, "message": (
                f"your edit of {name} was not applied: a write to memories.json came first (the revision "
                f"fence decides); {name} was rebuilt and your edit is saved at {saved}")}
        self.announce_repairs(uri, [(store, report)])

    def _observe_lost_edits(self, state: FolderState, _operation: Any, data: Any, error: Exception | None) -> None:
        """A Runtime receipt naming hand edits its commit saved aside (``preserved``): announce them."""
        if error is None and isinstance(data, dict) and data.get("preserved") and data.get("target"):
            self.announce_lost_edits(state.uri, state.host.runtime.store_for(data["target"]), data["preserved"])

    def session_for(self, uri: str) -> str:
        """The session of folder ``uri`` for the records' ``session`` scope and provenance (``lsp-<16 hex>``,
        fixed for this server's lifetime)."""
        return self.records_feature.session_id(uri)

    def observe(self, state: FolderState, operation: Any, data: Any, error: Exception | None) -> None:
        """Tell every observer about one finished operation (``data`` its result, or ``error``); an observer
        that fails is logged, never fails the request."""
        for observer in list(self.observers):
            try:
                observer(state, operation, data, error)
            except Exception:
                log.exception("observer %r failed", observer)

    # --------------------------------------------------------------- request helpers

    def request(self, method: str) -> Callable[[Handler], Handler]:
        """Register an async ``mnemon/*`` handler whose domain errors become JSON-RPC errors (no tracebacks)."""

        def decorate(fn: Handler) -> Handler:
            """Wrap and register ``fn`` for ``method``."""
            @functools.wraps(fn)
            async def wrapper(ls: MnemonLanguageServer, params: Any) -> Any:
                """Wait for the initial configuration, run the handler, map every error to a JSON-RPC error."""
                try:
                    ready = ls.ready()
                    if not ready.is_set():  # never serve with settings the client is about to override
                        try:  # (bounded wait; once set, no task or timer per request)
                            await asyncio.wait_for(ready.wait(), timeout=10)
                        except asyncio.TimeoutError:
                            pass
                    return await fn(ls, params)
                except JsonRpcException:
                    raise
                except Exception as exc:  # every error leaves as a JSON-RPC error with data.code
                    if not isinstance(exc, MnemonError) and storage_error(exc) is None:
                        log.exception("%s failed", method)
                    raise P.to_rpc_error(exc) from None

            self.feature(method)(wrapper)
            return wrapper

        return decorate
