"""Freshness of a citation against the working tree now (so per branch: a checkout changes the files).

- ``fresh``: the lines at ``startLine..endLine`` hash to the citation's ``sha256``;
- ``moved``: they do not, but the same number of lines elsewhere in the file does: ``movedTo`` is that range
  ``{startLine, endLine}`` (the one nearest the old start when several match); a write of the memory
  re-anchors it there (:func:`reanchored`);
- ``changed``: the text is found nowhere in the file (or the file is no longer text);
- ``renamed``: the file is not there, git reports it renamed (staged, or committed on this branch:
  :mod:`.renames`), and the lines are in the new file: ``renamedTo`` is its workspace-relative path, with
  ``movedTo`` when they are elsewhere in it; a write of the memory re-anchors it there (:func:`reanchored`).
  Renamed but the text found nowhere in the new file: ``changed`` with ``renamedTo``;
- ``gone``: the file is not there (on this branch) and git reports no rename of it, or a directory stands in
  its place;
- ``unknown``: there is no workspace, the file cannot be read, is over 2 MiB, or now links out of the workspace.

A file's lines are cached by its real path and kept while its size, mtime (ns), inode and device are the same
(one ``stat`` per evaluation); the results of a file are cached with it. :func:`invalidate` drops a path (the
language server calls it for the files its client reports saved or changed), :func:`invalidate_under` a working
tree (the language server's git watcher, at a branch switch), :func:`clear` drops all. In a long-lived host with
a :class:`~mnemon_ls.citations.watch.CitedWatch`, :func:`view` answers a watched file's citation with no
``stat`` at all until the watch reports a change (:mod:`.trust`). Base layer: imports only :mod:`.model`,
:mod:`.trust` and (for a missing file) :mod:`.renames`.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import trust
from .model import MAX_FILE_BYTES, BinaryFile, Citation, hash_lines, text_lines

#: Files whose lines the cache keeps at most (least recently used dropped first) ...
CACHE_FILES = 4096
#: ... and their bytes at most (sizes on disk), so that a wake over many cited files reads each once.
CACHE_BYTES = 64 * 1024 * 1024


@dataclass
class _Entry:
    signature: tuple[int, int, int, int]
    lines: list[str] | None  # None: binary
    results: dict[tuple[str, int, int], tuple[str, int | None]] = field(default_factory=dict)


_cache: "OrderedDict[str, _Entry]" = OrderedDict()
_cached_bytes = 0
_bases: dict[str, tuple[tuple[int, int, int, int], str]] = {}
#: Cited path (absolute, as named) -> (the file's size, mtime ns, inode, device; its real path), for a path that
#: passed the checks of :func:`evaluate` (a regular file inside the workspace, at most 2 MiB).
_paths: dict[str, tuple[tuple[int, int, int, int], str]] = {}
#: (cited path as named, file size, mtime ns, inode, device, citation) -> the citation's view (:func:`view`).
_views: dict[tuple[Any, ...], dict[str, Any]] = {}
#: (workspace, citation path) -> the absolute path it names.
_fulls: dict[tuple[Path, Citation], str] = {}
_lock = threading.Lock()
#: Lines read from disk since the process started (a test counts the cache's hits with it).
reads = 0


def invalidate(path: str | os.PathLike[str]) -> None:
    """Forget what is cached of ``path`` (absolute; its real path is dropped too)."""
    text = os.path.abspath(path)
    global _cached_bytes
    with _lock:
        for key in {text, os.path.realpath(text)}:
            dropped = _cache.pop(key, None)
            if dropped is not None:
                _cached_bytes -= dropped.signature[0]
        _paths.pop(text, None)
        _views.clear()
    trust.forget(os.path.dirname(text))
    trust.forget(os.path.dirname(os.path.realpath(text)))


def invalidate_under(directory: str | os.PathLike[str]) -> None:
    """Forget every cached file under ``directory`` (a branch switch of that working tree)."""
    global _cached_bytes
    prefixes = {os.path.abspath(directory).rstrip(os.sep) + os.sep, os.path.realpath(directory).rstrip(os.sep) + os.sep}
    with _lock:
        for key in [k for k in _cache if any(k.startswith(p) for p in prefixes)]:
            _cached_bytes -= _cache.pop(key).signature[0]
        for key in [k for k in _paths if any(k.startswith(p) for p in prefixes)]:
            del _paths[key]
        _views.clear()
        _bases.clear()
    trust.forget()


def clear() -> None:
    """Forget every cached file."""
    global _cached_bytes
    with _lock:
        _cache.clear()
        _cached_bytes = 0
        _bases.clear()
        _paths.clear()
        _views.clear()
    trust.forget()


def cached(real: str) -> bool:
    """Whether the lines of ``real`` (a real absolute path) are cached: a citation was evaluated against it."""
    return real in _cache


def stale_in(directories: set[str] | frozenset[str]) -> list[str]:
    """The cached files directly in ``directories`` (real, absolute) whose size, mtime, inode or device are no
    longer what is cached (or that are gone): the changes a watch armed after they were read could not see.
    Each is dropped from the cache (:func:`invalidate`)."""
    with _lock:
        candidates = [(real, entry.signature) for real, entry in _cache.items()
                      if os.path.dirname(real) in directories]
    stale = []
    for real, signature in candidates:
        try:
            info = os.stat(real)
            now: tuple[int, int, int, int] | None = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
        except OSError:
            now = None
        if now != signature:
            invalidate(real)
            stale.append(real)
    return stale


def _lines(real: str, info: os.stat_result) -> _Entry:
    global reads
    signature = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
    with _lock:
        entry = _cache.get(real)
        if entry is not None and entry.signature == signature:
            _cache.move_to_end(real)
            return entry
    with open(real, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    reads += 1
    try:
        lines: list[str] | None = text_lines(data)
    except BinaryFile:
        lines = None
    entry = _Entry(signature, lines)
    global _cached_bytes
    with _lock:
        previous = _cache.pop(real, None)
        if previous is not None:
            _cached_bytes -= previous.signature[0]
        _cache[real] = entry
        _cached_bytes += signature[0]
        while len(_cache) > 1 and (len(_cache) > CACHE_FILES or _cached_bytes > CACHE_BYTES):
            _cached_bytes -= _cache.popitem(last=False)[1].signature[0]
    return entry


def _real_base(base: str) -> str:
    """``os.path.realpath(base)`` of a workspace, kept while ``base`` itself has the same inode and mtime (a wake
    evaluates every citation of the same workspace; :func:`clear` and :func:`invalidate_under` drop it)."""
    try:
        info = os.lstat(base)
    except OSError:
        return os.path.realpath(base)
    signature = (info.st_ino, info.st_dev, info.st_mtime_ns, info.st_mode)
    with _lock:
        kept = _bases.get(base)
    if kept is not None and kept[0] == signature:
        return kept[1]
    real = os.path.realpath(base)
    with _lock:
        if len(_bases) > 64:
            _bases.clear()
        _bases[base] = (signature, real)
    return real


def _locate(lines: list[str], citation: Citation) -> tuple[str, int | None]:
    """``("fresh", None)``, ``("moved", new start)`` or ``("changed", None)``."""
    start, end = citation.start_line, citation.end_line
    count = end - start + 1
    if end <= len(lines) and hash_lines(lines[start - 1:end]) == citation.sha256:
        return "fresh", None
    best: int | None = None
    for first in range(0, len(lines) - count + 1):
        if hash_lines(lines[first:first + count]) == citation.sha256:
            candidate = first + 1
            if best is None or abs(candidate - start) < abs(best - start):
                best = candidate
    return ("moved", best) if best is not None else ("changed", None)


def evaluate(workspace: Path | None, citation: Citation) -> dict[str, Any]:
    """``{freshness, movedTo?: {startLine, endLine}}`` of ``citation`` in ``workspace``'s working tree now
    (module doc). Never raises for the file's state: what cannot be known is ``unknown``.

    One ``stat`` when the file is known: its path's verdict (regular, at most 2 MiB, its real path inside the
    workspace) is kept with the file's size, mtime, inode and device, and taken again while they are the same (a
    file replaced, or a link retargeted to another file, has another inode); otherwise the path is resolved
    (``lstat``, ``realpath``) and checked anew."""
    if workspace is None:
        return {"freshness": "unknown"}
    base = os.path.abspath(workspace)
    full = os.path.join(base, *citation.path.split("/"))
    try:
        info = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        return _renamed(workspace, citation)
    except OSError:
        return {"freshness": "unknown"}
    if stat.S_ISDIR(info.st_mode):
        return {"freshness": "gone"}
    signature = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
    with _lock:
        known = _paths.get(full)
    if known is not None and known[0] == signature:
        real = known[1]
    else:
        real = os.path.realpath(full)
        real_base = _real_base(base)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES or not real.startswith(real_base + os.sep):
            with _lock:
                _paths.pop(full, None)  # the verdict of an earlier file at this path no longer holds
            return {"freshness": "unknown"}
        with _lock:
            if len(_paths) >= 4 * CACHE_FILES:
                _paths.clear()
            _paths[full] = (signature, real)
    try:
        entry = _lines(real, info)
    except OSError:
        return {"freshness": "unknown"}
    if entry.lines is None:
        return {"freshness": "changed"}
    key = (citation.sha256, citation.start_line, citation.end_line)
    with _lock:
        found = entry.results.get(key)
    if found is None:
        found = _locate(entry.lines, citation)
        with _lock:
            entry.results[key] = found
    state, moved = found
    if state == "moved" and moved is not None:
        return {"freshness": "moved", "movedTo": {"startLine": moved,
                                                  "endLine": moved + citation.end_line - citation.start_line}}
    return {"freshness": state}


def _renamed(workspace: Path, citation: Citation) -> dict[str, Any]:
    """The state of a citation whose file is missing: ``gone``, or where git says the file went (module doc)."""
    from .renames import lookup

    target, cut = lookup(workspace, citation.path)
    if target is None:
        return {"freshness": "gone"} | ({"renameSearchCut": cut} if cut is not None else {})
    there = evaluate(workspace, Citation(target, citation.start_line, citation.end_line, citation.sha256,
                                         citation.symbol))
    state = there["freshness"]
    if state in ("fresh", "moved"):
        return {"freshness": "renamed", "renamedTo": target} | ({"movedTo": there["movedTo"]} if "movedTo" in there
                                                                 else {})
    return {"freshness": "gone" if state == "gone" else state, "renamedTo": target}


def view(workspace: Path | None, citation: Citation) -> dict[str, Any]:
    """The citation as a read shows it: :meth:`Citation.to_json` plus :func:`evaluate`'s keys (a new dict).

    No system call when a watch stands behind the file (:mod:`.trust`: a long-lived host's
    :class:`~mnemon_ls.citations.watch.CitedWatch`); otherwise one ``stat`` when the file was seen before: the
    view is kept with the file's size, mtime (ns), inode and device and answered again while they are the same
    (:func:`invalidate` and :func:`clear` drop what is kept)."""
    if workspace is None:
        return citation.to_json() | {"freshness": "unknown"}
    where = (workspace, citation)
    kept = trust.get(where)
    if kept is not None:
        return dict(kept)
    since = trust.generation()
    full = _fulls.get(where)
    if full is None:
        full = os.path.join(os.path.abspath(workspace), *citation.path.split("/"))
        if len(_fulls) >= 8 * CACHE_FILES:
            _fulls.clear()
        _fulls[where] = full
    try:
        info = os.stat(full)
    except OSError:
        kept = citation.to_json() | evaluate(workspace, citation)
        if kept["freshness"] == "gone" and trust.watching():
            base = _trustable_base(workspace)
            directory = os.path.realpath(os.path.dirname(full))
            if base is not None and directory == os.path.dirname(_expected(workspace, citation)):
                trust.offer(where, directory, kept, since, base)
        return dict(kept)
    key = (full, info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev, citation)
    with _lock:
        kept = _views.get(key)
    if kept is None:
        kept = citation.to_json() | evaluate(workspace, citation)
        with _lock:
            if len(_views) >= 8 * CACHE_FILES:
                _views.clear()
            _views[key] = kept
    known = _paths.get(full) if trust.watching() and info.st_nlink == 1 else None  # a hard link: never trusted
    if known is not None and known[0] == key[1:5] and known[1] == _expected(workspace, citation):  # checked now
        base = _trustable_base(workspace)
        if base is not None:
            trust.offer(where, os.path.dirname(known[1]), kept, since, base)
    return dict(kept)


def trusted(workspace: Path | None, citation: Citation) -> bool:
    """Whether :func:`view` of ``citation`` is answered from :mod:`.trust` now (a watch stands behind it)."""
    return trust.get((workspace, citation)) is not None


def _trustable_base(workspace: Path) -> str | None:
    """The workspace's absolute path when it is its real path, else ``None``: a workspace opened through a symlink
    can be retargeted under a watch of the old tree, so no view of it is trusted (each costs a ``stat``)."""
    base = os.path.abspath(workspace)
    return base if _real_base(base) == base else None


def _expected(workspace: Path, citation: Citation) -> str:
    """The real path ``citation`` names when no symlink stands below the workspace: the only case whose changes
    the file's own directory reports (:mod:`.trust`)."""
    return os.path.join(_real_base(os.path.abspath(workspace)), *citation.path.split("/"))


def reanchored(workspace: Path | None, citation: Citation) -> Citation:
    """``citation`` at the range it moved to (:func:`evaluate` says ``moved``) or in the file it was renamed to
    (``renamed``: ``renamedTo``, and ``movedTo`` when the lines moved too), else ``citation`` itself."""
    state = evaluate(workspace, citation)
    if state["freshness"] not in ("moved", "renamed"):
        return citation
    moved = state.get("movedTo") or {"startLine": citation.start_line, "endLine": citation.end_line}
    return Citation(state.get("renamedTo", citation.path), moved["startLine"], moved["endLine"], citation.sha256,
                    citation.symbol)
