"""Superseding (issue 24 item 7): which stored memories cite the same lines as a new one (:func:`overlapping`),
and the lineage side file ``state/citations/lineage.json`` that keeps which memory supersedes which
(:class:`Lineage`), since ``memories.json`` and ``mnemon.db`` stay byte for byte what the reference writes.

A memory is named by ``(source, key)``: ``source`` one of :data:`~.store.SOURCES`, ``key`` its side-file key
(``memory:<sha256>``, ``<spaceId>/<itemId>``, ``<documentId>``, ``<scope>/<recordId>``). Two citations overlap
when they name the same ``path`` and their line ranges share at least one line, a stored citation whose lines
moved taken where they are now (:func:`~.freshness.reanchored`).

File shape: ``{"version": 1, "supersedes": {"<source> <key>": [{"source", "key"}, ...]}}`` (the newer memory
first). An unreadable file reads as empty and is replaced at the next write (lineage is side data).
Base layer: imports only this package and :mod:`mnemon_ls.fsio`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

from .. import fsio
from ..errors import StorageError
from . import freshness
from .model import Citation
from .store import SOURCES, Citations


def overlaps(a: Citation, b: Citation) -> bool:
    """Whether ``a`` and ``b`` cite the same file and share a line."""
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def overlapping(citations: Citations, new: Sequence[Citation],
                exclude: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """``(source, key)`` of every stored memory of the workspace (all :data:`~.store.SOURCES`) with a citation
    that overlaps one of ``new``, in source then key order, ``exclude`` left out (the memory being written).
    Reads the side files; writes nothing."""
    if not new:
        return []
    skip = set(exclude)
    paths = {n.path for n in new}
    found = []
    for source in SOURCES:
        for key, cites in sorted(citations.table(source).items()):
            if (source, key) in skip:
                continue
            now = [freshness.reanchored(citations.workspace, c) for c in cites if c.path in paths]
            if any(overlaps(c, n) for c in now for n in new):
                found.append((source, key))
    return found


def _name(source: str, key: str) -> str:
    return f"{source} {key}"


class Lineage:
    """The lineage side file of a storage root (module doc)."""

    def __init__(self, root: Path) -> None:
        self.path = root / "state" / "citations" / "lineage.json"

    def read(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """``(source, key)`` of a newer memory -> the ``(source, key)`` it supersedes; ``{}`` when missing or
        unreadable (entries that are not lineage are skipped)."""
        try:
            raw = fsio.read_bytes_if_present(self.path)
            data = json.loads(raw.decode("utf-8")) if raw is not None else None
        except (OSError, StorageError, UnicodeDecodeError, ValueError):
            return {}
        table = data.get("supersedes") if isinstance(data, dict) and data.get("version") == 1 else None
        found: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for name, olds in (table or {}).items() if isinstance(table, dict) else ():
            source, _, key = name.partition(" ") if isinstance(name, str) else ("", "", "")
            if source not in SOURCES or not key or not isinstance(olds, list):
                continue
            pairs = [(o["source"], o["key"]) for o in olds if isinstance(o, dict) and o.get("source") in SOURCES
                     and isinstance(o.get("key"), str) and o["key"]]
            if pairs:
                found[(source, key)] = pairs
        return found

    def add(self, new: tuple[str, str], olds: Sequence[tuple[str, str]]) -> None:
        """Record that ``new`` supersedes each of ``olds`` (kept with what it already supersedes; nothing
        written when nothing changes). Holds the file's lock for the read-modify-write. Raises
        :class:`~mnemon_ls.errors.StorageError` when it cannot write."""
        if not olds:
            return
        with fsio.file_lock(self.path.with_name(".lineage.lock")):
            table = self.read()
            merged = list(dict.fromkeys([*table.get(new, []), *olds]))
            if merged == table.get(new):
                return
            table[new] = [o for o in merged if o != new]
            body = {"version": 1, "supersedes": {_name(*k): [{"source": s, "key": key} for s, key in v]
                                                 for k, v in sorted(table.items())}}
            fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8"))

    def rename(self, names: dict[tuple[str, str], tuple[str, str]]) -> None:
        """Call each memory ``(source, key)`` of ``names`` by its new name (it moved: a MEMORY.md entry became a
        space item or was merged into another entry), on either side of every pair; a memory that would
        supersede itself is left out. Holds the file's lock; writes only when something changes. Raises
        :class:`~mnemon_ls.errors.StorageError` when it cannot write."""
        if not names:
            return
        with fsio.file_lock(self.path.with_name(".lineage.lock")):
            table = self.read()
            renamed: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for new, olds in table.items():
                name = names.get(new, new)
                merged = [names.get(o, o) for o in olds]
                renamed[name] = [o for o in dict.fromkeys([*renamed.get(name, []), *merged]) if o != name]
            renamed = {k: v for k, v in renamed.items() if v}
            if renamed == table:
                return
            body = {"version": 1, "supersedes": {_name(*k): [{"source": s, "key": key} for s, key in v]
                                                 for k, v in sorted(renamed.items())}}
            fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8"))

    def superseded_by(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """The inverse of :meth:`read`: ``(source, key)`` of a superseded memory -> its successors."""
        inverse: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for new, olds in self.read().items():
            for old in olds:
                inverse.setdefault(old, []).append(new)
        return inverse
