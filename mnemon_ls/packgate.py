"""The pack gate: a pack import is atomic for every other process using the same storage root.

A pack import swaps whole component directories (``data/``, ``documents/``, ``runtime/``) and files
(``state/.dsh-memory-bodies.last-good.json``, ``<root>/active``) one rename at a time. A command that read
the registry before the swap and a store after it (or found ``data/`` missing in between, or recreated it
by taking a lock there) saw a mix of two roots: "0 spaces are active", a write into a store the swap then
discarded, or a swap that failed halfway. The gate orders them instead:

- a command (one CLI process, one language-server or MCP request) holds the gate **shared** on its
  storage root(s) from before its first read to after its last write (:func:`hold` ``exclusive=False``);
- a pack import holds it **exclusive** from before it reads the root until its swap is done (after the
  ``.dsh-pack.lock`` marker, before the component locks: the same order as every reader, so no deadlock).

So a command sees the whole old root or the whole new one, and an acknowledged write is in the root that
stays. The gate is ``flock(2)`` on the storage root directory itself (shared or exclusive), which no
import ever renames: nothing is written to take it (a read-only command creates no file), and the kernel
releases the hold of a killed process. Each hold opens its own descriptor, so threads of one process
exclude each other like processes do. A root that does not exist yet has no gate (nothing to swap).
(filelock, the project's lock library, has shared holds only in its ``ReadWriteLock``: a SQLite database
file of its own that every read-only command would create in the root, at ~1 ms a hold against ~15 us here.)

Who holds it shared: every CLI command but ``pack`` (:meth:`~mnemon_ls.host.WorkspaceHost.hold_pack_gate`,
for the process's one command), ``pack export`` (:meth:`~mnemon_ls.host.WorkspaceHost.pack_gate`), the
language server's ``mnemon/spaces``, ``documents``, ``providers`` and ``runtime`` requests and every MCP tool
(:func:`run_held`), and the server's wake, code actions, projection repairs, access-time flushes and maintenance tasks.

Waits poll every :data:`mnemon_ls.fsio.LOCK_POLL_SECONDS` up to ``timeout`` seconds, then raise the
retryable :class:`~mnemon_ls.errors.StoreBusy` naming the root. Holding the gate shared and then asking for
it exclusive in the same thread waits for itself: an import is never run inside a shared hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator, Protocol, TypeVar

from . import fsio, nowait, realdirs
from .errors import StoreBusy



class Gated(Protocol):
    """What :func:`run_held` needs of a host (:class:`mnemon_ls.host.WorkspaceHost` is one)."""

    def pack_gate(self) -> ContextManager[Any]:
        """A context manager holding the host's pack gate shared."""
T = TypeVar("T")


@contextlib.contextmanager
def hold(roots: Iterable[Path | str], *, exclusive: bool, timeout: float = fsio.LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the gate of each existing root in ``roots`` (shared, or ``exclusive``) for the body, taken in
    the order of the roots' real paths (so two holders of the same roots never wait for each other in a
    cycle). Raises :class:`StoreBusy` after ``timeout`` seconds (``data``: ``file`` the root,
    ``timeoutSeconds``); nothing is held then."""
    with contextlib.ExitStack() as stack:
        opened: dict[str, int] = {}
        for root in roots:
            try:
                fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except (FileNotFoundError, NotADirectoryError):
                continue
            stack.callback(os.close, fd)  # closing the descriptor releases its hold
            # its real path: what the kernel says of the open directory (one readlink), else os.path.realpath
            opened.setdefault(realdirs.fd_path(fd) or os.path.realpath(root), fd)
        for real in sorted(opened):
            _acquire(opened[real], real, exclusive, timeout)
        yield


def _acquire(fd: int, root: str, exclusive: bool, timeout: float) -> None:
    operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, operation)
            return
        except BlockingIOError:
            nowait.check(root)  # an import holds it: an operation run on an event loop goes to a thread
            if time.monotonic() >= deadline:
                what = ("other commands are using it" if exclusive else "a pack import is replacing its memory")
                raise StoreBusy(f"{root}: {what} (waited {timeout:g} s); nothing was changed. Retry when it has "
                                "finished", file=root, timeoutSeconds=timeout) from None
            time.sleep(fsio.LOCK_POLL_SECONDS)


def run_held(host: Gated, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` with ``host``'s pack gate held shared (:meth:`~mnemon_ls.host.WorkspaceHost.pack_gate`):
    one language-server or MCP operation, run in a worker thread. Raises what ``call`` raises, or
    :class:`StoreBusy` when an import keeps the gate past the lock timeout."""
    with host.pack_gate():
        return call(*args)
