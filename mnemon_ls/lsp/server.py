"""The mnemon-ls language server (pygls 2.x).

Lifecycle: ``initialize`` registers the workspace folders (``workspaceFolders``, else ``rootUri``) with
the settings of ``initializationOptions`` (the ``mnemon`` section, or the object itself); after
``initialized`` the server pulls ``workspace/configuration`` (section ``mnemon``, per folder) when the
client supports it, then starts, per folder, a git-state watcher and a projection watcher on the
storage root. Requests are the ``mnemon/*`` methods of :mod:`.protocol`; code actions and commands
offer "Remember selection" and "Show wake snapshot".

Every handler runs blocking store work in a worker thread, maps domain errors to JSON-RPC errors with
a stable ``data.code`` and never sends a traceback. Nothing but protocol is written to stdout. Frames
are read by :mod:`.framing` (it resynchronises after a malformed frame and answers malformed messages).

Start-up: answering ``initialize`` needs pygls and this module only. Settings (pydantic), the stores
and pygit2 are imported after the response is written (:meth:`MnemonLanguageServer.open_initial_folders`),
so keep the module-level imports here, in :mod:`.protocol` and in :mod:`mnemon_ls.host` light.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import os
import sys
import typing
from pathlib import Path
from typing import Any, Awaitable, Callable

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from .. import __version__
from ..errors import InvalidInput, MnemonError, storage_error
from ..host import FolderState, HostRegistry, uri_to_path
from ..view import ViewRegistry
from . import framing
from . import protocol as P
from . import records as records_feature
from . import views as views_feature
from .watch import Watcher, documents_filter, git_state_filter, runtime_filter

if typing.TYPE_CHECKING:
    from ..settings import Settings

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
        self.settings_problems: list[str] = []
        self.flush_task: asyncio.Task[None] | None = None
        # Set once the initial workspace/configuration pull is done; mnemon/* requests wait for it so
        # that none is served with default settings a folder is about to override.
        self.configured: asyncio.Event | None = None
        self.initialize_params: types.InitializeParams | None = None

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
        """Whether the client declared capability ``path`` (dotted snake_case, e.g. ``window.show_document.support``)."""
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
        """Validated settings of a folder; an invalid payload falls back to defaults and is reported."""
        from ..settings import load_settings

        raw = _merge(self.client_settings, self.folder_settings.get(uri, {}))
        try:
            return load_settings(raw)
        except InvalidInput as exc:
            message = f"mnemon-ls: invalid setting for {uri}: {exc.message}; using defaults"
            if message not in self.settings_problems:
                self.settings_problems.append(message)
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
            settings = self.settings_for(uri)
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
        git_dirs = [d for d in {state.branch.git_dir} if d]
        if git_dirs:
            watchers.append(Watcher(f"git:{state.uri}", [Path(d) for d in git_dirs], git_state_filter,
                                    functools.partial(self.on_git_change, state.uri)))
        else:
            # Not (yet) a repository: notice `git init` / a clone appearing in the folder itself.
            watchers.append(Watcher(f"git:{state.uri}", [state.path], lambda p: Path(p).name == ".git",
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
        """Stop one folder's watchers."""
        for watcher in self.watchers.pop(uri, []):
            await watcher.stop()

    async def on_git_change(self, uri: str, _paths: set[str]) -> None:
        """Re-probe the branch; notify ``mnemon/branchChanged`` when it changed."""
        state = self.registry.folders.get(uri)
        if state is None:
            return
        current = await self.probe(state)
        if current is not None and current.git_dir != state.branch.git_dir:
            # The repository appeared, moved or vanished: re-arm the watchers from a task of its own
            # (this callback runs inside the watcher being replaced).
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
        repairs = await asyncio.to_thread(state.host.runtime.repair)
        self.announce_repairs(uri, repairs)

    async def on_documents_change(self, uri: str, _paths: set[str]) -> None:
        """A managed document or the index changed outside the server: re-check hashes and the index."""
        state = self.registry.folders.get(uri)
        if state is not None:
            await asyncio.to_thread(state.host.documents.refresh)

    async def flush_access_forever(self, interval: float = 5.0) -> None:
        """Every ``interval`` seconds write pending access times of documents and spaces (no-op when none)."""
        while True:
            await asyncio.sleep(interval)
            for state in list(self.registry.folders.values()):
                try:
                    await asyncio.to_thread(state.host.flush)
                except Exception as exc:
                    log.warning("flushing access times failed: %s", exc)

    def announce_repairs(self, uri: str, repairs: list[Any]) -> None:
        """Send ``mnemon/projectionRepaired {workspace, file, preservedAs[, handEdit]}`` for every repaired
        file, then tell the person: ``window/showMessage``, or for an edit that was not applied a
        ``window/showMessageRequest`` whose "Open edit" action opens the saved edit
        (``window/showDocument``). ``handEdit`` is the store's result (:meth:`RuntimeStore.repair`):
        ``{status: imported|rejected|leftover|format|conflict, message, savedAs?, added?, replaced?,
        removed?, problems?}``. A file that differed only in line endings or a BOM is announced without
        a message."""
        for store, report in repairs:
            for name in report.repaired:
                preserved = report.preserved.get(name)
                result = report.hand_edits.get(name)
                params: dict[str, Any] = {"workspace": uri, "file": str(store.runtime_dir / name), "preservedAs": preserved}
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
                    text = f"mnemon: {name} was edited outside mnemon; it was rebuilt from memories.json and your edit saved at {preserved}"
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

    def announce_lost_edits(self, uri: str, store: Any, receipt: Any) -> None:
        """A mutation's commit found hand edits the watcher had not imported yet: the mutation won the
        revision fence, the edits were saved (``receipt.preserved``); announce each like a rejected edit."""
        from ..runtime.store import RepairReport

        report = RepairReport(repaired=list(receipt.preserved), preserved=dict(receipt.preserved))
        for name, saved in receipt.preserved.items():
            report.hand_edits[name] = {"status": "conflict", "savedAs": saved, "message": (
                f"your edit of {name} was not applied: a write to memories.json came first (the revision "
                f"fence decides); {name} was rebuilt and your edit is saved at {saved}")}
        self.announce_repairs(uri, [(store, report)])

    # --------------------------------------------------------------- request helpers

    async def wake_for(self, state: FolderState, branch: str | None = None, budget: int | None = None) -> dict[str, Any]:
        """Render the wake for a folder (repairing first) and announce repairs; the ``WakeSnapshot`` dict."""
        probed = None
        if branch is None:
            probed = await self.probe(state)
            if probed is not None:
                self.update_branch(state, probed)
            else:  # a newer probe already landed; render what it recorded
                probed = state.branch
        snapshot, repairs = await asyncio.to_thread(functools.partial(state.host.wake, branch, budget, probed=probed))
        self.announce_repairs(state.uri, repairs)
        return snapshot.to_dict() | {"workspace": state.uri}


