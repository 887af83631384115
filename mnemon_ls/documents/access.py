"""``lastAccessedAt`` without rewriting ``index.json`` on every read: the side file ``documents/.access.json``.

The plugin persisted the whole index after every search hit (reference section 11), so reads took the
index lock, changed the index revision (breaking every client's revision fence) and contended with
writers. Here a read (a search hit, a ``get``) only notes the time in memory; the notes reach disk in
two ways:

1. **The side file**, ``documents/.access.json``::

       {"version": 1, "lastAccessedAt": {"<document id>": "<ISO time>", ...}}

   written atomically (temp file, fsync, rename, directory fsync; mode 0600) under its own lock
   ``documents/.access.lock`` (never the index lock), merging what is on disk with the larger time per
   id, at most once per ``flush_seconds`` (default 5 s) when reads happen, and at once on
   :meth:`AccessLog.flush` with ``force`` (the store's ``flush_access()`` / ``close()``); the first
   read of a process flushes at once, so a short-lived CLI run records its access without ``close()``.
   If the lock is busy the notes stay pending for the next flush; a read never waits for it.
2. **Folded into the index** by every index commit (create, update, archive, restore, adoption), which
   already holds the index lock and changes the revision anyway: each record's ``lastAccessedAt``
   becomes the latest of the index, the side file and the pending notes, so the TypeScript plugin and
   older readers see them too.

Durability: an acknowledged read's access time is on disk within ``flush_seconds`` (or at close); a
crash (SIGKILL, power loss) can lose at most the notes of that window, which only makes those documents
look less recently used. The index itself is never at risk: the side file is not the truth, and a
damaged side file is ignored (and replaced at the next flush). The effective ``lastAccessedAt`` of a
document (what views, the LRU order and the wake cover use) is the latest of the three sources.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterable, Mapping

from .. import fsio
from ..errors import StoreBusy
from .model import parse_timestamp_ms, time_key

ACCESS_VERSION = 1
#: Seconds to wait for ``.access.lock`` before leaving the notes pending.
ACCESS_LOCK_TIMEOUT = 0.25


class AccessLog:
    """Pending and persisted access times of one documents directory (module doc).

    ``path`` is ``documents/.access.json``; ``lock_path`` ``documents/.access.lock``; ``flush_seconds`` the
    least interval between two automatic flushes. Not thread-safe on its own (the store serializes calls).
    """

    def __init__(self, path: Path, lock_path: Path, flush_seconds: float = 5.0) -> None:
        self.path = path
        self.lock_path = lock_path
        self.flush_seconds = flush_seconds
        self._pending: dict[str, tuple[int, str]] = {}
        self._disk: dict[str, tuple[int, str]] = {}
        self._disk_sig: tuple[int, int, int] | None = None
        self._last_flush = float("-inf")  # the first note of a process is written at once (short CLI runs)
        #: Changes whenever the pending notes or the side file's content (as seen) change.
        self.version = 0

    # ------------------------------------------------------------------ reads

    def _load_disk(self) -> dict[str, tuple[int, str]]:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self._disk, self._disk_sig = {}, None
            return self._disk
        except OSError:
            return self._disk
        sig = (info.st_size, info.st_mtime_ns, info.st_ino)
        if sig != self._disk_sig:
            self._disk = _parse(fsio.read_bytes_or_none(self.path) or b"")
            self._disk_sig = sig
            self.version += 1
        return self._disk

    def check(self) -> int:
        """Re-stat the side file (picking up another process's flush) and return :attr:`version`."""
        self._load_disk()
        return self.version

    def times(self) -> dict[str, tuple[int, str]]:
        """``id -> (epoch ms, ISO string)``: the later of the side file and the pending notes per id."""
        merged = dict(self._load_disk())
        for key, value in self._pending.items():
            if key not in merged or value[0] > merged[key][0]:
                merged[key] = value
        return merged

    def latest(self, key: str) -> tuple[int, str] | None:
        """The later of the side file's and the pending time of one id, or ``None``."""
        disk = self._load_disk().get(key)
        pending = self._pending.get(key)
        if disk is None or (pending is not None and pending[0] > disk[0]):
            return pending
        return disk

    def effective(self, stored: Mapping[str, str]) -> dict[str, str]:
        """``id -> ISO`` for every id of ``stored`` (``id -> index lastAccessedAt``) whose side/pending time
        is later than the stored one. Ids not in the result keep their stored time."""
        later: dict[str, str] = {}
        for key, (ms, iso) in self.times().items():
            current = stored.get(key)
            if current is not None and ms > time_key(current):
                later[key] = iso
        return later

    @property
    def pending(self) -> int:
        """How many access notes are not on disk yet."""
        return len(self._pending)

    # ------------------------------------------------------------------ writes

    def note(self, ids: Iterable[str], iso: str) -> None:
        """Record that ``ids`` were read at ``iso`` (memory only)."""
        ms = parse_timestamp_ms(iso)
        if ms is None:
            return
        for key in ids:
            old = self._pending.get(key)
            if old is None or ms > old[0]:
                self._pending[key] = (ms, iso)
                self.version += 1

    def folded(self, ids: Iterable[str]) -> None:
        """Forget pending notes that an index commit has just written into ``index.json``."""
        for key in ids:
            if self._pending.pop(key, None) is not None:
                self.version += 1

    def due(self) -> bool:
        """Whether an automatic flush is due (pending notes and ``flush_seconds`` elapsed)."""
        return bool(self._pending) and time.monotonic() - self._last_flush >= self.flush_seconds

    def flush(self, stored: Mapping[str, str], *, force: bool = False) -> bool:
        """Write pending notes to the side file (module doc). ``stored`` is ``id -> index lastAccessedAt``
        of the current index: ids not in it and times not later than it are pruned from the file.

        Returns ``True`` when the file is up to date afterwards. Never raises for a busy lock (the notes
        stay pending) or an unwritable directory (``OSError`` leaves them pending too).
        """
        if not self._pending and not force:
            return True
        self._last_flush = time.monotonic()
        try:
            with fsio.file_lock(self.lock_path, timeout=ACCESS_LOCK_TIMEOUT):
                self._disk_sig = None
                merged = self.times()
                keep: dict[str, str] = {}
                for key, (ms, iso) in sorted(merged.items()):
                    current = stored.get(key)
                    if current is not None and ms > time_key(current):
                        keep[key] = iso
                data = (json.dumps({"version": ACCESS_VERSION, "lastAccessedAt": keep}, ensure_ascii=False,
                                   indent=2) + "\n").encode("utf-8")
                if fsio.read_bytes_or_none(self.path) != data:
                    if keep or self.path.exists():
                        fsio.write_file_atomically(self.path, data)
                self._disk = {k: (parse_timestamp_ms(v) or 0, v) for k, v in keep.items()}
                try:
                    info = os.stat(self.path)
                    self._disk_sig = (info.st_size, info.st_mtime_ns, info.st_ino)
                except OSError:
                    self._disk_sig = None
        except (StoreBusy, OSError):
            return False
        self._pending.clear()
        self.version += 1
        return True


def _parse(data: bytes) -> dict[str, tuple[int, str]]:
    """The side file's ``id -> (ms, iso)``; anything unreadable is ignored (the file is not the truth)."""
    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON (or a number past Python's digit limit)
        return {}
    if not isinstance(document, dict) or document.get("version") != ACCESS_VERSION:
        return {}
    raw = document.get("lastAccessedAt")
    if not isinstance(raw, dict):
        return {}
    out: dict[str, tuple[int, str]] = {}
    for key, value in raw.items():
        ms = parse_timestamp_ms(value) if isinstance(key, str) else None
        if ms is not None:
            out[key] = (ms, value)
    return out
