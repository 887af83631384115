"""Capacity maintenance in the language server: ``mnemon/runtime/compact``, progress and notices (issue 9).

Registered from :mod:`.server` with :func:`register` (like :mod:`.records`).

- ``mnemon/runtime/compact`` ``{workspace?, revision, target, entries: [{content, importance,
  sourceIndexes, branches?}], pending?, workDoneToken?}`` calls
  :meth:`mnemon_ls.runtime.source.RuntimeSource.compact` (the same operation as ``mnemon-ls runtime
  compact``) and returns its receipt (``maintenance.kind`` ``local-compaction``) plus ``workspace``.
- Work that maintains capacity reports ``$/progress`` (work done progress: the request's
  ``workDoneToken`` when it carries one, else a server-created token when the client declares
  ``window.workDoneProgress``, else nothing) and ends with one ``mnemon/maintenanceCompleted``
  ``{workspace, kind, summary, receipt}`` notification carrying the maintenance receipt (for the operation
  layer's requests, such as ``mnemon/documents/create`` and ``update`` with their cold archival, through
  the server's observers).
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
from typing import TYPE_CHECKING, Any, Callable


from ..packgate import run_held
from .progress import Progress
from ..errors import InvalidInput, RuntimeCapacityError

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


def register(server: "MnemonLanguageServer", mnemon_request: Callable[[str], Callable[..., Any]]) -> None:
    """Attach :class:`MaintenanceFeature` as ``server.maintenance_feature``, observe the operations (a result
    carrying a maintenance receipt, a full USER.md) and register the handlers."""
    feature = server.maintenance_feature = MaintenanceFeature(server)  # type: ignore[attr-defined]

    def observe(state: "FolderState", _operation: Any, data: Any, error: Exception | None) -> None:
        if error is not None:
            feature.capacity_error(state, error)
        elif isinstance(data, dict) and isinstance(data.get("maintenance"), dict):
            feature.completed(state, data["maintenance"])

    server.observers.append(observe)

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
            ls.announce_lost_edits(state.uri, state.host.runtime.store_for(receipt.target), receipt.preserved)
        ls.maintenance_feature.completed(state, data["maintenance"])
        return data | {"workspace": state.uri}
