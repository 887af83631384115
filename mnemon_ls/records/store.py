"""One JSONL records file (seed 002 section 1): durable appends, locks, quarantine, compaction.

The file is an append log: each line is one complete :class:`~.model.MemoryRecord` (the on-disk shape
of :mod:`.model`), and the *last* line of an id is that record's current state, so every change
(verify, edit, archive...) is one durable append. :meth:`JsonlStore.compact` rewrites the file to one
line per id.

- Every read-modify-write holds ``<file>.lock`` (:func:`mnemon_ls.fsio.file_lock`, the exclusive-create
  marker protocol of the other Sources) for the whole cycle and re-reads under it.
- Appends open the file ``O_APPEND``, write whole lines and ``fsync`` before returning (and fsync the
  directory when the file was created). A file not ending in a newline (a crash mid-append) gets one
  first, so the next line is never glued to a damaged one.
- Lines that are not valid JSON or not valid records are *moved* to ``<file>.corrupt`` (one JSON
  object per line: ``{"line": <1-based line number>, "text": <the line>, "reason": ..., "quarantinedAt":
  <epoch ms>}``, appended and fsynced first), then the file is rewritten without them; never dropped. A
  line that is not UTF-8 also gets ``"base64"``: its exact bytes (``text`` is only a lenient reading).
- Compaction writes ``<file>.bak`` (the whole current file, atomically) and then replaces the file
  atomically, so at every instant the file and the ``.bak`` together hold every record.
- A file over :data:`MAX_FILE_BYTES` (8 MiB) is read-only: reads work, writes raise
  :class:`~mnemon_ls.errors.StoreTooLarge` (the seed's ``STORE_TOO_LARGE``) and change nothing.
Directories are created 0700 and files 0600.
"""

from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .. import fsio
from ..errors import InvalidInput, StoreTooLarge
from ..jsontext import JsonUnreadable, json_loads
from .model import MemoryRecord, validate_record

#: Safety limit of one records file, in bytes (seed 002 section 2: 8 MiB; over it the file is read-only).
MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass
class CorruptLine:
    """A line that could not be used: ``line`` (1-based), ``text`` (decoded leniently), ``reason``; ``raw``
    the line's bytes when ``text`` cannot give them back (not UTF-8), else ``None``."""

    line: int
    text: str
    reason: str
    raw: bytes | None = None

    def to_dict(self) -> dict[str, object]:
        """``{line, text, reason}``."""
        return {"line": self.line, "text": self.text, "reason": self.reason}

    def quarantine_line(self, now: int) -> bytes:
        """The line of ``<file>.corrupt`` for this line, moved at ``now`` (epoch ms): ``{line, text, reason,
        quarantinedAt}`` plus ``base64`` (the exact bytes) for a line that is not UTF-8."""
        entry: dict[str, object] = {**self.to_dict(), "quarantinedAt": now}
        if self.raw is not None:
            entry["base64"] = base64.b64encode(self.raw).decode("ascii")
        return (json.dumps(entry, ensure_ascii=False) + "\n").encode()


@dataclass
class Snapshot:
    """What a read found: ``records`` (id -> current state, in first-seen order), ``lines`` (valid
    lines), ``corrupt`` (lines moved, or to be moved, to ``.corrupt``), ``size_bytes``, ``read_only``
    (over the size limit), ``quarantined`` (how many lines this read moved)."""

    records: dict[str, MemoryRecord] = field(default_factory=dict)
    lines: int = 0
    corrupt: list[CorruptLine] = field(default_factory=list)
    size_bytes: int = 0
    read_only: bool = False
    quarantined: int = 0


def parse_lines(data: bytes, cache: dict[bytes, MemoryRecord] | None = None
                ) -> tuple[dict[str, MemoryRecord], int, list[CorruptLine]]:
    """Parse JSONL bytes: ``(records by id, valid line count, corrupt lines)``; blank lines are skipped.

    ``cache`` (line bytes -> the record it validated to) skips re-validating lines seen before; it is
    updated in place to hold exactly the valid lines of ``data``. A line is the cache key, so a hand
    edit of a line is always validated again."""
    records: dict[str, MemoryRecord] = {}
    corrupt: list[CorruptLine] = []
    valid = 0
    seen: dict[bytes, MemoryRecord] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        known = cache.get(raw) if cache is not None else None
        if known is not None:
            valid += 1
            seen[raw] = known
            records[known.id] = known
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            from .. import salvage  # only a damaged line gets here

            corrupt.append(CorruptLine(number, salvage.decode_leniently(raw), "not UTF-8", raw))
            continue
        try:
            value = json_loads(text)
        except JsonUnreadable as exc:
            corrupt.append(CorruptLine(number, text, f"not JSON: {exc.in_line}"))
            continue
        try:
            record = validate_record(value)
        except InvalidInput as exc:
            corrupt.append(CorruptLine(number, text, f"not a valid record: {exc.message}"))
            continue
        valid += 1
        seen[raw] = record
        records[record.id] = record  # the last line of an id wins (dict keeps first-seen order)
    if cache is not None:
        cache.clear()
        cache.update(seen)
    return records, valid, corrupt


