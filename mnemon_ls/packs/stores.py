"""The staged stores of a pack import: whether a pack's store is already here (:func:`same_store`) and
whether staged text may hold a credential (:func:`any_secret`, :func:`store_has_secret`), so the
redaction passes of :mod:`.importer` run only when they have something to do."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any, Sequence

from .. import fsio
from ..errors import PackInvalid


def any_secret(texts: Sequence[str]) -> bool:
    """Whether any of ``texts`` holds what :func:`mnemon_ls.redact.find_secrets` calls a credential
    (one pass over the joined texts: the common case, nothing found, costs one scan)."""
    from ..redact import find_secrets

    return bool(texts) and bool(find_secrets("\n".join(texts)))


#: ``insights`` columns a read rewrites (access bookkeeping), left out when two stores are compared.
_READ_COLUMNS = frozenset({"access_count", "last_accessed_at"})
#: Tables whose rows are a space's content (``oplog`` is a log a read appends to; not content).
_CONTENT_TABLES = ("insights", "edges")


def same_store(path: Path, data: bytes, stage: Path, *, read_copy: bool = False) -> bool:
    """Whether the store at ``path`` already holds the pack's store ``data``: byte-identical, or the
    same rows in :data:`_CONTENT_TABLES` (same columns; ``insights`` without :data:`_READ_COLUMNS`), so
    a store only read since it was imported (access counters, ``recall`` oplog rows, WAL checkpoint,
    page layout) is still "already here". A store either side SQLite cannot read is not the same.
    ``read_copy``: read a copy of ``path`` (and its ``-wal``) made in ``stage`` instead of ``path`` itself,
    so not even SQLite's ``-shm``/``-wal`` files appear beside it (a dry run writes nothing under the root)."""
    import sqlite3

    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return True
    except OSError:
        return False
    probe = stage / f".same-{uuid.uuid4()}" / "mnemon.db"
    try:
        fsio.create_file_durably(probe, data)
        existing = path
        if read_copy:
            existing = probe.parent / "existing" / "mnemon.db"
            fsio.create_file_durably(existing, path.read_bytes())
            wal = fsio.read_bytes_or_none(Path(f"{path}-wal"))
            if wal:
                fsio.create_file_durably(Path(f"{existing}-wal"), wal)
        return _content_rows(probe, immutable=True) == _content_rows(existing, immutable=False)
    except (OSError, sqlite3.Error):
        return False
    finally:
        shutil.rmtree(probe.parent, ignore_errors=True)


def _content_rows(db_path: Path, *, immutable: bool) -> dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]]:
    """Per content table: its compared columns and its rows in a stable order (read only)."""
    import sqlite3

    db = sqlite3.connect(f"{db_path.as_uri()}?mode=ro{'&immutable=1' if immutable else ''}", uri=True)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        result: dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]] = {}
        for table in _CONTENT_TABLES:
            if table not in tables:
                continue
            columns = tuple(sorted(row[1] for row in db.execute(f'PRAGMA table_info("{table}")')
                                   if table != "insights" or row[1] not in _READ_COLUMNS))
            if not columns:
                continue
            listed = ", ".join(f'"{c}"' for c in columns)
            rows = db.execute(f'SELECT {listed} FROM "{table}"').fetchall()
            result[table] = (columns, sorted(rows, key=repr))
        return result
    finally:
        db.close()


def store_has_secret(db_path: Path) -> bool:
    """Whether a staged store may hold a credential: in a text cell the spaces redaction pass rewrites
    (:data:`mnemon_ls.spaces.redaction._COLUMNS`: contents, categories, sources, tags, entities, oplog details, edge
    metadata)
    or, when the file has free pages (deleted rows' bytes), anywhere in its raw
    bytes. Only then does the full pass (:func:`mnemon_ls.spaces.redaction.apply`) run. A store SQLite
    cannot read raises :class:`PackInvalid`."""
    import sqlite3

    try:
        return _scan_store(db_path)
    except sqlite3.DatabaseError as exc:  # validated before (quick_check); a store SQLite still cannot read
        raise PackInvalid(f"entry:payload/data/{db_path.parent.name}/mnemon.db",
                          f"is not a readable Mnemon store ({exc})") from None


def _scan_store(db_path: Path) -> bool:
    import sqlite3

    from ..redact import find_secrets
    from ..spaces import redaction

    db = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True)
    try:
        texts: list[str] = []
        labelled = False
        for table, columns in redaction._tables(db).items():
            wanted = [c for c in redaction._COLUMNS[table][1] if c in columns]
            if wanted:
                for row in db.execute(f"SELECT {', '.join(wanted)} FROM {table}"):
                    texts.extend(v for v in row if isinstance(v, str))
                    # tags, entities, category and source are labels: a random-looking word counts (as on the
                    # write path and in a recall)
                    labelled = labelled or any(redaction.cell_secrets(column, value) for column, value in zip(
                        wanted, row) if column in redaction._LABEL_COLUMNS + redaction._SINGLE_LABEL_COLUMNS)
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        db.close()
    if labelled or any_secret(texts):
        return True
    return bool(free) and bool(find_secrets(db_path.read_bytes().decode("latin-1")))
