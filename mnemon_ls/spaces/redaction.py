"""Stored secrets in the Memory Spaces Source: find them (``doctor``) and redact them (``mnemon-ls redact --apply``).

What is looked at: the native catalog (``data/.dsh-memory-bodies.json``, its last-good copy and
``data/.quarantine/``, the ``.json`` entries of deleted spaces: space names and descriptions) and every
``data/<id>/mnemon.db`` and ``data/.deleted/<stamp>-<id>/mnemon.db`` (a deleted space's store; insight
content, category, source, tags and entities, oplog details, edge metadata; category, source, tags and entities are
labels, judged as the write path and a recall judge them: :func:`cell_secrets`, :mod:`.foreign`).
``state/memory-providers.json`` holds the credentials of configured third-party providers on purpose (DESIGN.md
invariant 6) and is left alone.

Applying rewrites the catalog through :meth:`SpaceRegistry.update` (lock, temp + fsync + rename, the
last-good copy) and each ``mnemon.db`` in one ``BEGIN IMMEDIATE`` transaction with
``PRAGMA secure_delete=ON`` (freed cells are zeroed), then ``VACUUM`` and ``wal_checkpoint(TRUNCATE)``,
so no old value survives in free pages or the WAL. The side search index (``.mnemon-ls-index.db``) is
derived: it is deleted (with its WAL) and rebuilt from the redacted store on the next recall.
Space names that held a credential get the placeholder as their name (a stored name cannot be refused).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from .. import fsio
from ..redact import (SecretMatch, find_label_secrets, find_secrets, redact_file_bytes, redact_json_value, redact_label,
                      redact_text)
from ..sqliteindex import open_existing, open_reader
from .deleted import DELETED_DIR
from .index import INDEX_FILE
from .model import BRANCH_TAG_PREFIX
from .service import SpacesService

_SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")
_COLUMNS = {"insights": ("id", ("content", "category", "source", "tags", "entities")), "oplog": ("id", ("detail",)),
            "edges": ("rowid", ("metadata",))}


def _where(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _databases(svc: SpacesService) -> list[Path]:
    """Every registered store's ``mnemon.db``, then those of deleted spaces (``data/.deleted/*/mnemon.db``,
    :mod:`.deleted`): still under the root, so a secret there is found and redacted too."""
    deleted = svc.registry.data_dir / DELETED_DIR
    kept = sorted(p / "mnemon.db" for p in deleted.iterdir() if p.is_dir() and not p.is_symlink()
                  and (p / "mnemon.db").is_file()) if deleted.is_dir() else []
    return [svc.root / "data" / name / "mnemon.db" for name in svc.registry.store_dirs()] + kept


def _catalog_files(svc: SpacesService) -> list[Path]:
    registry = svc.registry
    paths = [registry.native_path, registry.last_good_path]
    quarantine = registry.data_dir / ".quarantine"
    if quarantine.is_dir():
        paths.extend(sorted(p for p in quarantine.iterdir() if p.is_file()))
    deleted = registry.data_dir / DELETED_DIR  # the catalog entries of deleted spaces, beside their stores
    if deleted.is_dir():
        paths.extend(sorted(p for p in deleted.iterdir() if p.suffix == ".json" and p.is_file()))
    return [p for p in paths if p.is_file()]


#: Columns whose JSON strings are labels: judged by :func:`mnemon_ls.redact.find_label_secrets` (a
#: random-looking word of 20+ characters counts), as the write path judges them.
_LABEL_COLUMNS = ("tags", "entities")
#: Columns that are one label each (free strings the Mnemon CLI stores as given), judged as a recall judges them
#: (:func:`mnemon_ls.spaces.foreign.redact_results`: :func:`~mnemon_ls.redact.find_label_secrets`).
_SINGLE_LABEL_COLUMNS = ("category", "source")


def _label_finder(column: str, label: str) -> Any:
    """The detector for one label: a ``branch:<name>`` tag is a branch scope, judged like a branch name
    (:func:`~mnemon_ls.redact.find_secrets`, as the write path does); any other tag or entity as a label."""
    return find_secrets if column == "tags" and label.startswith(BRANCH_TAG_PREFIX) else find_label_secrets


def _labels(value: str) -> list[str] | None:
    """The strings of a tags/entities cell (a JSON list), or ``None`` when it is not one."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return [v for v in parsed if isinstance(v, str)] if isinstance(parsed, list) else None


