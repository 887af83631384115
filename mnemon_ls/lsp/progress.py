"""``$/progress`` work done progress fed from a worker thread (:class:`Progress`), for operations that
report progress (:attr:`mnemon_ls.ops.base.Operation.progress`) and capacity maintenance."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from .core import MnemonLanguageServer

log = logging.getLogger("mnemon_ls.lsp.maintenance")


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