server = MnemonLanguageServer()
Handler = Callable[..., Awaitable[Any]]


def mnemon_request(method: str) -> Callable[[Handler], Handler]:
    """Register an async ``mnemon/*`` handler whose domain errors become JSON-RPC errors (no tracebacks)."""

    def decorate(fn: Handler) -> Handler:
        """Wrap and register ``fn`` for ``method``."""
        @functools.wraps(fn)
        async def wrapper(ls: MnemonLanguageServer, params: Any) -> Any:
            """Wait for the initial configuration, run the handler, map every error to a JSON-RPC error."""
            try:
                try:  # never serve with settings the client is about to override (bounded wait)
                    await asyncio.wait_for(ls.ready().wait(), timeout=10)
                except asyncio.TimeoutError:
                    pass
                return await fn(ls, params)
            except JsonRpcException:
                raise
            except Exception as exc:  # every error leaves as a JSON-RPC error with data.code
                if not isinstance(exc, MnemonError) and storage_error(exc) is None:
                    log.exception("%s failed", method)
                raise P.to_rpc_error(exc) from None

        server.feature(method)(wrapper)
        return wrapper

    return decorate


# ------------------------------------------------------------------- lifecycle


@server.feature(types.INITIALIZE)
def on_initialize(ls: MnemonLanguageServer, params: types.InitializeParams) -> None:
    """``initialize``: answered at once; the folders are opened right after the response is written
    (:meth:`MnemonLanguageServer.open_initial_folders`), before the next message is read."""
    ls.initialize_params = params
    asyncio.get_running_loop().call_soon(ls.open_initial_folders)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: MnemonLanguageServer, _params: types.InitializedParams) -> None:
    """``initialized``: pull per-folder ``workspace/configuration``, start watchers, announce branches; then serve ``mnemon/*``."""
    try:
        await ls.pull_configuration()
    finally:
        ls.ready().set()
    for state in list(ls.registry.folders.values()):
        if state.uri not in ls.watchers:
            ls.start_watchers(state)
            # Start: import hand edits made while no server ran, repair crash leftovers, remove stray temps.
            try:
                await ls.on_runtime_change(state.uri, set())
            except Exception as exc:  # a busy or unreadable store is reported by the requests that need it
                log.warning("start-up repair of %s failed: %s", state.uri, exc)
            # A checkout between initialize and the watch being armed would otherwise go unseen.
            current = await ls.probe(state)
            if current is not None:
                ls.update_branch(state, current)
    if ls.flush_task is None:
        ls.flush_task = asyncio.get_running_loop().create_task(ls.flush_access_forever())
    await ls.records_feature.initialized()
    await ls.flush_problems()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def on_folders_changed(ls: MnemonLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """``workspace/didChangeWorkspaceFolders``: removed folders stop being served at once; added ones get roots and watchers."""
    for folder in params.event.removed:
        removed = ls.registry.remove_folder(folder.uri)  # first: no request may be served for it now
        ls.folder_settings.pop(folder.uri, None)
        await ls.stop_watchers(folder.uri)
        if removed is not None:
            await asyncio.to_thread(removed.host.close)
    for folder in params.event.added:
        state = ls.add_folder(folder.uri, folder.name)
        if state is not None:
            ls.start_watchers(state)
    await ls.pull_configuration()
    await ls.flush_problems()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration_changed(ls: MnemonLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    """``workspace/didChangeConfiguration``: re-pull section ``mnemon`` when supported, else use the pushed settings."""
    if ls.supports("workspace.configuration"):
        await ls.pull_configuration()
        return
    ls.client_settings = settings_section(params.settings)
    await ls.refresh_folders(list(ls.registry.folders))


@server.feature(types.SHUTDOWN)
async def on_shutdown(ls: MnemonLanguageServer, *_args: Any) -> None:
    """``shutdown``: stop watchers and the access flusher, flush and close every folder's Sources."""
    for uri in list(ls.watchers):
        await ls.stop_watchers(uri)
    if ls.flush_task is not None:
        ls.flush_task.cancel()
    await ls.records_feature.shutdown()
    for state in ls.registry.folders.values():
        await asyncio.to_thread(state.host.close)


# ------------------------------------------------------------------- mnemon/* requests


@mnemon_request(P.RUNTIME_MUTATE)
async def runtime_mutate(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/runtime/mutate`` (:class:`RuntimeMutateParams`) -> the Runtime receipt + ``workspace``."""
    from ..runtime import ops

    p = P.parse_params(P.RuntimeMutateParams, params)
    request = ops.validate_request(p.action, p.target, p.content, p.old_text, p.importance, p.branches)
    state = ls.registry.resolve(p.workspace)
    receipt = await asyncio.to_thread(state.host.runtime.mutate, request)
    if receipt.preserved:
        ls.announce_lost_edits(state.uri, state.host.runtime.store_for(request.target), receipt)
    return receipt.to_dict() | {"workspace": state.uri}


@mnemon_request(P.RUNTIME_SNAPSHOT)
async def runtime_snapshot(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/runtime/snapshot`` -> ``{workspace, revision, entries, usage: {user, memory}, problems}`` (all entries, no branch filter)."""
    p = P.parse_params(P.WorkspaceParams, params)
    state = ls.registry.resolve(p.workspace)
    effective = await asyncio.to_thread(state.host.runtime.read)
    limits = state.settings.runtime_memory
    return {
        "workspace": state.uri,
        "revision": effective.revision,
        "entries": [e.to_json() for e in (*effective.user, *effective.memory)],
        "usage": {t: {"used": effective.used[t], "limit": limits.limit_for(t)} for t in ("user", "memory")},
        "problems": list(effective.all_problems),
    }


@mnemon_request(P.WAKE)
async def wake(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/wake`` (:class:`WakeParams`) -> ``WakeSnapshot.to_dict()`` + ``workspace``; with ``viewId`` the View's pinned wake."""
    from ..runtime.model import branch_name_problem

    p = P.parse_params(P.WakeParams, params)
    if p.view_id is not None:
        return ls.views.get(p.view_id).wake
    state = ls.registry.resolve(p.workspace)
    if p.branch is not None and branch_name_problem(p.branch.strip()):
        raise InvalidInput("branch", f"{branch_name_problem(p.branch.strip())} (got {p.branch!r})")
    return await ls.wake_for(state, p.branch, p.budget_chars)


@mnemon_request(P.TURN_BEGIN)
async def turn_begin(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/turn/begin`` -> ``{viewId, wake, revisions, parentViewId}`` (a child reads its parent's pinned wake)."""
    p = P.parse_params(P.TurnBeginParams, params)
    if p.parent_view_id is not None:
        view = ls.views.begin_child(p.parent_view_id)
    else:
        state = ls.registry.resolve(p.workspace)
        snapshot = await ls.wake_for(state)
        view = ls.views.begin(state.uri, snapshot, {"runtime": snapshot["revision"]})
    ls.records_feature.turn_began(view.workspace)
    return {"viewId": view.view_id, "wake": view.wake, "revisions": view.revisions,
            "parentViewId": view.parent_view_id}


@mnemon_request(P.TURN_END)
async def turn_end(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/turn/end`` -> ``{viewId, ended: true}``; the View stays readable for its children. With
    ``activity`` (the turn's counts) also ``review``: the accumulated score and whether an idle review
    suggestion is armed (:meth:`mnemon_ls.lsp.records.RecordsFeature.turn_ended`)."""
    p = P.parse_params(P.TurnEndParams, params)
    records_feature.check_activity(p.activity)  # bad counts change nothing, not even the View
    view = ls.views.end(p.view_id)
    if p.activity is None:
        return {"viewId": view.view_id, "ended": True}
    review = await ls.records_feature.turn_ended(view.workspace, p.activity)
    return {"viewId": view.view_id, "ended": True, "review": review}


@mnemon_request(P.STATUS)
async def status(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/status`` -> ``{version, protocolVersion, workspaces: [{uri, name, path, root, userRoot, scope, branch, branchReason, detached, entries, usage, problems, documents}]}``."""
    P.parse_params(P._Params, params)

    def collect() -> list[dict[str, Any]]:
        """One status row per folder (runs in a worker thread): the Host's status with the folder's
        URI and name, and the branch the server last announced."""
        return [{"uri": state.uri, "name": state.name, **state.host.status(state.branch), "path": str(state.path),
                 **ls.records_feature.status_fields(state)} for state in list(ls.registry.folders.values())]

    return {"version": __version__, "protocolVersion": P.PROTOCOL_VERSION, "workspaces": await asyncio.to_thread(collect)}


# ------------------------------------------------------------------- mnemon/documents/*


async def _documents(ls: MnemonLanguageServer, workspace: str | None, call: Callable[[Any], Any]) -> dict[str, Any]:
    state = ls.registry.resolve(workspace)
    result = await asyncio.to_thread(call, state.host.documents)
    data = result.to_dict()
    # Editors open hits and list entries directly: give each its absolute path (relativePath is
    # relative to the storage root, which the editor does not know).
    for key in ("results", "documents"):
        for item in data.get(key, []) or []:
            if isinstance(item, dict) and item.get("relativePath") and "path" not in item:
                item["path"] = str(state.host.root / item["relativePath"])
    return data | {"workspace": state.uri}


@mnemon_request(P.DOCUMENTS_CREATE)
async def documents_create(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/create`` -> ``MutationResult.to_dict()`` (Documents Source)."""
    p = P.parse_params(P.DocumentCreateParams, params)
    return await _documents(ls, p.workspace, lambda d: d.create(
        p.title, p.content, description=p.description, source_paths=p.source_paths,
        expected_revision=p.expected_revision))


@mnemon_request(P.DOCUMENTS_UPDATE)
async def documents_update(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/update`` -> ``MutationResult.to_dict()``; archived documents are immutable (``document-status``)."""
    p = P.parse_params(P.DocumentUpdateParams, params)
    return await _documents(ls, p.workspace, lambda d: d.update(
        p.id, title=p.title, description=p.description, content=p.content, source_paths=p.source_paths,
        document_revision=p.document_revision, expected_revision=p.expected_revision))


@mnemon_request(P.DOCUMENTS_GET)
async def documents_get(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/get`` -> ``DocumentView.to_dict()`` (record, body, absolute path)."""
    p = P.parse_params(P.DocumentIdParams, params)
    return await _documents(ls, p.workspace, lambda d: d.get(p.id))


@mnemon_request(P.DOCUMENTS_LIST)
async def documents_list(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/list`` -> ``Catalog.to_dict()``; each document gains an absolute ``path``."""
    p = P.parse_params(P.DocumentListParams, params)
    return await _documents(ls, p.workspace, lambda d: d.list(p.status))


@mnemon_request(P.DOCUMENTS_SEARCH)
async def documents_search(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/search`` -> ``SearchResult.to_dict()``; each hit gains an absolute ``path``."""
    p = P.parse_params(P.DocumentSearchParams, params)
    return await _documents(ls, p.workspace, lambda d: d.search(
        p.query, include_archived=p.include_archived, limit=p.limit, include_content=p.include_content))


@mnemon_request(P.DOCUMENTS_ARCHIVE)
async def documents_archive(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/archive`` -> ``MutationResult.to_dict()`` (needs the current ``documentRevision``)."""
    p = P.parse_params(P.DocumentArchiveParams, params)
    return await _documents(ls, p.workspace, lambda d: d.archive(
        p.id, p.document_revision, summary=p.summary, expected_revision=p.expected_revision))


@mnemon_request(P.DOCUMENTS_RESTORE)
async def documents_restore(ls: MnemonLanguageServer, params: Any) -> dict[str, Any]:
    """``mnemon/documents/restore`` -> ``MutationResult.to_dict()`` (a new active revision)."""
    p = P.parse_params(P.DocumentRestoreParams, params)
    return await _documents(ls, p.workspace, lambda d: d.restore(
        p.id, document_revision=p.document_revision, expected_revision=p.expected_revision))


# ------------------------------------------------------------------- Memory Spaces


async def _spaces(ls: MnemonLanguageServer, workspace: str | None, call: Callable[[Any], Any]) -> Any:
    state = ls.registry.resolve(workspace)
    result = await asyncio.to_thread(call, state.host)
    if isinstance(result, list):
        return {"spaces": [item.to_dict() for item in result], "workspace": state.uri}
    data = result.to_dict() if hasattr(result, "to_dict") else result
    return data | {"workspace": state.uri}


@mnemon_request(P.SPACES_LIST)
async def spaces_list(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/list`` -> ``{spaces: [SpaceView], workspace}`` (credential field names only, never values)."""
    p = P.parse_params(P.SpacesListParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.list_spaces(active_only=p.active_only))


@mnemon_request(P.SPACES_CREATE)
async def spaces_create(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/create`` -> ``SpaceView`` (the first native space gets id ``default``)."""
    p = P.parse_params(P.SpaceCreateParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.create_space(p.name, p.description, active=p.active))


@mnemon_request(P.SPACES_UPDATE)
async def spaces_update(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/update`` -> ``SpaceView``."""
    p = P.parse_params(P.SpaceUpdateParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.update_space(p.space_id, name=p.name,
                                                                          description=p.description))


@mnemon_request(P.SPACES_ACTIVATE)
async def spaces_activate(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/activate`` -> ``SpaceView`` (active spaces are read by recall)."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.activate(p.space_id))


@mnemon_request(P.SPACES_DEACTIVATE)
async def spaces_deactivate(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/deactivate`` -> ``SpaceView``."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.deactivate(p.space_id))


@mnemon_request(P.SPACES_DELETE)
async def spaces_delete(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/delete`` -> ``{deleted, providerId, defaultStore, message}`` (never the last native store)."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.delete_space(p.space_id))


@mnemon_request(P.SPACES_STATUS)
async def spaces_status(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/status`` -> ``{space, status}`` (counts, edges, schema, index)."""
    p = P.parse_params(P.SpaceIdParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.space_status(p.space_id))


@mnemon_request(P.SPACES_MERGE)
async def spaces_merge(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/spaces/merge`` -> ``{targetId, status, sources: [...]}`` (non-destructive; sources deactivated only when fully accounted for)."""
    p = P.parse_params(P.SpaceMergeParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.merge(p.source_ids, p.target_id,
                                                                   deactivate_sources=p.deactivate_sources))


@mnemon_request(P.REMEMBER)
async def remember(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/remember`` -> ``WriteReceipt.to_dict()``; ``scopeToBranch`` adds a ``branch:<current>`` tag."""
    p = P.parse_params(P.RememberParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.remember(
        p.content, space_id=p.space_id, category=p.category, importance=p.importance, tags=p.tags,
        entities=p.entities, source=p.source, branch=h.current_branch() if p.scope_to_branch else None))


@mnemon_request(P.RECALL)
async def recall(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/recall`` -> ``RecallResult.to_dict()`` with the workspace's branch scope (``branchRecall``, ``detachedHeadPolicy``)."""
    p = P.parse_params(P.RecallParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.recall(
        p.query, spaces=p.spaces, limit=p.limit, mode=p.mode, category=p.category, source=p.source,
        intent=p.intent))


@mnemon_request(P.RELATED)
async def related(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/related`` -> ``{spaceId, spaceName, id, items: [... depth, edgeType]}``."""
    p = P.parse_params(P.RelatedParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.related(
        p.space_id, p.id, depth=p.depth, edge_type=p.edge_type, limit=p.limit))


@mnemon_request(P.LINK)
async def link(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/link`` -> ``WriteReceipt.to_dict()`` (both ids must exist and not be forgotten)."""
    p = P.parse_params(P.LinkParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.link(
        p.space_id, p.source_id, p.target_id, edge_type=p.edge_type, weight=p.weight))


@mnemon_request(P.FORGET)
async def forget(ls: MnemonLanguageServer, params: Any) -> Any:
    """``mnemon/forget`` -> ``WriteReceipt.to_dict()`` (soft delete by exact id)."""
    p = P.parse_params(P.ForgetParams, params)
    return await _spaces(ls, p.workspace, lambda h: h.spaces.forget(p.space_id, p.id))


# ------------------------------------------------------------------- code actions and commands


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[P.CODE_ACTION_KIND]))
def code_action(ls: MnemonLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """``textDocument/codeAction``: Remember selection (MEMORY.md, for the branch, in an active space), Show wake snapshot, Create document from file; none on automatic triggers."""
    from ..runtime.model import normalize_text

    only = params.context.only
    if only and not any(str(kind) in ("", P.CODE_ACTION_KIND) or P.CODE_ACTION_KIND.startswith(f"{kind}.")
                        for kind in only):
        return []
    # Automatic requests (VS Code asks on every cursor move) get nothing: a light bulb on every line
    # would be noise. Explicit requests (menu, keybinding) and requests asking for our kind get actions.
    if params.context.trigger_kind == types.CodeActionTriggerKind.Automatic and not only:
        return []
    uri = params.text_document.uri
    try:
        state = ls.registry.resolve(uri)
    except MnemonError:
        return []
    actions: list[types.CodeAction] = []
    selection = params.range
    if selection.start != selection.end:
        document = ls.workspace.get_text_document(uri)
        try:
            text = document.text_in_client_range(selection)
        except Exception:
            text = ""
        if normalize_text(text):
            base = {"uri": uri, "text": text}
            actions.append(_action("Remember selection", P.CMD_REMEMBER, base))
            if state.branch.branch:
                actions.append(_action(f"Remember selection for branch {state.branch.branch}", P.CMD_REMEMBER,
                                       base | {"branches": [state.branch.branch]}))
            for space in _active_spaces(state)[:3]:
                actions.append(_action(f"Remember selection in space {space['name']}", P.CMD_REMEMBER,
                                       base | {"spaceId": space["id"]}))
    actions.append(_action("Show wake snapshot", P.CMD_SHOW_WAKE, {"uri": uri}))
    managed = Path(os.path.realpath(state.host.root / "documents"))
    path = Path(os.path.realpath(uri_to_path(uri))) if uri.startswith("file:") else None
    if path is not None and managed not in path.parents:
        actions.append(_action("Create document from file", P.CMD_CREATE_DOCUMENT, {"uri": uri}))
    return actions


def _active_spaces(state: FolderState) -> list[dict[str, Any]]:
    """Active Memory Spaces of a folder (``[]`` before the root has any), cheap enough for code actions."""
    if not (state.host.root / "data").is_dir():
        return []
    try:
        return [v.to_dict() for v in state.host.spaces.list_spaces(active_only=True)]
    except MnemonError:
        return []


def _as_domain_error(exc: Exception) -> MnemonError:
    """``exc`` as a :class:`MnemonError` (an unexpected one becomes ``internal-error``, logged here)."""
    if isinstance(exc, MnemonError):
        return exc
    if isinstance(exc, P.ValidationError):
        return P.invalid_input_from(exc)
    mapped = storage_error(exc)
    if mapped is not None:
        return mapped
    log.exception("command failed")
    error = MnemonError(f"internal error: {type(exc).__name__}: {exc}")
    return error


def _action(title: str, command: str, argument: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(title=title, kind=P.CODE_ACTION_KIND,
                            command=types.Command(title=title, command=command, arguments=[argument]))


def _command_arg(model: type, arguments: tuple[Any, ...]) -> Any:
    """The one argument object of a command, validated with ``model``; raises :class:`InvalidInput`
    (field ``arguments`` for a missing, ``null`` or extra argument, ``arguments[0]`` for a non-object)."""
    if len(arguments) != 1:
        raise InvalidInput("arguments", f"must hold exactly one argument object (got {len(arguments)})")
    if not isinstance(arguments[0], dict):
        raise InvalidInput("arguments[0]", "must be an object")
    return P.parse_params(model, arguments[0])


@server.command(P.CMD_REMEMBER)
async def remember_selection(ls: MnemonLanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.rememberSelection {uri, text, branches?, importance?, spaceId?}``: add the text to
    MEMORY.md (``branches`` scopes it), or with ``spaceId`` remember it in that Memory Space."""
    from ..runtime import ops

    try:
        a = _command_arg(P.RememberArgs, args)
        state = ls.registry.resolve(a.uri, "uri")
        if a.space_id is not None:
            return await _remember_in_space(ls, state, a)
        request = ops.validate_request("add", "memory", a.text, None, a.importance, a.branches)
        receipt = await asyncio.to_thread(state.host.runtime.mutate, request)
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = _as_domain_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: not remembered: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    scope = f" for branch {', '.join(request.branches)}" if request.branches and receipt.changed else ""
    ls.window_show_message(types.ShowMessageParams(
        types.MessageType.Info,
        f"mnemon: {receipt.message} MEMORY.md{scope}: {receipt.entry_count} "
        f"{'entry' if receipt.entry_count == 1 else 'entries'}, {receipt.used}/{receipt.limit} bytes"))
    return receipt.to_dict() | {"workspace": state.uri}


async def _remember_in_space(ls: MnemonLanguageServer, state: FolderState, a: Any) -> dict[str, Any]:
    """The space target of "Remember selection": whitespace-normalized text into Memory Space ``a.space_id``."""
    from ..runtime.model import normalize_text, validate_branches

    branches = validate_branches(a.branches, "memory", "branches")  # same rules and field names as MEMORY.md
    if len(branches) > 1:
        raise InvalidInput("branches", "a Memory Space item is scoped to one branch (got several)")
    branch = branches[0] if branches else None
    importance = {"critical": 5, "normal": 3, "low": 1}.get(a.importance or "normal")
    receipt = await asyncio.to_thread(state.host.spaces.remember, normalize_text(a.text), space_id=a.space_id,
                                      importance=importance, source="user", branch=branch)
    data = receipt.to_dict()
    ls.window_show_message(types.ShowMessageParams(
        types.MessageType.Info, f"mnemon: {data.get('message') or data['status']} (space {data.get('spaceName')})"))
    return data | {"success": True, "workspace": state.uri}


@server.command(P.CMD_SHOW_WAKE)
async def show_wake(ls: MnemonLanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.showWakeSnapshot {uri}``: write a read-only rendering under ``state/`` and show it."""
    try:
        a = _command_arg(P.ShowWakeArgs, args)
        state = ls.registry.resolve(a.uri, "uri")
        snapshot = await ls.wake_for(state)
        path = await asyncio.to_thread(_write_wake_file, state, snapshot["text"])
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = _as_domain_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    uri = from_fs_path(str(path)) or path.as_uri()
    shown = False
    if ls.supports("window.show_document.support"):
        try:
            result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
            shown = bool(result and result.success)
        except Exception as exc:
            log.warning("window/showDocument failed: %s", exc)
    return {"success": True, "text": snapshot["text"], "path": str(path), "uri": uri, "shown": shown,
            "revision": snapshot["revision"]}


@server.command(P.CMD_CREATE_DOCUMENT)
async def create_document_from_file(ls: MnemonLanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.createDocumentFromFile {uri, title?}``: a managed document from a workspace file,
    then opened (``window/showDocument`` when supported; otherwise the result's ``path``/``uri``)."""
    try:
        a = _command_arg(P.CreateDocumentArgs, args)
        path = uri_to_path(a.uri, "uri")
        state = ls.registry.resolve(a.uri, "uri")
        result = await asyncio.to_thread(state.host.documents.create_from_file, path, title=a.title)
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = _as_domain_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: no document created: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    data = result.to_dict()
    document = data["document"]
    uri = from_fs_path(document["path"]) or Path(document["path"]).as_uri()
    shown = False
    if ls.supports("window.show_document.support"):
        try:
            shown_result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
            shown = bool(shown_result and shown_result.success)
        except Exception as exc:
            log.warning("window/showDocument failed: %s", exc)
    # No success popup: the opened document (or the plugin, with the returned path) is the feedback.
    return data | {"workspace": state.uri, "path": document["path"], "uri": uri, "shown": shown}


def _write_wake_file(state: FolderState, text: str) -> Path:
    """``<root>/state/wake-<12 hex of the workspace path>.md`` (0400), replaced atomically."""
    from .. import fsio

    state_dir = state.host.root / "state"
    fsio.ensure_dir(state_dir)
    digest = hashlib.sha256(str(state.path).encode()).hexdigest()[:12]
    path = state_dir / f"wake-{digest}.md"
    fsio.write_file_atomically(path, text.encode("utf-8") + b"\n", mode=0o400)
    return path


records_feature.register(server, mnemon_request)  # mnemon/records/*, the auto-writer, review cues
views_feature.register(server)  # mnemon/memoryChanged (editor views refresh on it)


# ------------------------------------------------------------------- entry point


def run(tcp: str | None = None, log_file: str | None = None, verbose: int = 0) -> int:
    """Serve over stdio (default) or ``tcp`` ``HOST:PORT``; logs to ``log_file`` or stderr. Returns the exit code."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    if log_file:  # created 0600 like every file we write (the log may quote memory content)
        os.close(os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        try:
            os.chmod(log_file, 0o600)  # an existing log made wider by an older version
        except PermissionError:
            pass
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # pygls logs every message at INFO and every handler error with a traceback at ERROR; our handlers
    # already answer errors cleanly, so its loggers stay silent unless -vv.
    logging.getLogger("pygls").setLevel(logging.DEBUG if verbose >= 2 else logging.CRITICAL)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not host or not port.isdigit():
            print(f"mnemon-ls: error: --tcp: expected HOST:PORT (got {tcp!r})", file=sys.stderr)
            return 2
        return server.start_tcp(host, int(port))
    return server.start_io()
