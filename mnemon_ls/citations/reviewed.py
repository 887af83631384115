"""When a person last confirmed a memory "still true" (issue 24 item 6): the review clock's third time, beside a
memory's updated and recalled times (:func:`mnemon_ls.citations.review.review_due` counts from the latest).

Kept in one side file under the storage root, ``state/citations/reviewed.json``, so that no format another tool
reads changes (``memories.json``, the projections, ``documents/index.json``, ``mnemon.db`` and the records' JSONL
stay byte for byte what they were): ``{"version": 1, "reviewed": {<source>: {<key>: <epoch ms>}}}`` (sources and
keys sorted, 2-space indent, final newline, 0600), written atomically under ``state/citations/.reviewed.lock``.
Keys are the citation side files' (:mod:`.store`): ``runtime`` ``memory:<sha256>`` (a USER.md entry
``user:<sha256>``, :func:`entry_key`), ``spaces`` ``<spaceId>/<itemId>``, ``documents`` ``<documentId>``,
``records`` ``<scope>/<recordId>``.

A damaged file (not JSON, another shape, an entry whose time is not an integer from 0 to :data:`MAX_MS`) reads
as empty, or without the damaged entries (every memory counts from its own times again: the safe side, nothing
is hidden from review); the next confirmation first keeps its bytes in ``state/citations/quarantine/<UTC
stamp>-reviewed.json``, then writes the file anew. A file of a newer version, a directory, or a symbolic link
in its place is never written: a confirmation raises, naming the file and the rule. ``mnemon-ls doctor``
reports each (:func:`findings`).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path
from typing import Any

from .. import fsio
from ..errors import StorageError, UnreadableStore

#: The latest time a confirmation may hold (9999-12-31T23:59:59.999Z, epoch ms); a larger or negative one, as a
#: hand edit could leave, is ignored like any unreadable entry.
MAX_MS = 253_402_300_799_999

#: The format version this code reads and writes.
VERSION = 1

_kept: dict[str, tuple[tuple[int, int, int, int], dict[str, dict[str, int]]]] = {}
_kept_lock = threading.Lock()


@functools.lru_cache(maxsize=64)
def _path_of(root: Path | str) -> Path:
    """``<root>/state/citations/reviewed.json`` (built once per root: every wake asks)."""
    return Path(os.path.join(root, "state", "citations", "reviewed.json"))


class ReviewedFile:
    """``state/citations/reviewed.json`` of the storage root ``root`` (module doc)."""

    def __init__(self, root: Path) -> None:
        self.path = _path_of(root)

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
        return self._parse()[0]

    def _parse(self) -> tuple[dict[str, dict[str, int]], str | None, bool]:
        """``(table, problem, refuse)``: the readable entries; ``None`` or why the file is not all readable (a
        sentence); ``True`` when it must never be written over (a newer version, a link, a directory, an
        I/O error)."""
        try:
            raw = fsio.read_bytes_if_present(self.path)
        except StorageError as exc:
            return {}, f"cannot be read ({exc.message})", True
        if raw is None:
            return {}, None, False
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return {}, f"is not UTF-8 ({exc})", False
        try:
            data = json.loads(text)
        except ValueError as exc:
            return {}, f"is not valid JSON ({exc})", False
        if not isinstance(data, dict) or not isinstance(data.get("reviewed"), dict):
            return {}, 'is not an object with a "reviewed" object', False
        version = data.get("version")
        if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
            return {}, (f"has version {version}, newer than this mnemon-ls reads ({VERSION}); upgrade mnemon-ls "
                        "to confirm memories here"), True
        if version != VERSION:
            return {}, f'has "version" {version!r}; this mnemon-ls reads {VERSION}', False
        table: dict[str, dict[str, int]] = {}
        dropped = 0
        for source, keys in data["reviewed"].items():
            if not isinstance(keys, dict):
                dropped += 1
                continue
            kept = {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, int)
                    and not isinstance(v, bool) and 0 <= v <= MAX_MS}
            dropped += len(keys) - len(kept)
            table[source] = kept
        problem = (f"has {dropped} entr{'y' if dropped == 1 else 'ies'} whose time is not whole epoch milliseconds "
                   f"from 0 to {MAX_MS}") if dropped else None
        return table, problem, False

    def problem(self) -> tuple[str, bool] | None:
        """``None`` when the file is missing or fully readable, else ``(why, refuse)``: a sentence saying what is
        wrong, and whether a confirmation refuses to write (otherwise it keeps a copy, then writes anew)."""
        _, problem, refuse = self._parse()
        return None if problem is None else (problem, refuse)

    def check_writable(self) -> None:
        """Raises :class:`~mnemon_ls.errors.UnreadableStore` (``data``: ``file``, ``reason``) when a confirmation
        would refuse to write (:meth:`problem`), and :class:`~mnemon_ls.errors.StorageUnsafe` when the damaged
        file's copy would go through a linked ``quarantine/``; changes nothing."""
        _, problem, refuse = self._parse()
        self._refuse(problem, refuse)

    def _refuse(self, problem: str | None, refuse: bool) -> None:
        """:meth:`check_writable` of what :meth:`_parse` found."""
        if problem is not None and refuse:
            raise UnreadableStore(f"{self.path} {problem}; nothing was confirmed (`mnemon-ls doctor` explains)",
                                  file=str(self.path), reason=problem)
        if problem is not None:  # a copy goes to quarantine/ first: refuse a linked one before anything changes
            fsio.checked_dir_exists(self.path.parent / "quarantine")

    def at(self, source: str, key: str) -> int | None:
        """When ``key`` of ``source`` was last confirmed (epoch ms), or ``None``."""
        return self.read().get(source, {}).get(key)

    def confirm(self, source: str, key: str, when_ms: int) -> str | None:
        """Record that a person confirmed ``key`` of ``source`` at ``when_ms`` (epoch ms). Holds the lock for the
        read-modify-write. A damaged file is first kept in ``state/citations/quarantine/`` (module doc): returns
        that copy's path, else ``None``. Raises :class:`~mnemon_ls.errors.UnreadableStore` for a file it must
        not write over (:meth:`check_writable`; nothing changed) and :class:`~mnemon_ls.errors.StorageError`
        when it cannot write."""
        with fsio.file_lock(self.path.with_name(".reviewed.lock")):
            table, problem, refuse = self._parse()  # once, under the lock
            self._refuse(problem, refuse)
            kept = None
            if problem is not None:
                from datetime import datetime, timezone

                raw = fsio.read_bytes_or_none(self.path) or b""  # (damaged, not refused: it reads)
                stamp = fsio.file_stamp(datetime.now(timezone.utc))
                kept = str(fsio.copy_file_exclusive(self.path.parent / "quarantine", f"{stamp}-reviewed.json", raw))
            table = {s: dict(k) for s, k in table.items()}
            table.setdefault(source, {})[key] = int(when_ms)
            body = {"version": VERSION, "reviewed": {s: dict(sorted(table[s].items())) for s in sorted(table)}}
            fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8"))
            return kept


