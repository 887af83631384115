"""When a person last confirmed a memory "still true" (issue 24 item 6): the review clock's third time, beside a
memory's updated and recalled times (:func:`mnemon_ls.citations.review.review_due` counts from the latest).

Kept in one side file under the storage root, ``state/citations/reviewed.json``, so that no format another tool
reads changes (``memories.json``, the projections, ``documents/index.json``, ``mnemon.db`` and the records' JSONL
stay byte for byte what they were): ``{"version": 1, "reviewed": {<source>: {<key>: <epoch ms>}}}`` (sources and
keys sorted, 2-space indent, final newline, 0600), written atomically under ``state/citations/.reviewed.lock``.
Keys are the citation side files' (:mod:`.store`): ``runtime`` ``memory:<sha256>`` (a USER.md entry
``user:<sha256>``, :func:`entry_key`), ``spaces`` ``<spaceId>/<itemId>``, ``documents`` ``<documentId>``,
``records`` ``<scope>/<recordId>``. An unreadable file reads as empty (every memory counts from its own times
again: the safe side, nothing is hidden from review) and is replaced at the next confirmation.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from .. import fsio
from ..errors import StorageError

#: The latest time a confirmation may hold (9999-12-31T23:59:59.999Z, epoch ms); a larger or negative one, as a
#: hand edit could leave, is ignored like any unreadable entry.
MAX_MS = 253_402_300_799_999

_kept: dict[str, tuple[tuple[int, int, int, int], dict[str, dict[str, int]]]] = {}
_kept_lock = threading.Lock()


def entry_key(target: str, content: str) -> str:
    """The key of a runtime entry: ``memory:<sha256 of content>`` (as its citations' key) or ``user:<sha256>``."""
    return f"{'user' if target == 'user' else 'memory'}:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


class ReviewedFile:
    """``state/citations/reviewed.json`` of the storage root ``root`` (module doc)."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / "state" / "citations" / "reviewed.json"

    def read(self) -> dict[str, dict[str, int]]:
        """``{source: {key: epoch ms}}``; ``{}`` when missing or unreadable. Kept in memory while the file's size,
        mtime (ns), inode and device are the same (every write replaces it); the caller must not change it."""
        try:
            info = os.stat(self.path)
        except OSError:
            return {}
        signature = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
        key = str(self.path)
        with _kept_lock:
            kept = _kept.get(key)
        if kept is not None and kept[0] == signature:
            return kept[1]
        table = self._load()
        with _kept_lock:
            if len(_kept) > 64:
                _kept.clear()
            _kept[key] = (signature, table)
        return table

    def _load(self) -> dict[str, dict[str, int]]:
        try:
            raw = fsio.read_bytes_or_none(self.path)
            data = json.loads(raw.decode("utf-8")) if raw is not None else None
        except (OSError, StorageError, UnicodeDecodeError, ValueError):
            return {}
        table = data.get("reviewed") if isinstance(data, dict) and data.get("version") == 1 else None
        if not isinstance(table, dict):
            return {}
        return {source: {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, int)
                         and not isinstance(v, bool) and 0 <= v <= MAX_MS}
                for source, keys in table.items() if isinstance(source, str) and isinstance(keys, dict)}

    def at(self, source: str, key: str) -> int | None:
        """When ``key`` of ``source`` was last confirmed (epoch ms), or ``None``."""
        return self.read().get(source, {}).get(key)

    def confirm(self, source: str, key: str, when_ms: int) -> None:
        """Record that a person confirmed ``key`` of ``source`` at ``when_ms`` (epoch ms). Holds the lock for the
        read-modify-write; raises :class:`~mnemon_ls.errors.StorageError` when it cannot write."""
        with fsio.file_lock(self.path.with_name(".reviewed.lock")):
            table = {s: dict(k) for s, k in self._load().items()}
            table.setdefault(source, {})[key] = int(when_ms)
            body = {"version": 1, "reviewed": {s: dict(sorted(table[s].items())) for s in sorted(table)}}
            fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8"))


def reviewed_at(root: Any, source: str, key: str) -> int | None:
    """:meth:`ReviewedFile.at` of the storage root ``root`` (``None`` without a root)."""
    return None if root is None else ReviewedFile(root).at(source, key)
