"""Capacity maintenance in the language server: ``mnemon/runtime/compact``, progress and notices (issue 9).

Registered from :mod:`.server` with :func:`register` (like :mod:`.records`).

- ``mnemon/runtime/compact`` ``{workspace?, revision, target, entries: [{content, importance,
  sourceIndexes, branches?}], pending?, workDoneToken?}`` calls
  :meth:`mnemon_ls.runtime.source.RuntimeSource.compact` (the same operation as ``mnemon-ls runtime
  compact``) and returns its receipt (``maintenance.kind`` ``local-compaction``) plus ``workspace``.
- Work that maintains capacity reports ``$/progress`` (work done progress: the request's
  ``workDoneToken`` when it carries one, else a server-created token when the client declares
  ``window.workDoneProgress``, else nothing) and ends with one ``mnemon/maintenanceCompleted``
  ``{workspace, kind, summary, receipt}`` notification carrying the maintenance receipt. Documents cold
  archival (:mod:`mnemon_ls.maintenance.documents`) runs inside ``mnemon/documents/create`` and
  ``update`` through :func:`documents_create` / :func:`documents_update`.
- A ``runtime-capacity`` error of ``target=user`` that carries the compaction plan (``data.maintenance``)
  is also announced as ``mnemon/maintenanceRequired`` ``{workspace, target, file (absolute USER.md
  path), message, plan}`` (:meth:`MaintenanceFeature.capacity_error`), so the editor can offer
  "USER.md is full: compact it with your assistant, or open it".

No pydantic at import time (the server imports this module before answering ``initialize``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types

from ..packs.gate import run_held
from ..errors import InvalidInput, RuntimeCapacityError
from . import protocol as P

if TYPE_CHECKING:
    from ..host import FolderState
    from .server import MnemonLanguageServer

log = logging.getLogger("mnemon_ls.lsp.maintenance")

RUNTIME_COMPACT = "mnemon/runtime/compact"
MAINTENANCE_COMPLETED = "mnemon/maintenanceCompleted"
MAINTENANCE_REQUIRED = "mnemon/maintenanceRequired"
#: The message editors show for a full USER.md (issue 9 item 5).
USER_FULL_MESSAGE = "USER.md is full: compact it with your assistant, or open it"
_COMPACT_KEYS = {"workspace", "revision", "target", "entries", "pending", "workDoneToken"}


class Progress:
    """One ``$/progress`` work done progress, fed from a worker thread (:meth:`callback`).

    ``token`` is the request's ``workDoneToken`` or ``None``; without one a token is created with
    ``window/workDoneProgress/create`` when the client supports it. Nothing is sent before the first
    report, so a create that fits without archival shows no progress. Reports keep their order.
    """

    def __init__(self, ls: "MnemonLanguageServer", title: str, token: Any = None) -> None:
        self.ls = ls
        self.title = title
        self.token = token
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[str, int | None] | None] = asyncio.Queue()
        self.task = self.loop.create_task(self._pump())
        self.begun = False

    def callback(self, message: str, percentage: int | None) -> None:
        """Queue a report (thread-safe; the ``progress`` argument of the maintenance operations)."""
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (message, percentage))

    def report(self, message: str, percentage: int | None = None) -> None:
        """Queue a report from the event loop."""
        self.queue.put_nowait((message, percentage))

    async def _pump(self) -> None:
        while True:
            item = await self.queue.get()
            if item is None:
                return
            message, percentage = item
            try:
                if not self.begun:
                    if not await self._start():
                        continue
                    self.begun = True
                    self.ls.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(
                        title=self.title, message=message, percentage=percentage, cancellable=False))
                else:
                    self.ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                        message=message, percentage=percentage))
            except Exception as exc:  # a client that refuses progress never fails the work
                log.info("$/progress: %s", exc)

    async def _start(self) -> bool:
        if self.token is not None:
            return True
        if not self.ls.supports("window.work_done_progress"):
            return False
        token = f"mnemon-maintenance-{uuid.uuid4().hex}"
        try:
            await asyncio.wait_for(self.ls.work_done_progress.create_async(token), 5)
        except Exception as exc:
            log.info("window/workDoneProgress/create: %s", exc)
            return False
        self.token = token
        return True

    async def finish(self, message: str | None = None) -> None:
        """Send the last queued reports and ``end`` (when anything began)."""
        self.queue.put_nowait(None)
        await self.task
        if self.begun:
            try:
                self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            except Exception as exc:
                log.info("$/progress end: %s", exc)


class MaintenanceFeature:
    """Notices of capacity maintenance (module doc); ``server.maintenance_feature``."""

    def __init__(self, ls: "MnemonLanguageServer") -> None:
        self.ls = ls

    def completed(self, state: "FolderState", receipt: dict[str, Any]) -> None:
        """Send ``mnemon/maintenanceCompleted {workspace, kind, summary, receipt}``."""
        self.ls.protocol.notify(MAINTENANCE_COMPLETED, {"workspace": state.uri, "kind": receipt.get("kind"),
                                                        "summary": receipt.get("summary") or "", "receipt": receipt})

    def capacity_error(self, state: "FolderState", error: Exception) -> None:
        """Announce a ``target=user`` ``runtime-capacity`` error with a plan as ``mnemon/maintenanceRequired``."""
        if not isinstance(error, RuntimeCapacityError) or not isinstance(error.data.get("maintenance"), dict):
            return
        plan = error.data["maintenance"]
        store = state.host.runtime.store_for(plan["target"])
        self.ls.protocol.notify(MAINTENANCE_REQUIRED, {
            "workspace": state.uri, "target": plan["target"], "file": str(store.projection_path(plan["target"])),
            "message": USER_FULL_MESSAGE if plan["target"] == "user" else error.message, "plan": plan})

    async def run(self, state: "FolderState", title: str, token: Any, work: Callable[[Any], Any]) -> Any:
        """Run ``work(progress_callback)`` in a worker thread with :class:`Progress`; when its result's dict
        has a ``maintenance`` receipt, send ``mnemon/maintenanceCompleted``. Returns the result's dict."""
        progress = Progress(self.ls, title, token)
        try:
            result = await asyncio.to_thread(run_held, state.host, work, progress.callback)
        except BaseException:
            await progress.finish("failed")
            raise
        data = result.to_dict() if hasattr(result, "to_dict") else result
        receipt = data.get("maintenance") if isinstance(data, dict) else None
        await progress.finish(receipt.get("summary") if isinstance(receipt, dict) else None)
        if isinstance(receipt, dict):
            self.completed(state, receipt)
        return data


