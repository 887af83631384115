"""Server-side file watching (watchfiles): git state per workspace folder, projections per storage root.

The server does not rely on the client's ``workspace/didChangeWatchedFiles`` (Neovim has none on
Linux). Each watcher is an asyncio task around :func:`watchfiles.awatch` with a short debounce; it calls
an async callback with the batch of changed paths and never raises out of the task (errors are logged
and the watch is re-armed after a pause).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

log = logging.getLogger(__name__)

#: Milliseconds watchfiles waits for more changes before yielding a batch.
STEP_MS = 20
#: Longest milliseconds one batch may keep growing.
DEBOUNCE_MS = 80
#: Names inside a git dir whose change can change the branch: HEAD and the rebase/bisect state, the ref
#: files (``packed-refs``; ``refs/heads/*`` is matched by :func:`git_state_filter`: the first commit of an
#: unborn branch creates its ref and leaves HEAD alone), and the parts ``git init`` creates that make a
#: ``.git`` directory a repository (``objects``, ``refs``).
GIT_STATE_NAMES = {"HEAD", "BISECT_START", "head-name", "rebase-merge", "rebase-apply", "commondir", "gitdir",
                   "packed-refs", "objects", "refs"}
#: Names inside ``runtime/`` a repair cares about.
RUNTIME_NAMES = {"memories.json", "USER.md", "MEMORY.md"}

Callback = Callable[[set[str]], Awaitable[None]]


class Watcher:
    """Watch ``paths`` (recursively or not), passing names accepted by ``accept`` to ``callback``.

    ``start()`` creates the task on the running loop; ``stop()`` ends it and waits. Paths that do not
    exist are replaced by their nearest existing ancestor (watched non-recursively) until they appear,
    then the watch is re-armed on the real path; a watched path that is deleted goes back to that wait.

    When a path appears, when the watch is armed again after it failed (the user's inotify instances ran out:
    a loaded machine with many servers), and, with ``catch_up``, when it is first armed, the callback is called
    once with every watched path, *after* the new watch is armed: a change made while the watch was being
    re-armed (or was down) is then either seen by that call or arrives as a batch (nothing falls in between).
    Batches wait for that call to finish, so the callback never runs twice at once.
    """

    def __init__(self, name: str, paths: list[Path], accept: Callable[[str], bool], callback: Callback,
                 recursive: bool = True, catch_up: bool = False) -> None:
        self.name = name
        self.paths = [Path(p) for p in paths]
        self.accept = accept
        self.callback = callback
        self.recursive = recursive
        self.catch_up = catch_up
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching (idempotent)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"watch:{self.name}")

    async def stop(self) -> None:
        """Stop watching and wait for the task to finish (never called from the watcher's own task).

        A cancellation of the caller is re-raised after cancelling the watch, so shutdown never
        continues into code that would start new watchers.
        """
        self._stop.set()
        task, self._task = self._task, None
        if task is None or task is asyncio.current_task():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except asyncio.TimeoutError:
            task.cancel()
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def _look(self) -> None:
        """The catch-up call (class doc): after the quiet period a batch gets, the callback on every path."""
        await asyncio.sleep(STEP_MS / 1000)
        try:
            await self.callback({str(p) for p in self.paths})
        except Exception:
            log.exception("watcher %s: callback failed", self.name)

    async def _run(self) -> None:
        was_waiting = False
        first = True
        failed = False  # the last watch failed (e.g. the user's inotify instances ran out): changes were not seen
        roots = {str(p) for p in self.paths}
        while not self._stop.is_set():
            existing = [p for p in self.paths if p.is_dir()]
            waiting = [_nearest_existing(p) for p in self.paths if not p.is_dir()]
            look = not waiting and (was_waiting or failed or (first and self.catch_up))
            first = False
            was_waiting = bool(waiting)
            failed = False
            targets = list(dict.fromkeys([*existing, *waiting]))
            if not targets:
                return
            recursive = self.recursive and not waiting
            import watchfiles  # here, not at module level: the server imports this module before `initialize`

            # The catch-up task first runs when this task next yields, which is inside awatch's first step,
            # after its RustNotify has added the watches (awatch creates it before its first await).
            catching_up = asyncio.get_running_loop().create_task(self._look()) if look else None
            try:
                async for changes in watchfiles.awatch(
                    *targets,
                    watch_filter=None,
                    debounce=DEBOUNCE_MS,
                    step=STEP_MS,
                    stop_event=self._stop,
                    recursive=recursive,
                    ignore_permission_denied=True,
                ):
                    if waiting:
                        break  # something appeared on the way to a missing path: re-arm closer to it
                    if catching_up is not None:
                        await catching_up
                        catching_up = None
                    paths = {path for _, path in changes if self.accept(path)}
                    if paths:
                        try:
                            await self.callback(paths)
                        except Exception:  # never let one bad batch end the watch
                            log.exception("watcher %s: callback failed", self.name)
                    if any(path in roots and not os.path.isdir(path) for _, path in changes):
                        break  # a watched directory was deleted: wait for it to appear again
                else:
                    if not self._stop.is_set():
                        await asyncio.sleep(0.2)  # the watched dir vanished; look again shortly
            except Exception:
                failed = True  # what changed until the watch is armed again is announced then (the catch-up call)
                log.warning("watcher %s: %s; retrying", self.name, "watch failed", exc_info=True)
                try:
                    await asyncio.wait_for(self._stop.wait(), timeout=1.0)
                except asyncio.TimeoutError:
                    pass
            finally:
                if catching_up is not None:
                    if self._stop.is_set():
                        catching_up.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await catching_up


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.is_dir() and probe.parent != probe:
        probe = probe.parent
    return probe


def git_state_filter(path: str) -> bool:
    """True for paths under a git dir that can change the branch: HEAD, rebase and bisect state, branch refs
    (``refs/heads/...``, ``packed-refs``) and the parts of a repository being created (:data:`GIT_STATE_NAMES`)."""
    parts = Path(path).parts
    if not parts:
        return False
    if parts[-1] in GIT_STATE_NAMES or any(p in ("rebase-merge", "rebase-apply") for p in parts[-3:]):
        return True
    return any(parts[i] == "refs" and parts[i + 1] == "heads" for i in range(len(parts) - 1))


def git_watch_dir(folder: Path, git_dir: str | None) -> Path:
    """The directory the branch watcher of a workspace folder watches: the git dir a probe found
    (:attr:`mnemon_ls.gitstate.BranchState.git_dir`), else the folder's own ``.git`` (real path), which the
    watcher waits for while it does not exist and watches while ``git init`` fills it, so a probe that saw a
    half-made repository (``.git has no HEAD``) is followed by one that sees it whole."""
    return Path(git_dir) if git_dir else Path(os.path.realpath(folder)) / ".git"


def runtime_filter(path: str) -> bool:
    """True for the Runtime truth file and its projections (and the runtime dir appearing)."""
    name = os.path.basename(path)
    return name in RUNTIME_NAMES or name == "runtime"


#: Side files of the Documents Source that are soft or derived state (changes to them need no refresh).
_DOCUMENT_SIDE = (".index.lock", ".access", ".search.sqlite3", ".cover.json")


def documents_filter(path: str) -> bool:
    """True for managed documents and ``index.json``; false for locks, temp files and derived side files."""
    name = os.path.basename(path)
    return not (name.startswith(_DOCUMENT_SIDE) or name.endswith((".tmp", ".lock", "-journal", "-wal", "-shm")))
