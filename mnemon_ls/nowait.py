"""No-wait mode: run a read on an event loop only while nothing makes it wait, else give it back to a thread.

An MCP tool call is answered on the server's event loop; an operation that may block (a lock another
process or thread holds, a write and its fsyncs, a rebuild that scales with the store) runs in a worker
thread instead, and the hop there and back costs more than a warm wake does (issue 27 item 2). An operation
that declares itself a read (:attr:`mnemon_ls.ops.surfaces.Operation.inline`) is first run on the loop
inside :func:`no_wait`; every place that would wait or write calls :func:`check`, which raises
:class:`WouldWait` there, before it has changed anything, and the caller runs the whole operation again in a
worker thread (:func:`mnemon_ls.ops.execute.execute_async`). Where it checks:

- the pack gate (:mod:`mnemon_ls.packgate`) when an import holds it, and a killed import's swap to finish;
- every store lock (:func:`mnemon_ls.fsio.file_lock`) and every durable write of :mod:`mnemon_ls.fsio`;
- a native Memory Space's in-process lock held by another thread (:class:`Lock`), its writes, its busy
  retries and its side-index catch-up.

A place that is not checked only runs on the loop (correct, and as slow as it is); :class:`WouldWait` derives
from :class:`BaseException` so that no ``except Exception`` on the way (a cover that degrades to a notice)
mistakes it for a failure. The mode is per thread: a worker thread never sees it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

_state = threading.local()


class WouldWait(BaseException):
    """Raised by :func:`check` inside :func:`no_wait`: the operation would wait or write at ``args[0]`` (what,
    e.g. a lock file's path). Nothing has been changed by the check itself; run the operation in a thread."""


def active() -> bool:
    """Whether this thread is inside :func:`no_wait`."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def no_wait() -> Iterator[None]:
    """Run the body in no-wait mode on this thread (module doc): :func:`check` raises :class:`WouldWait`. The
    actions :func:`after` put off run when the outermost body returns (in order), and are dropped when it
    raises (the operation is run again, whole, in a worker thread)."""
    depth = getattr(_state, "depth", 0)
    if depth == 0:
        _state.deferred = []
    _state.depth = depth + 1
    ok = False
    try:
        yield
        ok = True
    finally:
        _state.depth -= 1
        if _state.depth == 0:
            deferred, _state.deferred = _state.deferred, []
            if ok:
                for action in deferred:
                    action()


def after(action: Callable[[], None]) -> None:
    """Run ``action()`` now, or in no-wait mode when the body succeeds (:func:`no_wait`): for an in-memory
    side effect of a read (a recall's access counts) that a run given back to a thread must not do twice."""
    if getattr(_state, "depth", 0) > 0:
        _state.deferred.append(action)
    else:
        action()


def check(what: Any) -> None:
    """Raise :class:`WouldWait` naming ``what`` (a path or a short description) when in no-wait mode; else
    return. Called before the first side effect of anything that may wait or write."""
    if getattr(_state, "depth", 0) > 0:
        raise WouldWait(str(what))


class Lock:
    """A reentrant lock (:class:`threading.RLock`) that, in no-wait mode, raises :class:`WouldWait` instead of
    waiting for another thread's hold. ``with lock:``, ``acquire(blocking=True, timeout=-1)`` and
    ``release()`` as the RLock's."""

    __slots__ = ("_lock", "name")

    def __init__(self, name: str = "a lock") -> None:
        self._lock = threading.RLock()
        self.name = name

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock (as :meth:`threading.RLock.acquire`); in no-wait mode never waits: raises
        :class:`WouldWait` when another thread holds it."""
        if blocking and getattr(_state, "depth", 0) > 0:
            if self._lock.acquire(blocking=False):
                return True
            raise WouldWait(self.name)
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        """Release one hold (raises :class:`RuntimeError` when this thread holds none)."""
        self._lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()
