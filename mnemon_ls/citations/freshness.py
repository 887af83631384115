"""Freshness of a citation against the working tree now (so per branch: a checkout changes the files).

- ``fresh``: the lines at ``startLine..endLine`` hash to the citation's ``sha256``;
- ``moved``: they do not, but the same number of lines elsewhere in the file does: ``movedTo`` is that range
  ``{startLine, endLine}`` (the one nearest the old start when several match); a write of the memory
  re-anchors it there (:func:`reanchored`);
- ``changed``: the text is found nowhere in the file (or the file is no longer text);
- ``gone``: the file is not there (on this branch), or a directory stands in its place;
- ``unknown``: there is no workspace, the file cannot be read, is over 2 MiB, or now links out of the workspace.

A file's lines are cached by its real path and kept while its size, mtime (ns), inode and device are the same
(one ``stat`` per evaluation); the results of a file are cached with it. :func:`invalidate` drops a path (the
language server calls it for the files its client reports saved or changed), :func:`invalidate_under` a working
tree (the language server's git watcher, at a branch switch), :func:`clear` drops all.
Base layer: imports only :mod:`.model`.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model import MAX_FILE_BYTES, BinaryFile, Citation, hash_lines, text_lines

#: Files whose lines the cache keeps (least recently used dropped first).
CACHE_FILES = 256


@dataclass
class _Entry:
    signature: tuple[int, int, int, int]
    lines: list[str] | None  # None: binary
    results: dict[tuple[str, int, int], tuple[str, int | None]] = field(default_factory=dict)


_cache: "OrderedDict[str, _Entry]" = OrderedDict()
_bases: dict[str, tuple[tuple[int, int, int, int], str]] = {}
_lock = threading.Lock()
#: Lines read from disk since the process started (a test counts the cache's hits with it).
reads = 0


def invalidate(path: str | os.PathLike[str]) -> None:
    """Forget what is cached of ``path`` (absolute; its real path is dropped too)."""
    text = os.path.abspath(path)
    with _lock:
        _cache.pop(text, None)
        _cache.pop(os.path.realpath(text), None)


def invalidate_under(directory: str | os.PathLike[str]) -> None:
    """Forget every cached file under ``directory`` (a branch switch of that working tree)."""
    prefixes = {os.path.abspath(directory).rstrip(os.sep) + os.sep, os.path.realpath(directory).rstrip(os.sep) + os.sep}
    with _lock:
        for key in [k for k in _cache if any(k.startswith(p) for p in prefixes)]:
            del _cache[key]
        _bases.clear()


def clear() -> None:
    """Forget every cached file."""
    with _lock:
        _cache.clear()
        _bases.clear()


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
    with _lock:
        _cache[real] = entry
        _cache.move_to_end(real)
        while len(_cache) > CACHE_FILES:
            _cache.popitem(last=False)
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
    (module doc). Never raises for the file's state: what cannot be known is ``unknown``."""
    if workspace is None:
        return {"freshness": "unknown"}
    base = os.path.abspath(workspace)
    full = os.path.join(base, *citation.path.split("/"))
    try:
        os.lstat(full)
        info = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        return {"freshness": "gone"}
    except OSError:
        return {"freshness": "unknown"}
    if stat.S_ISDIR(info.st_mode):
        return {"freshness": "gone"}
    real = os.path.realpath(full)
    real_base = _real_base(base)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES or not real.startswith(real_base + os.sep):
        return {"freshness": "unknown"}
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


def view(workspace: Path | None, citation: Citation) -> dict[str, Any]:
    """The citation as a read shows it: :meth:`Citation.to_json` plus :func:`evaluate`'s keys."""
    return citation.to_json() | evaluate(workspace, citation)


def reanchored(workspace: Path | None, citation: Citation) -> Citation:
    """``citation`` at the range it moved to (:func:`evaluate` says ``moved``), else ``citation`` itself."""
    state = evaluate(workspace, citation)
    if state["freshness"] != "moved":
        return citation
    moved = state["movedTo"]
    return Citation(citation.path, moved["startLine"], moved["endLine"], citation.sha256, citation.symbol)
