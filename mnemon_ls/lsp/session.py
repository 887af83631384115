"""The language server's session as its session operations see it: :class:`LspSession`, the server's
:class:`~mnemon_ls.ops.client.ClientSession`.

:mod:`.operations` runs an operation whose :class:`~mnemon_ls.ops.base.LspMethod` says ``session`` (``mnemon/wake``,
``mnemon/turn/begin``, ``mnemon/turn/end``, ``mnemon/status``) in a worker thread with one of these as
``call.client``. What touches the server's event loop (branch probes and their announcements, repair
announcements, the review timers) runs there, and the worker waits for it; the Views
(:class:`~mnemon_ls.view.ViewRegistry`) and the folders (:class:`~mnemon_ls.folders.HostRegistry` reads a snapshot)
are safe from any thread, and a folder's records status is read in the worker.

No pydantic at import time (the server imports this module before answering ``initialize``).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..folders import FolderState
    from .core import MnemonLanguageServer


class LspSession:
    """The session hooks of one server (module doc); made for each session request on the server's ``loop``."""

    def __init__(self, ls: "MnemonLanguageServer", loop: asyncio.AbstractEventLoop) -> None:
        self.ls = ls
        self.loop = loop
        self.views = ls.views

    def _on_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` run on the server's event loop (awaited when it returns an awaitable) while this worker
        thread waits; its result, or what it raised. Called on the loop itself (a test), a plain ``fn`` runs
        at once."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            result = fn(*args)
            if inspect.isawaitable(result):
                raise RuntimeError("a session hook that awaits must be called from a worker thread")
            return result

        async def run() -> Any:
            result = fn(*args)
            return await result if inspect.isawaitable(result) else result

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result()

    def folder(self, workspace: str | None) -> "FolderState":
        """The folder of ``workspace`` (:meth:`~mnemon_ls.folders.HostRegistry.resolve`, safe from this thread)."""
        return self.ls.registry.resolve(workspace)

    def folders(self) -> list["FolderState"]:
        """Every open folder (a snapshot)."""
        return list(self.ls.registry.folders.values())

    def branch(self, folder: "FolderState") -> Any:
        """Probe the folder's branch and announce a change; a newer probe's branch when one already landed."""
        return self._on_loop(self._probe, folder)

    async def _probe(self, state: "FolderState") -> Any:
        probed = await self.ls.probe(state)
        if probed is None:  # a newer probe already landed: render what it recorded
            return state.branch
        self.ls.update_branch(state, probed)
        return probed

    def repaired(self, folder: "FolderState", repairs: list[Any]) -> None:
        """Announce the projections a wake repaired (:meth:`~.core.MnemonLanguageServer.announce_repairs`;
        nothing to do, and no trip to the event loop, when none was)."""
        if any(report.repaired for _store, report in repairs):
            self._on_loop(self.ls.announce_repairs, folder.uri, repairs)

    def turn_began(self, uri: str) -> None:
        """A turn began in folder ``uri``: its pending review suggestion is cancelled, on the event loop, before
        the request is answered (the loop runs it before it hears that this worker finished), without this
        worker waiting for it."""
        self.loop.call_soon_threadsafe(self.ls.records_feature.turn_began, uri)

    def turn_ended(self, uri: str, activity: Any) -> dict[str, Any]:
        """A turn of folder ``uri`` ended with ``activity``: the ``review`` answer
        (:meth:`.records.RecordsFeature.turn_ended`)."""
        return self._on_loop(self.ls.records_feature.turn_ended, uri, activity)

    def status(self, folder: "FolderState") -> dict[str, Any]:
        """The records fields of the folder's status (read in this worker thread; never raises)."""
        return self.ls.records_feature.status_fields(folder)