def cell_secrets(column: str, value: Any) -> list[SecretMatch]:
    """What looks like a credential in one stored cell (offsets into ``value``): ``tags`` and ``entities``
    element by element as labels (:func:`~mnemon_ls.redact.find_label_secrets`), any other text with
    :func:`~mnemon_ls.redact.find_secrets`; ``category`` and ``source`` as one label each. ``[]`` for a value that
    is not a string."""
    if not isinstance(value, str):
        return []
    if column in _SINGLE_LABEL_COLUMNS:
        return find_label_secrets(value)
    found = find_secrets(value)
    labels = _labels(value) if column in _LABEL_COLUMNS else None
    for label in labels or ():
        at = value.find(json.dumps(label, ensure_ascii=False)[1:-1])
        for match in _label_finder(column, label)(label):
            start = max(at, 0) + match.start
            if not any(start < a.end and a.start < start + (match.end - match.start) for a in found):
                found.append(SecretMatch(match.kind, start, start + match.end - match.start))
    return sorted(found, key=lambda m: m.start)


def _redact_cell(column: str, value: Any) -> tuple[Any, list[str]]:
    if not isinstance(value, str):
        return value, []
    if column in _SINGLE_LABEL_COLUMNS:
        new, matches = redact_label(value)
        return new, [m.kind for m in matches]
    if column in ("tags", "entities", "metadata"):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if column in _LABEL_COLUMNS and isinstance(parsed, list):
            kinds: list[str] = []
            new_list = []
            for item in parsed:
                if isinstance(item, str):
                    item, matches = (redact_text if _label_finder(column, item) is find_secrets else redact_label)(item)
                    kinds.extend(m.kind for m in matches)
                new_list.append(item)
            return (json.dumps(new_list, ensure_ascii=False, separators=(",", ":")) if kinds else value), kinds
        if isinstance(parsed, (list, dict)):
            new, kinds = redact_json_value(parsed)
            return (json.dumps(new, ensure_ascii=False, separators=(",", ":")) if kinds else value), kinds
    new, matches = redact_text(value)
    return new, [m.kind for m in matches]


