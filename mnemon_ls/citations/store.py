"""Where citations are kept: one side file per Source under the storage root, ``state/citations/<source>.json``,
so that no format another tool reads changes (``memories.json``, USER.md/MEMORY.md, ``documents/index.json``,
``mnemon.db``, the records' JSONL stay byte for byte what the reference and the Mnemon CLI write).

A side file is ``{"version": 1, "citations": {<key>: [{path, startLine, endLine, sha256, symbol?}, ...]}}``
(keys sorted, 2-space indent, final newline, 0600), written atomically under its lock
``state/citations/.<source>.lock``. Keys, by Source (:data:`SOURCES`):

- ``runtime``: ``memory:<sha256 hex of the entry's content>`` (only MEMORY.md entries cite; the entry has no id
  in ``memories.json``, its normalised content is its identity; an entry edited by hand or by another tool
  loses its citations, which are dropped at the next write);
- ``spaces``: ``<spaceId>/<itemId>``; ``documents``: ``<documentId>``; ``records``: ``<scope>/<recordId>``.

:class:`Citations` is one workspace's view of them (the Host's ``citations``): resolve a request to cite,
store, read with freshness, re-anchor what moved. An unreadable side file reads as empty and is replaced at
the next write of that Source's citations (citations are side data: losing them never blocks a memory).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import fsio
from ..errors import StorageError
from ..runtime.ops import entry_key
from . import freshness
from .model import Citation, resolve

#: The Sources that keep citations.
SOURCES = ("runtime", "spaces", "documents", "records")


@functools.lru_cache(maxsize=8192)
def runtime_key(content: str) -> str:
    """The side-file key of the MEMORY.md entry whose (normalised) content is ``content``
    (:func:`mnemon_ls.runtime.ops.entry_key`, ``memory:<sha256 hex>``)."""
    return entry_key("memory", content)


class CitationFile:
    """One Source's side file (module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def lock_path(self) -> Path:
        """``.<source>.lock`` beside the file."""
        return self.path.with_name(f".{self.path.stem}.lock")

    def read(self) -> dict[str, list[Citation]]:
        """Every key's citations; ``{}`` when the file is missing or unreadable (entries that are not
        citations are skipped)."""
        try:
            raw = fsio.read_bytes_if_present(self.path)
        except (OSError, StorageError):
            return {}
        if raw is None:
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return {}
        table = data.get("citations") if isinstance(data, dict) and data.get("version") == 1 else None
        if not isinstance(table, dict):
            return {}
        found = {}
        for key, items in table.items():
            if isinstance(key, str) and isinstance(items, list):
                cites = [c for c in (Citation.from_json(item) for item in items) if c is not None]
                if cites:
                    found[key] = cites
        return found

    def update(self, changes: Mapping[str, Sequence[Citation] | None],
               keep: Callable[[str], bool] | None = None) -> dict[str, list[Citation]]:
        """Set each key of ``changes`` to its citations (``None`` or ``[]`` removes the key), drop the keys
        ``keep`` refuses, and write the file when anything changed; returns the table written. Holds the
        lock for the read-modify-write. Raises :class:`~mnemon_ls.errors.StorageError` when it cannot write."""
        with fsio.file_lock(self.lock_path):
            table = self.read()
            before = {k: list(v) for k, v in table.items()}
            for key, cites in changes.items():
                if cites:
                    table[key] = list(cites)
                else:
                    table.pop(key, None)
            if keep is not None:
                table = {k: v for k, v in table.items() if keep(k)}
            if table != before:
                body = {"version": 1, "citations": {k: [c.to_json() for c in table[k]] for k in sorted(table)}}
                fsio.write_file_atomically(self.path, (json.dumps(body, indent=2, ensure_ascii=False) + "\n")
                                           .encode("utf-8"))
        return table


class Citations:
    """The citations of one workspace's memory: ``root`` (the storage root) and ``workspace`` (the
    directory citations are relative to; ``None``: nothing can be cited and every freshness is ``unknown``)."""

    def __init__(self, root: Path, workspace: Path | None) -> None:
        self.root = root
        self.workspace = workspace
        self._files: dict[str, CitationFile] = {}  # a CitationFile is its path alone: one per source is kept

    def file(self, source: str) -> CitationFile:
        """The side file of ``source`` (one of :data:`SOURCES`)."""
        found = self._files.get(source)
        if found is None:
            if source not in SOURCES:
                raise ValueError(f"unknown citing source {source!r}")
            found = self._files[source] = CitationFile(self.root / "state" / "citations" / f"{source}.json")
        return found

    def archived(self) -> CitationFile:
        """``state/citations/archived.json``: the citations of MEMORY.md entries that left hot memory into the
        local archive ``runtime/archived/`` (keys ``memory:<sha256 of the content>``, as in ``runtime``; not a
        Source: nothing edits or reviews them, ``runtime archived`` shows them with the archived entry)."""
        return CitationFile(self.root / "state" / "citations" / "archived.json")

    def resolve(self, cites: Sequence[Any], field: str = "cites") -> list[Citation]:
        """:func:`mnemon_ls.citations.model.resolve` against this workspace and root (reads the cited files,
        writes nothing; raises :class:`~mnemon_ls.errors.InvalidInput` naming ``cites[i].<field>``)."""
        return resolve(self.workspace, self.root, cites, field)

    def put(self, source: str, changes: Mapping[str, Sequence[Citation] | None],
            keep: Callable[[str], bool] | None = None) -> None:
        """Store ``changes`` (key -> citations; ``None`` removes) in ``source``'s side file, re-anchoring
        each stored citation that moved (:func:`~mnemon_ls.citations.freshness.reanchored`)."""
        anchored = {key: [freshness.reanchored(self.workspace, c) for c in cites] if cites else None
                    for key, cites in changes.items()}
        if anchored or keep is not None:
            self.file(source).update(anchored, keep)

    def of(self, source: str, key: str) -> list[Citation]:
        """The citations stored for ``key`` (``[]`` when none)."""
        return self.file(source).read().get(key, [])

    def table(self, source: str) -> dict[str, list[Citation]]:
        """Every key's citations of ``source``."""
        return self.file(source).read()

    def views(self, cites: Iterable[Citation]) -> list[dict[str, Any]]:
        """Each citation with its freshness now (:func:`~mnemon_ls.citations.freshness.view`)."""
        return [freshness.view(self.workspace, c) for c in cites]

    def reanchor(self, source: str, key: str) -> list[Citation]:
        """Re-anchor ``key``'s citations that moved (the memory was written again) and store them; returns
        them as stored."""
        cites = self.of(source, key)
        if not cites:
            return []
        moved = [freshness.reanchored(self.workspace, c) for c in cites]
        if moved != cites:
            self.file(source).update({key: moved})
        return moved
