"""Doctor's read-only look at the native stores (``data/<id>/mnemon.db``) of a root: a store that is not
a SQLite database, is shorter than its own header says, or has a page SQLite cannot read (``quick_check``)
fails every recall and remember of its space, so ``mnemon-ls doctor`` names it. Reads the first 100 bytes of
each file and its size; opens SQLite only immutable and read-only (an ordinary open may write: a WAL file, a
journal), never changes a byte.

The header fields used are those of the SQLite file format: the page size (offset 16, big-endian 16-bit;
1 means 65536) and the database size in pages (offset 28, big-endian 32-bit), valid only when the change
counter (offset 24) equals the version-valid-for number (offset 92). A store with a ``-wal`` or ``-journal``
file beside it is only checked for its header: its size may lag until the next checkpoint or rollback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from ..findings import Finding
from ..sqliteindex import open_snapshot
from .providers.native_schema import SQLITE_HEADER
from .registry_model import SpaceRecord

_HEADER_BYTES = 100
_ADVICE = ("restore it from a pack (`mnemon-ls pack import --component memory-spaces`) or a backup, or move "
           "it aside and recreate the space; recall and remember of this space fail until then")


def damage(path: Path) -> str | None:
    """Why the store file ``path`` cannot be a whole Mnemon store (``"not a SQLite database ..."`` or
    ``"cut short ..."``), or ``None`` when it looks whole (also when it is missing, empty or unreadable:
    those are reported elsewhere or are a fresh store). Reads only the header and the size."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(_HEADER_BYTES)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return None
    if not header:
        return None
    if not header.startswith(SQLITE_HEADER) or len(header) < _HEADER_BYTES:
        return "not a SQLite database (its first bytes are not a SQLite header)"
    if any(os.path.exists(f"{path}-{log}") for log in ("wal", "journal")) or header[24:28] != header[92:96]:
        return None  # the size in the header is not to be trusted
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and size < pages * page_size:
        return f"cut short: {size} bytes, its header says {pages * page_size}"
    return _page_damage(path)


def _page_damage(path: Path) -> str | None:
    """``"damaged: ..."`` when SQLite's ``quick_check`` finds a page of ``path`` that does not read (bytes
    overwritten inside the file: the header and the size look whole, every query reading that page fails),
    else ``None``. The file is opened ``mode=ro&immutable=1`` (:func:`~mnemon_ls.sqliteindex.open_snapshot`):
    no lock, no ``-wal``/``-shm`` created; called only when no ``-wal``/``-journal`` lies beside it."""
    import sqlite3

    try:
        db = open_snapshot(path)
    except sqlite3.Error:
        return None
    try:
        found = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        found = str(exc)
    finally:
        db.close()
    return None if found == "ok" else f"damaged: SQLite's quick_check says {' '.join(str(found).split())!r}"


def store_findings(records: Iterable[SpaceRecord], store_path: Callable[[str], Path]) -> list[Finding]:
    """A ``problem`` finding for each native space whose store (``store_path(space id)``, the registry's
    ``data/<id>/mnemon.db``) is damaged (:func:`damage`); nothing for a whole store."""
    findings = []
    for record in records:
        if not record.native:
            continue
        path = store_path(record.id)
        why = damage(path)
        if why is not None:
            findings.append(Finding("problem", str(path), f"the store of space {record.name!r} ({record.id}) is {why}",
                                    _ADVICE))
    return findings
