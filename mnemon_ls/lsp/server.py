"""The mnemon-ls language server (pygls 2.x).

This module creates the server object (:mod:`.core`) and handles its lifecycle (folders, settings, watchers,
branch announcements); the feature modules are attached at import: :mod:`.actions` (code actions),
:mod:`.records` (the auto-writer and review cues) and the notices of the others. Every ``mnemon/*``
request is an operation of :mod:`mnemon_ls.ops` (the wake, the turn Views and ``mnemon/status`` too: session
operations, :mod:`mnemon_ls.ops.session`), bound by :mod:`.operations` right after ``initialize`` is answered;
every ``workspace/executeCommand`` command is an operation's :class:`~mnemon_ls.ops.surfaces.LspCommand`,
bound by :mod:`.commands` at import (``initialize`` advertises them).

Lifecycle: ``initialize`` registers the workspace folders (``workspaceFolders``, else ``rootUri``) with
the settings of ``initializationOptions`` (the ``mnemon`` section, or the object itself); after
``initialized`` the server pulls ``workspace/configuration`` (section ``mnemon``, per folder) when the
client supports it, then starts, per folder, a git-state watcher and a projection watcher on the
storage root. Requests are the ``mnemon/*`` methods of the operation layer; code actions and commands
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
import logging
import os
import sys
from typing import Any

from lsprotocol import types

from . import actions as actions_feature
from . import cited as cited_feature
from . import commands as commands_binding
from . import records as records_feature
from . import semantic as semantic_feature
from . import packs as packs_feature
from . import maintenance as maintenance_feature
from . import operations as operations_binding
from . import views as views_feature
from .core import MnemonLanguageServer, settings_section

log = logging.getLogger("mnemon_ls.lsp")

server = MnemonLanguageServer()
#: Register an async ``mnemon/*`` handler on the one server (:meth:`MnemonLanguageServer.request`).
mnemon_request = server.request
server.binders.append(lambda: operations_binding.bind(mnemon_request))


# ------------------------------------------------------------------- lifecycle


@server.feature(types.INITIALIZE)
def on_initialize(ls: MnemonLanguageServer, params: types.InitializeParams) -> None:
    """``initialize``: answered at once; the folders are opened right after the response is written
    (:meth:`MnemonLanguageServer.open_initial_folders`), before the next message is read."""
    ls.initialize_params = params
    asyncio.get_running_loop().call_soon(ls.open_initial_folders)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: MnemonLanguageServer, _params: types.InitializedParams) -> None:
    """``initialized``: pull per-folder ``workspace/configuration``, start watchers, announce branches; then serve
    ``mnemon/*``."""
    try:
        await ls.pull_configuration()
    finally:
        ls.ready().set()
    for state in list(ls.registry.folders.values()):
        ls.semantic_progress.watch(state.host)  # $/progress of background embedding (lsp/semantic.py)
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
    cited_feature.start_watch(ls)  # citation views of watched files: no stat per wake (citations/trust.py)
    await ls.flush_problems()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def on_folders_changed(ls: MnemonLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """``workspace/didChangeWorkspaceFolders``: removed folders stop being served at once; added ones get roots and
    watchers."""
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
    await cited_feature.stop_watch(ls)
    if ls.flush_task is not None:
        ls.flush_task.cancel()
    await ls.records_feature.shutdown()
    for state in ls.registry.folders.values():
        await asyncio.to_thread(state.host.close)


# The editor commands (workspace/executeCommand), every LspCommand of the operation layer in one loop: before
# initialize, whose answer advertises them.
commands_binding.bind(server)
# The feature modules, one per tier (their handlers are collected at import and attached here).
actions_feature.feature.attach(server)
cited_feature.register(server)  # code lenses and hovers on cited code, refreshed after writes
records_feature.register(server)  # the auto-writer, review cues, mnemon/recordProposed
semantic_feature.register(server)  # $/progress of background embedding
packs_feature.register(server)  # mnemon/pack/export|exportFolder|inspect|import
views_feature.register(server)  # mnemon/memoryChanged (editor views refresh on it)
maintenance_feature.register(server)  # maintenance notices (observers of the operations)


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
        from .. import output
        from ..errors import echo_repr

        output.install(level)
        host, _, port = tcp.rpartition(":")
        from ..digits import ascii_int

        number = ascii_int(port, signed=False)
        if not host or number is None:
            print(f"mnemon-ls: error: --tcp: expected HOST:PORT (got {echo_repr(tcp)})", file=sys.stderr)
            return 2
        return server.start_tcp(host, number)
    from .. import output  # stdout is the JSON-RPC wire alone; third-party output goes to the log (debug)

    output.install(level)
    return server.start_io(sys.stdin.buffer, output.reserve_stdout())
