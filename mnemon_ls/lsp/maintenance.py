"""Capacity maintenance in the language server: progress and notices (issue 9).

Attached from :mod:`.server` with :func:`register` (like :mod:`.records`). ``mnemon/runtime/compact`` is the
operation ``runtime.compact`` (:mod:`mnemon_ls.ops.runtime`), bound with the others; what it causes is said
here, by an observer of every operation:

- Work that maintains capacity reports ``$/progress`` (work done progress: the request's
  ``workDoneToken`` when it carries one, else a server-created token when the client declares
  ``window.workDoneProgress``, else nothing) and ends with one ``mnemon/maintenanceCompleted``
  ``{workspace, kind, summary, receipt}`` notification carrying the maintenance receipt (an operation's
  result with a ``maintenance`` receipt: a compaction, ``mnemon/documents/create`` and ``update`` with their
  cold archival, a MEMORY.md overflow archived by ``mnemon/runtime/mutate``).
- A ``runtime-capacity`` error of ``target=user`` that carries the compaction plan (``data.maintenance``)
  is also announced as ``mnemon/maintenanceRequired`` ``{workspace, target, file (absolute USER.md
  path), message, plan}`` (:meth:`MaintenanceFeature.capacity_error`), so the editor can offer
  "USER.md is full: compact it with your assistant, or open it" and a pick of the entries to merge or drop.

No pydantic at import time (the server imports this module before answering ``initialize``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

from ..errors import RuntimeCapacityError
from ..packgate import run_held
from .progress import Progress

if TYPE_CHECKING:
    from ..folders import FolderState
    from .core import MnemonLanguageServer

log = logging.getLogger("mnemon_ls.lsp.maintenance")

MAINTENANCE_COMPLETED = "mnemon/maintenanceCompleted"
MAINTENANCE_REQUIRED = "mnemon/maintenanceRequired"
#: The message editors show for a full USER.md (issue 9 item 5).
USER_FULL_MESSAGE = "USER.md is full: compact it with your assistant, or open it"


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


def register(server: "MnemonLanguageServer") -> None:
    """Attach :class:`MaintenanceFeature` as ``server.maintenance_feature`` and observe the operations (a result
    carrying a maintenance receipt, a full USER.md)."""
    feature = server.maintenance_feature = MaintenanceFeature(server)  # type: ignore[attr-defined]

    def observe(state: "FolderState", _operation: Any, data: Any, error: Exception | None) -> None:
        if error is not None:
            feature.capacity_error(state, error)
        elif isinstance(data, dict) and isinstance(data.get("maintenance"), dict):
            feature.completed(state, data["maintenance"])

    server.observers.append(observe)