def _token(params: Any) -> Any:
    return params.get("workDoneToken") if isinstance(params, dict) else None


def _without_token(params: Any) -> Any:
    return {k: v for k, v in params.items() if k != "workDoneToken"} if isinstance(params, dict) else params


async def documents_create(ls: "MnemonLanguageServer", params: Any) -> dict[str, Any]:
    """``mnemon/documents/create`` with cold archival (:func:`mnemon_ls.maintenance.documents.create_document`)."""
    from ..maintenance import documents as cold

    p = P.parse_params(P.DocumentCreateParams, _without_token(params))
    state = ls.registry.resolve(p.workspace)
    data = await ls.maintenance_feature.run(state, "Archiving documents", _token(params), lambda progress: (
        cold.create_document(state.host, p.title, p.content, description=p.description, source_paths=p.source_paths,
                             expected_revision=p.expected_revision, progress=progress)))
    return _with_paths(state, data)


async def documents_update(ls: "MnemonLanguageServer", params: Any) -> dict[str, Any]:
    """``mnemon/documents/update`` with cold archival (:func:`mnemon_ls.maintenance.documents.update_document`)."""
    from ..maintenance import documents as cold

    p = P.parse_params(P.DocumentUpdateParams, _without_token(params))
    state = ls.registry.resolve(p.workspace)
    data = await ls.maintenance_feature.run(state, "Archiving documents", _token(params), lambda progress: (
        cold.update_document(state.host, p.id, title=p.title, description=p.description, content=p.content,
                             source_paths=p.source_paths, document_revision=p.document_revision,
                             expected_revision=p.expected_revision, progress=progress)))
    return _with_paths(state, data)


def _with_paths(state: "FolderState", data: dict[str, Any]) -> dict[str, Any]:
    return data | {"workspace": state.uri}


def register(server: "MnemonLanguageServer", mnemon_request: Callable[[str], Callable[..., Any]]) -> None:
    """Attach :class:`MaintenanceFeature` as ``server.maintenance_feature`` and register the handlers."""
    server.maintenance_feature = MaintenanceFeature(server)  # type: ignore[attr-defined]

    @mnemon_request(RUNTIME_COMPACT)
    async def runtime_compact(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/runtime/compact`` -> the Runtime receipt (``maintenance``) + ``workspace`` (module doc)."""
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise InvalidInput("params", "must be an object")
        unknown = sorted(set(params) - _COMPACT_KEYS)
        if unknown:
            raise InvalidInput(unknown[0], "is not a known field (workspace, revision, target, entries, pending)")
        for key in ("revision", "target"):
            if not isinstance(params.get(key), str):
                raise InvalidInput(key, "is required (a string)" if key not in params else "must be a string")
        if params.get("workspace") is not None and not isinstance(params["workspace"], str):
            raise InvalidInput("workspace", "must be a string")
        state = ls.registry.resolve(params.get("workspace"))
        target = params["target"]
        progress = Progress(ls, f"Compacting {'USER.md' if target == 'user' else 'MEMORY.md'}", _token(params))
        progress.report("Checking the compaction against the plan")
        try:
            receipt = await asyncio.to_thread(run_held, state.host, functools.partial(
                state.host.runtime.compact, params["revision"], target, params.get("entries"), params.get("pending")))
        except BaseException:
            await progress.finish("refused: nothing changed")
            raise
        data = receipt.to_dict()
        await progress.finish(data["maintenance"]["summary"])
        if receipt.preserved:
            ls.announce_lost_edits(state.uri, state.host.runtime.store_for(receipt.target), receipt)
        ls.maintenance_feature.completed(state, data["maintenance"])
        return data | {"workspace": state.uri}