def encode(record: MemoryRecord) -> bytes:
    """One line: compact JSON (UTF-8, non-ASCII kept) plus ``\\n``."""
    return (json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class JsonlStore:
    """The records file ``path`` (see the module doc). ``clock`` returns epoch milliseconds."""

    def __init__(self, path: Path, clock: Callable[[], int] | None = None,
                 max_bytes: int = MAX_FILE_BYTES) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.corrupt_path = self.path.with_name(self.path.name + ".corrupt")
        self.backup_path = self.path.with_name(self.path.name + ".bak")
        self.max_bytes = max_bytes
        self._cache: dict[bytes, MemoryRecord] = {}  # validated lines (records are immutable)
        self._clock = clock or (lambda: int(time.time() * 1000))

    # ------------------------------------------------------------------ reads

    def read(self) -> Snapshot:
        """The current records. Corrupt lines are quarantined under the lock first (unless the file is
        read-only, when they are only reported). A missing file is empty. Never raises for content."""
        snap, _data = self._parse()
        if snap.corrupt and not snap.read_only:
            with fsio.file_lock(self.lock_path):
                return self._load_locked()
        return snap

    def quarantined_lines(self) -> int:
        """How many lines ``<file>.corrupt`` holds (0 when it is missing or unreadable); reads only."""
        try:
            data = fsio.read_bytes_or_none(self.corrupt_path)
        except OSError:  # StorageError too: a linked or unreadable file (doctor's other findings name it)
            return 0
        return sum(1 for line in (data or b"").split(b"\n") if line.strip())

    def _parse(self) -> tuple[Snapshot, bytes]:
        """``(snapshot, bytes)`` of the file as it is now (no lock, no quarantine; a missing file is empty);
        the parse cache is reused and refreshed."""
        data = fsio.read_bytes_or_none(self.path)
        if data is None:
            return Snapshot(), b""
        cache = dict(self._cache)
        records, valid, corrupt = parse_lines(data, cache)
        self._cache = cache
        return Snapshot(records, valid, corrupt, len(data), len(data) > self.max_bytes), data

    def _load_locked(self) -> Snapshot:
        """Re-read under the held lock, moving corrupt lines to ``.corrupt`` (when writable)."""
        snap, data = self._parse()
        corrupt = snap.corrupt
        if corrupt and not snap.read_only:
            now = self._clock()
            moved = b"".join(c.quarantine_line(now) for c in corrupt)
            self._append_bytes(self.corrupt_path, moved)  # durable before the lines leave the file
            bad = {c.line for c in corrupt}
            kept = [raw for number, raw in enumerate(data.split(b"\n"), start=1)
                    if number not in bad and raw.strip()]
            body = b"".join(raw + b"\n" for raw in kept)
            fsio.write_file_atomically(self.path, body)
            snap.size_bytes = len(body)
            snap.quarantined = len(corrupt)
        return snap

    # ------------------------------------------------------------------ writes

    def update(self, change: Callable[[dict[str, MemoryRecord]], Iterable[MemoryRecord]]) -> list[MemoryRecord]:
        """Run ``change(current records by id)`` under the lock and durably append the records it returns.

        ``change`` may raise (e.g. :class:`InvalidInput`) to abort: nothing is written. Raises
        :class:`StoreTooLarge` when the file is over the limit or the append would take it over, and
        :class:`~mnemon_ls.errors.StoreBusy` when the lock cannot be taken. Returns what was appended.
        """
        with fsio.file_lock(self.lock_path):
            snap = self._load_locked()
            self._check_writable(snap.size_bytes)
            written = list(change(dict(snap.records)))
            if not written:
                return []
            payload = b"".join(encode(r) for r in written)
            self._check_writable(snap.size_bytes + len(payload))
            self._append_bytes(self.path, payload)
            return written

    def compact(self) -> dict[str, int]:
        """Rewrite the file to one line per id (the current states, forgotten ones kept), writing
        ``<file>.bak`` (the whole current file) first; both atomically. Works on a read-only (oversized)
        file too, since it only shrinks it. Returns ``{before, after, linesBefore, linesAfter}`` (bytes and lines)."""
        with fsio.file_lock(self.lock_path):
            data = fsio.read_bytes_or_none(self.path)
            if data is None:
                return {"before": 0, "after": 0, "linesBefore": 0, "linesAfter": 0}
            if len(data) <= self.max_bytes:
                snap = self._load_locked()
                data = fsio.read_bytes_or_none(self.path) or b""
                records = snap.records
                lines = snap.lines
            else:
                records, lines, _ = parse_lines(data)  # corrupt lines stay in the .bak, never dropped
            fsio.write_file_atomically(self.backup_path, data)
            body = b"".join(encode(r) for r in records.values())
            fsio.write_file_atomically(self.path, body)
            return {"before": len(data), "after": len(body), "linesBefore": lines, "linesAfter": len(records)}

    def _check_writable(self, size: int) -> None:
        if size > self.max_bytes:
            raise StoreTooLarge(
                f"{self.path}: {size} bytes is over the {self.max_bytes}-byte limit of a records file; it is "
                "read-only (STORE_TOO_LARGE). Run `mnemon-ls records compact` or archive records elsewhere",
                file=str(self.path), sizeBytes=size, limitBytes=self.max_bytes, reason="STORE_TOO_LARGE")

    def _append_bytes(self, path: Path, payload: bytes) -> None:
        """Durably append ``payload`` (whole lines) to ``path``, creating it 0600 (and its directory 0700)."""
        fsio.ensure_dir(path.parent)
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), fsio.FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload  # a crash cut the last line: never glue a new line to it
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
