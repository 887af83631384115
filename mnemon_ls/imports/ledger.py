"""What was imported: ``state/imports.jsonl``, one JSON line per imported item, appended durably after the
item's write is committed::

    {"key": "<32 hex>", "origin": "imported", "source": "cursor", "path": "/abs/.cursor/rules/style.mdc",
     "sha256": "<file digest>", "title": "...", "destination": "user|memory|document|space", "ref": "...",
     "importedAt": "<ISO 8601>"}

``key`` is :func:`item_key` of the (redacted) text: a second import of the same text, from the same file or
another, adds nothing. ``bareKey`` (an entry the import led with its heading or scope,
:func:`~.reading.markdown_items`): :func:`item_key` of its text as the file has it, so the same bullet found later
without that heading is known as imported (:func:`read_bare_keys`). An item a Source refused (a Document over
``documents.maxBodyBytes``, the active Documents full, ...) is recorded with ``"origin": "refused"``, ``code``,
``field``, ``rule`` and ``refusedAt`` instead of ``ref`` and ``importedAt``: it does not count as imported (a
later import tries it again), and that import says it was refused before (:func:`read_refused`). ``ref`` says
where the item went (the runtime entry's lineage: ``runtime:<target>:<sha256 of the entry>``; ``document:<id>``;
``memory-space:<space id>/item:<item id>``). A torn last line is skipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from .. import fsio
from ..linefile import after_torn_line
from ..runtime.ops import similarity_key


def ledger_path(root: Path) -> Path:
    """``<root>/state/imports.jsonl``."""
    return root / "state" / "imports.jsonl"


def item_key(text: str) -> str:
    """The provenance key of an item's text: 32 hex of sha256 of its :func:`similarity_key` (case,
    whitespace and punctuation do not make a new item)."""
    return hashlib.sha256(("import\0" + similarity_key(text)).encode("utf-8")).hexdigest()[:32]


def _rows(root: Path) -> list[dict[str, Any]]:
    """The ledger's rows with a ``key`` (a torn or foreign line skipped)."""
    rows = []
    for line in (fsio.read_bytes_or_none(ledger_path(root)) or b"").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("key"), str):
            rows.append(row)
    return rows


def read_keys(root: Path) -> set[str]:
    """The keys of every item imported into ``root`` (empty when nothing was); a refused item is not one."""
    return {row["key"] for row in _rows(root) if row.get("origin") != "refused"}


def read_bare_keys(root: Path) -> set[str]:
    """The ``bareKey`` of every item imported into ``root`` that has one (module doc)."""
    return {row["bareKey"] for row in _rows(root) if row.get("origin") != "refused" and isinstance(row.get("bareKey"),
                                                                                                    str)}


def read_refused(root: Path) -> dict[str, str]:
    """Item key -> when (ISO 8601, the last time) an import into ``root`` recorded that item as refused."""
    return {row["key"]: str(row.get("refusedAt") or "") for row in _rows(root) if row.get("origin") == "refused"}


def append(root: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Append ``rows`` durably (fsync) to the ledger; a torn last line (a killed append: no final newline) is
    closed first, so the first new row is not glued onto it and lost."""
    data = b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n" for r in rows)
    if data:
        path = ledger_path(root)
        fsio.ensure_dir(path.parent)
        fsio.append_file_durably(path, after_torn_line(path, data))
