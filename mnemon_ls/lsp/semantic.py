"""``$/progress`` for background embedding (issue 11): the language server's side of
:meth:`mnemon_ls.semantic.engine.SemanticEngine.listen`.

When the client supports ``window.workDoneProgress``, a sweep of at least
:data:`~mnemon_ls.semantic.engine.PROGRESS_MIN` items (the first start on an existing space, a model
change, an import) shows as one work-done progress: ``window/workDoneProgress/create`` with token
``mnemon-semantic-<n>``, then ``begin`` (title ``Mnemon: embedding memories``), ``report`` (message
``<embedded>/<total> items``, percentage) and ``end``. Events arrive on the embedding thread and are handed
to the server's event loop; a client that refuses the token just gets no progress.

Registered from :mod:`.server` with :func:`register`; :meth:`SemanticProgress.watch` is called for each
folder's host and also loads the model in a worker thread (a write never loads it itself).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any

from lsprotocol import types

log = logging.getLogger(__name__)
TITLE = "Mnemon: embedding memories"


class SemanticProgress:
    """Forwards one server's engines' progress events as ``$/progress`` (module doc)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._watched: set[int] = set()
        self._counter = itertools.count(1)
        self._token: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._order: asyncio.Lock | None = None

    def _supported(self) -> bool:
        params = getattr(self.server, "initialize_params", None)
        window = getattr(getattr(params, "capabilities", None), "window", None)
        return bool(getattr(window, "work_done_progress", False))

    def watch(self, host: Any) -> None:
        """Listen to ``host.semantic`` (once per engine; nothing when semantic recall is off)."""
        try:
            engine = host.semantic
        except Exception as exc:  # noqa: BLE001 - bad settings are reported elsewhere
            log.info("semantic engine unavailable: %s", exc)
            return
        if engine is None or id(engine) in self._watched:
            return
        self._watched.add(id(engine))
        self._loop = asyncio.get_running_loop()
        self._order = self._order or asyncio.Lock()
        engine.listen(self._event)
        # Load the model now, off the event loop, so that remembers are embedded from the start.
        self._loop.create_task(asyncio.to_thread(engine.embedder))

    def _event(self, kind: str, progress: dict) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed() and self._supported():
            loop.call_soon_threadsafe(lambda: loop.create_task(self._send(kind, progress)))

    async def _send(self, kind: str, progress: dict) -> None:
        assert self._order is not None
        async with self._order:  # begin (which awaits the token's creation) before report and end
            await self._send_one(kind, progress)

    async def _send_one(self, kind: str, progress: dict) -> None:
        embedded = sum(s.get("embedded", 0) for s in progress.get("spaces", {}).values())
        total = sum(s.get("total", 0) for s in progress.get("spaces", {}).values())
        message = f"{embedded}/{total} items with {progress.get('model')}"
        percentage = min(100, int(100 * embedded / total)) if total else None
        work = self.server.work_done_progress
        try:
            if kind == "begin":
                if self._token is not None:
                    return
                token = self._token = f"mnemon-semantic-{next(self._counter)}"
                await work.create_async(token)
                work.begin(token, types.WorkDoneProgressBegin(title=TITLE, message=message, percentage=percentage,
                                                               cancellable=False))
            elif kind == "report" and self._token is not None:
                work.report(self._token, types.WorkDoneProgressReport(message=message, percentage=percentage))
            elif kind == "end" and self._token is not None:
                token, self._token = self._token, None
                work.end(token, types.WorkDoneProgressEnd(message=message))
        except Exception as exc:  # noqa: BLE001 - a client that refuses progress gets none
            log.info("semantic $/progress not sent: %s", exc)
            self._token = None


def register(server: Any) -> None:
    """Attach :class:`SemanticProgress` as ``server.semantic_progress``."""
    server.semantic_progress = SemanticProgress(server)
