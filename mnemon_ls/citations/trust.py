"""Citation views a long-lived host may answer with no ``stat`` at all, because a file watch stands behind them.

:func:`mnemon_ls.citations.freshness.view` costs one ``stat`` per cited file even when nothing changed (a wake
of 200 cited entries: 200 system calls). In a long-lived host (the language server, the MCP server) a
:class:`~mnemon_ls.citations.watch.CitedWatch` watches the directories of the cited files; while a directory is
*armed* (its watch is in place), a view computed from the disk is *trusted*: answered again as it is until an
event in that directory (:func:`changed`), an invalidation of the freshness cache, or the watch going away
(:func:`disarm`) drops it.

Rules that keep a trusted view true:

- only a view of a file whose real path is its path as named (no symlink on the way below the workspace) is
  trusted, and it is kept under that file's directory: the one directory a change to it is reported in;
- a view is trusted only if no event, arm or disarm happened between the moment before its ``stat`` and the
  moment it is stored (a generation counter): a change the watch reports while the view is being computed, or
  a change made before the watch was in place, never leaves a stale view behind;
- a change is seen once the watch reports it (its debounce: :data:`mnemon_ls.citations.watch.STEP_MS` to
  :data:`~mnemon_ls.citations.watch.DEBOUNCE_MS` on an idle machine); ``textDocument/didSave`` and a branch
  switch invalidate at once (:func:`mnemon_ls.citations.freshness.invalidate`).

The directories a view needed but found unarmed are remembered (:func:`wanted`) for the watch to arm; a
listener (:func:`listen`) is told when one is new. Without a watch (a CLI process) nothing is armed, nothing is
trusted, and this module costs one set lookup per view. Base layer: imports nothing of the project.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Hashable, Iterable

#: Directories a watch may hold at most (a view of a file in any other directory is never trusted).
MAX_DIRECTORIES = 4096

_lock = threading.Lock()
#: Directory -> the keys of its trusted views.
_by_dir: dict[str, set[Hashable]] = {}
#: View key -> the view (a dict the caller copies before handing it out).
_trusted: dict[Hashable, dict[str, Any]] = {}
_armed: frozenset[str] = frozenset()
_wanted: set[str] = set()
_generation = 0
_listener: Callable[[], None] | None = None


def get(key: Hashable) -> dict[str, Any] | None:
    """The trusted view of ``key`` (not a copy: do not change it), or ``None``."""
    return _trusted.get(key)


def generation() -> int:
    """The counter :func:`offer` compares: read it before the ``stat`` a view is computed from."""
    return _generation


def offer(key: Hashable, directory: str, view: dict[str, Any], since: int) -> None:
    """Trust ``view`` of ``key`` (a file in ``directory``, absolute and real) when ``directory`` is armed and
    nothing happened since generation ``since``; otherwise remember ``directory`` as wanted by the watch."""
    new = False
    with _lock:
        if since == _generation and directory in _armed:
            _trusted[key] = view
            _by_dir.setdefault(directory, set()).add(key)
            return
        if directory not in _wanted and directory not in _armed and len(_wanted) < MAX_DIRECTORIES:
            _wanted.add(directory)
            new = True
    listener = _listener
    if new and listener is not None:
        listener()


def watching() -> bool:
    """Whether a watch listens in this process (:func:`listen`): without one, nothing is offered."""
    return _listener is not None


def wanted() -> list[str]:
    """Every directory a view has wanted armed, armed or not (sorted; at most :data:`MAX_DIRECTORIES`)."""
    with _lock:
        return sorted(_wanted | _armed)


def listen(listener: Callable[[], None] | None) -> None:
    """Call ``listener()`` (from the thread computing a view) when a directory is wanted for the first time;
    ``None`` stops it."""
    global _listener
    _listener = listener


def arm(directories: Iterable[str]) -> None:
    """``directories`` are under a watch from now on (it is in place: a change from now is reported)."""
    global _armed, _generation
    with _lock:
        _generation += 1
        _armed = frozenset(directories)
        _wanted.difference_update(_armed)


def disarm() -> None:
    """No directory is watched any more: every trusted view is dropped."""
    global _armed, _generation
    with _lock:
        _generation += 1
        _wanted.update(_armed)
        _armed = frozenset()
        _trusted.clear()
        _by_dir.clear()


def changed(paths: Iterable[str]) -> int:
    """The watch saw ``paths`` (absolute) change: drop the trusted views of files in their directories (and of
    files in a path that is itself a directory: one deleted or replaced); how many were dropped."""
    global _generation
    dropped = 0
    with _lock:
        _generation += 1
        for path in paths:
            for directory in (path, os.path.dirname(path)):
                for key in _by_dir.pop(directory, ()):
                    dropped += _trusted.pop(key, None) is not None
    return dropped


def forget(directory: str | None = None) -> None:
    """Drop the trusted views in ``directory`` (every one when ``None``): the freshness cache was invalidated."""
    global _generation
    with _lock:
        _generation += 1
        if directory is None:
            _trusted.clear()
            _by_dir.clear()
            return
        for key in _by_dir.pop(directory, ()):
            _trusted.pop(key, None)


def state() -> dict[str, int]:
    """``{armed, wanted, trusted}`` counts (for ``doctor`` and tests)."""
    with _lock:
        return {"armed": len(_armed), "wanted": len(_wanted), "trusted": len(_trusted)}
