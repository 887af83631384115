"""The access counters of a long-lived server, written beside the requests instead of inside one (issue 27
items 2 and 5).

A native space keeps the access bookkeeping of its reads in memory (``access_count`` + n,
``last_accessed_at``, the ``recall``/``search`` oplog rows; :mod:`.providers.native_recall`) and writes it once
:data:`~.providers.native_schema.ACCESS_FLUSH_THRESHOLD` hits are pending. A process of one command writes them
in the read that crossed the threshold (and at ``close()``). A long-lived server (the language server, the MCP
server: a :class:`~mnemon_ls.host.WorkspaceHost` that is not ``one_shot``) hands them to an
:class:`AccessFlusher` instead: the read returns at once, its answer is sent, and the flusher's thread writes
the counters on a connection of its own (:meth:`NativeProvider.flush_access_aside
<mnemon_ls.spaces.providers.native_recall.NativeRecall.flush_access_aside>`), so a recall that comes meanwhile
reads on (WAL: the write blocks no reader) instead of waiting for ~1,000 row updates and the checkpoint after
them (40 ms alone, 40-300 ms on a loaded disk).

What is written is the same: every hit once, the latest access time, the oplog rows in read order. A batch the
store refuses (busy, full disk) goes back to the pending counters and is written with the next one. A clean
shutdown loses nothing: :meth:`AccessFlusher.close` waits for the batch under way, and the provider's
``close()`` writes what is left. A crash loses what was not committed: the pending hits (fewer than the
threshold, as before) plus, when the crash falls inside a background write, that batch (SQLite commits it
whole or not at all); a provider whose background write has not caught up writes inline again at
:data:`PENDING_CAP` hits, so at most ``PENDING_CAP`` hits of one space are ever unwritten.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Callable

log = logging.getLogger("mnemon_ls")

#: Pending hits at which a provider writes inline although a background write was asked for (the flusher
#: cannot keep up, or the store refused it): bounds the memory and what a crash can lose.
PENDING_CAP = 4000

#: Test seam: called with ``"commit"`` inside each write beside the requests, its rows written, just before
#: ``COMMIT``, and with ``"done"`` after it (committed or not), in the writing thread.
_step_hook: Callable[[str], None] | None = None


def step(name: str) -> None:
    """Call the test seam :data:`_step_hook` with ``name``, if one is set."""
    if _step_hook is not None:
        _step_hook(name)


class AccessFlusher:
    """One daemon thread that writes the access counters of the providers handed to :meth:`due`, one after the
    other (started at the first :meth:`due`), each write inside ``gate()`` when given (an error there, such as
    :class:`~mnemon_ls.errors.StoreBusy` from a pack import that keeps it, leaves the counters pending). Thread-safe."""

    def __init__(self, gate: Callable[[], Any] | None = None, name: str = "mnemon-access-flush") -> None:
        #: A context manager factory held around each write (the host's pack gate, shared: a pack import in
        #: another process waits for the write, as for a request), or ``None``.
        self._gate = gate
        self._name = name
        self._cond = threading.Condition()
        self._due: dict[int, Any] = {}  # id(provider) -> provider, in the order asked
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (:meth:`due` then returns False and the caller writes inline)."""
        return self._closed

    def due(self, provider: Any) -> bool:
        """Ask for ``provider.flush_access_aside(due=True)`` in the flusher's thread (once, however often asked
        before it runs). Returns False when the flusher is closed (the caller then writes inline)."""
        with self._cond:
            if self._closed:
                return False
            self._due.setdefault(id(provider), provider)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()
            return True

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due and not self._closed:
                    self._cond.wait()
                if not self._due:
                    return
                _key, provider = next(iter(self._due.items()))
                del self._due[_key]
                self._busy = True
            try:
                with self._gate() if self._gate is not None else contextlib.nullcontext():
                    provider.flush_access_aside(due=True)
            except Exception as exc:  # soft state: a failed write is kept pending by the provider
                log.warning("mnemon-ls: access counters not written: %s", exc)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is due or being written; False when ``timeout`` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._due and not self._busy, timeout)

    def close(self) -> None:
        """Write what is due, stop the thread and wait for it (safe to call twice). Later :meth:`due` calls
        return False."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