def findings(root: Path) -> list[Any]:
    """``mnemon-ls doctor``'s findings for ``state/citations/reviewed.json`` of ``root``: a ``problem`` when a
    confirmation would refuse to write it, a ``warning`` when it is damaged (it reads without the damaged part),
    an ``ok`` naming the copies a confirmation kept in ``quarantine/``; none when all is well."""
    from ..findings import Finding

    reviewed = ReviewedFile(root)
    out = []
    found = reviewed.problem()
    if found is not None:
        why, refuse = found
        out.append(Finding("problem" if refuse else "warning", str(reviewed.path), f"reviewed.json {why}",
                           "replace or move it aside; until then memories count from their own update and recall "
                           "times" if refuse else "the next \"still true\" keeps a copy in quarantine/ and writes "
                           "it anew; until then memories count from their own update and recall times"))
    quarantine = reviewed.path.parent / "quarantine"
    if quarantine.is_dir() and not quarantine.is_symlink():
        kept = sorted(p.name for p in quarantine.iterdir() if p.name.endswith("-reviewed.json"))
        if kept:
            out.append(Finding("ok", str(quarantine), f"{len(kept)} damaged reviewed.json kept aside "
                               f"(latest {kept[-1]})", "read them for confirmations to restore, then delete them"))
    return out

