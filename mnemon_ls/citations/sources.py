"""A Document's ``sourcePaths`` checked like citations (issue 24 item 4): at each create and update the SHA-256 of
each source file's bytes is kept in the side file ``state/citations/document-sources.json`` (never in
``documents/index.json``, which stays the reference's format), and reads report each path's freshness now:

- ``fresh``: the file's bytes hash as recorded;
- ``changed``: they do not (or it is now a directory or not a regular file);
- ``gone``: the file is not there (on this branch);
- ``unknown``: no hash was recorded (the path was missing, a directory or unreadable then, or the document was
  written before this), there is no workspace, or the file cannot be read now.

File shape: ``{"version": 1, "documents": {"<documentId>": {"<path>": "<sha256 hex>" | null}}}``. Hashes are
cached by real path with the file's size, mtime (ns), inode and device. Base layer: imports :mod:`mnemon_ls.fsio`.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import fsio
from ..errors import StorageError

_cache: dict[str, tuple[tuple[int, int, int, int], str]] = {}
_lock = threading.Lock()
_CACHE_FILES = 1024


def _full(workspace: Path, path: str) -> str:
    return os.path.join(os.path.abspath(workspace), *[p for p in path.split("/") if p not in ("", ".")])


def file_state(workspace: Path | None, path: str) -> tuple[str, str | None]:
    """``(state, sha256)`` of workspace-relative ``path`` now: ``("file", hex)``, ``("gone", None)``,
    ``("other", None)`` (a directory, not a regular file, outside the workspace) or ``("unknown", None)``
    (no workspace, unreadable). Never raises for the file's state."""
    if workspace is None:
        return "unknown", None
    full = _full(workspace, path)
    try:
        info = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        return "gone", None
    except OSError:
        return "unknown", None
    real = os.path.realpath(full)
    base = os.path.realpath(workspace)
    if not stat.S_ISREG(info.st_mode) or not real.startswith(base.rstrip(os.sep) + os.sep):
        return "other", None
    signature = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
    with _lock:
        kept = _cache.get(real)
    if kept is not None and kept[0] == signature:
        return "file", kept[1]
    digest = hashlib.sha256()
    try:
        with open(real, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return "unknown", None
    value = digest.hexdigest()
    with _lock:
        if len(_cache) >= _CACHE_FILES:
            _cache.clear()
        _cache[real] = (signature, value)
    return "file", value


def invalidate(path: str | os.PathLike[str]) -> None:
    """Forget the cached hash of ``path`` (absolute)."""
    with _lock:
        _cache.pop(os.path.realpath(path), None)


class SourceHashes:
    """The recorded hashes of the Documents' source files of one storage root (module doc)."""

    def __init__(self, root: Path, workspace: Path | None) -> None:
        self.path = root / "state" / "citations" / "document-sources.json"
        self.workspace = workspace

    def read(self) -> dict[str, dict[str, str | None]]:
        """documentId -> {path: sha256 or None}; ``{}`` when missing or unreadable."""
        try:
            raw = fsio.read_bytes_if_present(self.path)
            data = json.loads(raw.decode("utf-8")) if raw is not None else None
        except (OSError, StorageError, UnicodeDecodeError, ValueError):
            return {}
        table = data.get("documents") if isinstance(data, dict) and data.get("version") == 1 else None
        if not isinstance(table, dict):
            return {}
        return {k: {p: (h if isinstance(h, str) else None) for p, h in v.items() if isinstance(p, str)}
                for k, v in table.items() if isinstance(k, str) and isinstance(v, dict)}

    def record(self, document_id: str, paths: Sequence[str]) -> None:
        """Record the hash of each of ``paths`` now for ``document_id`` (replacing what it had; no paths:
        the document's entry is removed). Holds the file's lock. Raises
        :class:`~mnemon_ls.errors.StorageError` when it cannot write."""
        hashes = {p: file_state(self.workspace, p)[1] for p in paths}
        with fsio.file_lock(self.path.with_name(".document-sources.lock")):
            table = self.read()
            before = dict(table)
            if hashes:
                table[document_id] = hashes
            else:
                table.pop(document_id, None)
            if table == before:
                return
            body = {"version": 1, "documents": {k: table[k] for k in sorted(table)}}
            fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8"))

    def merge(self, recorded: Mapping[str, Mapping[str, str | None]]) -> None:
        """Set each document's recorded hashes to ``recorded[documentId]`` (hashes carried from another root:
        a migration or a pack; the others are kept). Holds the file's lock. Raises
        :class:`~mnemon_ls.errors.StorageError` when it cannot write."""
        if not recorded:
            return
        with fsio.file_lock(self.path.with_name(".document-sources.lock")):
            table = self.read()
            table.update({k: dict(v) for k, v in recorded.items()})
            body = {"version": 1, "documents": {k: table[k] for k in sorted(table)}}
            fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8"))

    def views(self, document_id: str, paths: Sequence[str],
              table: Mapping[str, Mapping[str, str | None]] | None = None) -> list[dict[str, Any]]:
        """``[{path, freshness}]`` of each of ``paths`` of ``document_id`` now (module doc); ``[]`` when no
        hash was ever recorded for the document. ``table`` is :meth:`read` already made (else read here)."""
        recorded = (self.read() if table is None else table).get(document_id)
        if recorded is None:
            return []
        found = []
        for path in paths:
            expected = recorded.get(path)
            state, digest = file_state(self.workspace, path)
            if expected is None or state == "unknown":
                fresh = "unknown"
            elif state == "gone":
                fresh = "gone"
            else:
                fresh = "fresh" if digest == expected else "changed"
            found.append({"path": path, "freshness": fresh})
        return found
