"""Citation views a long-lived host may answer with no ``stat`` at all, because a file watch stands behind them.

:func:`mnemon_ls.citations.freshness.view` costs one ``stat`` per cited file even when nothing changed (a wake
of 200 cited entries: 200 system calls). In a long-lived host (the language server, the MCP server) a
:class:`~mnemon_ls.citations.watch.CitedWatch` watches the directories of the cited files; while a directory is
*armed* (its watch is in place), a view computed from the disk is *trusted*: answered again as it is until an
event in that directory (:func:`changed`), an invalidation of the freshness cache, or the watch going away
(:func:`disarm`) drops it.

Rules that keep a trusted view true:

- only a view of a file whose real path is its path as named (no symlink on the way, the workspace's own path
  included) and that has one link (a hard link edited through its other name is reported in another
  directory) is trusted, and it is kept under that file's directory; it is trusted only while that directory
  and every directory above it up to the workspace are watched (:func:`chain`: a renamed or replaced ancestor
  is reported in its parent, never by inotify on the moved directory);
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

#: Directories a watch may hold at most, watched and wanted together (a view of a file in any other directory is
#: never trusted: it costs one ``stat``).
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


def chain(base: str, directory: str) -> list[str]:
    """``base`` and every directory from it down to ``directory`` (both absolute and real; ``directory`` at or
    below ``base``): the directories whose watches together see every way the path can change (a rename or a
    replacement of an ancestor is an event in its parent, which inotify on the moved directory never reports)."""
    found = [directory]
    probe = directory
    while probe != base and len(probe) > len(base):
        probe = os.path.dirname(probe)
        found.append(probe)
    return found[::-1]


def offer(key: Hashable, directory: str, view: dict[str, Any], since: int, base: str | None = None) -> None:
    """Trust ``view`` of ``key`` (a file in ``directory``, absolute and real) when ``directory`` and each of its
    ancestors down from ``base`` (the workspace's real path; :func:`chain`) are armed and nothing happened since
    generation ``since``; otherwise remember those directories as wanted by the watch (while watched and wanted
    directories together stay within :data:`MAX_DIRECTORIES`)."""
    needed = chain(base, directory) if base is not None else [directory]
    new = False
    with _lock:
        if since == _generation and all(d in _armed for d in needed):
            _trusted[key] = view
            _by_dir.setdefault(directory, set()).add(key)
            return
        missing = [d for d in needed if d not in _wanted and d not in _armed]
        if missing and len(_wanted) + len(_armed) + len(missing) <= MAX_DIRECTORIES:
            _wanted.update(missing)
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


def prune(gone: Iterable[str] | None = None) -> None:
    """Forget wanted directories: those in ``gone`` (no longer there: the watch drops them before it arms), or
    every one that is not armed when ``None`` (a host that stops watching)."""
    with _lock:
        if gone is None:
            _wanted.clear()
        else:
            _wanted.difference_update(gone)


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
    """The watch saw ``paths`` (absolute) change: drop the trusted views of files in their directories, and of
    every file at or under a path that is itself a directory (one renamed, deleted or replaced: everything below
    it moved with it); how many were dropped."""
    global _generation
    dropped = 0
    with _lock:
        _generation += 1
        for path in paths:
            below = path.rstrip(os.sep) + os.sep  # (only a watched directory can hold trusted views below it)
            under = [d for d in _by_dir if d == path or d.startswith(below)] if path in _armed else [path]
            for directory in under + [os.path.dirname(path)]:
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