def _tables(db: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {n: {r[1] for r in db.execute(f"PRAGMA table_info({n})")} for n in names if n in _COLUMNS}


def scan(svc: SpacesService) -> list[dict[str, Any]]:
    """Findings ``{"location", "kind", "position"}`` (never the value). Read-only (databases are opened with
    :func:`mnemon_ls.sqliteindex.open_reader`: nothing written, no ``-wal``/``-shm`` left behind); a value found only in
    the raw bytes of a database file (free pages, the WAL, the side index) is reported against that file."""
    found: list[dict[str, Any]] = []
    root = svc.root
    for path in _catalog_files(svc):
        for match in find_secrets((fsio.read_bytes_or_none(path) or b"").decode("utf-8", "replace")):
            found.append({"location": _where(root, path), "kind": match.kind, "position": match.start})
    for db_path in _databases(svc):
        where = _where(root, db_path)
        rows = 0
        try:
            db = open_reader(db_path)  # reads only, and leaves no -wal/-shm behind
        except sqlite3.Error:
            continue
        try:
            for table, columns in _tables(db).items():
                key, wanted = _COLUMNS[table]
                cols = [c for c in wanted if c in columns]
                if not cols:
                    continue
                for row in db.execute(f"SELECT {key}, {', '.join(cols)} FROM {table}"):
                    for column, value in zip(cols, row[1:]):
                        if isinstance(value, str):
                            for match in cell_secrets(column, value):
                                rows += 1
                                found.append({"location": f"{where} {table}[{row[0]}].{column}",
                                              "kind": match.kind, "position": match.start})
        except sqlite3.Error:
            pass
        finally:
            db.close()
        if rows:
            continue
        for suffix in _SQLITE_SUFFIXES:
            for file in (Path(f"{db_path}{suffix}"), Path(f"{db_path.parent / INDEX_FILE}{suffix}")):
                data = fsio.read_bytes_or_none(file) if file.is_file() else None
                if data:
                    for match in find_secrets(data.decode("latin-1")):
                        found.append({"location": f"{_where(root, file)} (raw pages: deleted rows, WAL or side "
                                                  "index)", "kind": match.kind, "position": match.start})
    return found


def apply(svc: SpacesService) -> dict[str, Any]:
    """Redact every stored value (module doc). Returns ``{"spaces": n catalog entries changed, "items":
    n database cells changed, "databases": [rewritten files], "files": [rewritten catalog copies]}``."""
    result: dict[str, Any] = {"spaces": 0, "items": 0, "databases": [], "files": []}
    root = svc.root
    if (svc.registry.data_dir).is_dir():
        for record in svc.state().bodies:
            name, description = redact_text(record.name)[0], redact_text(record.description)[0]
            if (name, description) != (record.name, record.description):
                svc.registry.update(record.id, name=name, description=description)
                result["spaces"] += 1
        quarantine = svc.registry.data_dir / ".quarantine"
        copies = sorted(p for p in quarantine.iterdir() if p.is_file()) if quarantine.is_dir() else []
        deleted = svc.registry.data_dir / DELETED_DIR
        if deleted.is_dir():
            copies += sorted(p for p in deleted.iterdir() if p.suffix == ".json" and p.is_file())
        if copies:
            for path in copies:
                new, kinds = redact_file_bytes(path.read_bytes(), path.name)
                if kinds:
                    fsio.write_file_atomically(path, new)
                    result["files"].append(_where(root, path))
    svc.close()  # no open connection of ours keeps old pages or the side index alive
    for db_path in _databases(svc):
        changed = _rewrite_database(db_path)
        index = db_path.parent / INDEX_FILE
        if changed or _raw_secret(db_path) or _raw_secret(index):
            for suffix in _SQLITE_SUFFIXES:
                try:
                    os.unlink(f"{index}{suffix}")
                except FileNotFoundError:
                    pass
            if changed or _raw_secret(db_path):
                _compact(db_path)
            result["items"] += changed
            result["databases"].append(_where(root, db_path))
    return result


def _rewrite_database(db_path: Path) -> int:
    db = open_existing(db_path)  # never creates a missing store
    changed = 0
    try:
        db.execute("PRAGMA secure_delete=ON")
        db.execute("BEGIN IMMEDIATE")
        try:
            for table, columns in _tables(db).items():
                key, wanted = _COLUMNS[table]
                cols = [c for c in wanted if c in columns]
                if not cols:
                    continue
                rows = db.execute(f"SELECT {key}, {', '.join(cols)} FROM {table}").fetchall()
                for row in rows:
                    updates = {}
                    for column, value in zip(cols, row[1:]):
                        new, kinds = _redact_cell(column, value)
                        if kinds:
                            updates[column] = new
                    if updates:
                        assignments = ", ".join(f"{c} = ?" for c in updates)
                        db.execute(f"UPDATE {table} SET {assignments} WHERE {key} = ?", (*updates.values(), row[0]))
                        changed += 1
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    finally:
        db.close()
    return changed


def _compact(db_path: Path) -> None:
    """Rewrite every page (VACUUM) and empty the WAL, so deleted cells and old frames are gone."""
    db = open_existing(db_path)  # never creates a missing store
    try:
        db.execute("PRAGMA secure_delete=ON")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def _raw_secret(path: Path) -> bool:
    for suffix in _SQLITE_SUFFIXES:
        file = Path(f"{path}{suffix}")
        if file.is_file() and find_secrets((fsio.read_bytes_or_none(file) or b"").decode("latin-1")):
            return True
    return False
