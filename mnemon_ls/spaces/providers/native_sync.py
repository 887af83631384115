"""The side index of a native space kept in step with its ``mnemon.db``: :class:`NativeSync`, a mixin of
:class:`~mnemon_ls.spaces.providers.native.NativeProvider` (module doc there, "Search").

Before each read or write the provider calls :meth:`NativeSync._sync` inside its transaction. When
``PRAGMA data_version`` says no other connection committed since the last check, that is all it costs.
Otherwise the *fingerprint* of ``mnemon.db`` (``{"rowid", "oplog", "active", "total"}``: the newest rowid and
oplog id, active and all rows) is compared with the one the index stored; the rows added after the stored
rowid and the ids the oplog names since the stored oplog id are re-indexed, and a full reconcile by row
signature runs when that cannot be told (an oplog gap, rows gone without an entry, counts that disagree).
A side index that cannot be written (full or read-only file system) is rebuilt in memory: derived data, so
nothing is lost. Never changes ``mnemon.db``.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any, Sequence

from ... import fsio, nowait
from ..index import IndexRow, SideIndex
from ..model import epoch_seconds
from .base import iter_chunks
from .native_schema import _REFRESH_OPS, _ROW_COLUMNS, _is_busy, _json_list


class NativeSync:
    """The side-index sync of :class:`~mnemon_ls.spaces.providers.native.NativeProvider` (module doc); it uses
    the provider's ``index``, ``semantic``, ``_lock``, ``_read``, ``_has_oplog`` and ``_verified``."""

    def _fingerprint(self, db: sqlite3.Connection) -> dict:
        rowid = db.execute("SELECT coalesce(max(rowid), 0) FROM insights").fetchone()[0]
        oplog = db.execute("SELECT coalesce(max(id), 0) FROM oplog").fetchone()[0] if self._has_oplog else 0
        active = db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0]
        total = db.execute("SELECT count(*) FROM insights").fetchone()[0]
        return {"rowid": rowid, "oplog": oplog, "active": active, "total": total}

    def _sync(self, db: sqlite3.Connection, *, force: bool = False) -> dict:
        """Bring the side index up to ``mnemon.db`` (call inside a transaction). Returns the fingerprint."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        verified = self._verified
        try:
            self.index.connect()
        except sqlite3.DatabaseError:
            if not self._index_to_memory():
                self.index.reset()
        except OSError:  # storage-full / -readonly creating the index file
            if not self._index_to_memory():
                raise
        if not force and verified is not None and verified[0] == version and verified[1] == self.index.opens:
            return verified[2]
        fp = self._fingerprint(db)
        try:
            self._catch_up(db, fp, force)
        except (sqlite3.DatabaseError, OSError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                raise
            if not self._index_to_memory():  # a full disk must not cost the index file
                if isinstance(exc, OSError):
                    raise
                self.index.reset()
            self._catch_up(db, fp, True)
        self.index.connect()
        self._verified = (version, self.index.opens, fp)
        if self.semantic is not None:  # another connection wrote: embed what it added
            self.semantic.changed(self._changed_since(db, verified[2] if verified is not None else None, fp))
        return fp

    def _changed_since(self, db: sqlite3.Connection, previous: dict | None, fp: dict) -> list[str] | None:
        """The ids another connection added or changed between the fingerprint ``previous`` (what this
        provider last knew, its own writes included) and ``fp``: rows after ``previous["rowid"]`` and the ids
        the oplog names since ``previous["oplog"]`` (at most a few reads by index, never a scan). ``None``
        when that cannot be told (nothing known before, an oplog gap, rows gone without an oplog entry):
        the semantic side then sweeps the whole space."""
        if previous is None or fp["rowid"] < previous["rowid"] or fp["oplog"] < previous["oplog"]:
            return None
        if fp == previous:
            return []
        if _oplog_gap(db, fp, previous):
            return None
        added = [r[0] for r in db.execute("SELECT id FROM insights WHERE rowid > ?", (previous["rowid"],))]
        if fp["total"] != previous["total"] + len(added):
            return None  # rows deleted outright (or rewritten): only a sweep finds their vectors
        return list(dict.fromkeys(added + _named_since(db, fp, previous)))

    def _index_to_memory(self) -> bool:
        """On a full or read-only file system, serve this provider from an in-memory side index rebuilt
        from ``mnemon.db`` (derived data: nothing is lost, the file is kept for later); ``True`` when it
        switched, ``False`` when the file system takes writes (the caller handles the error)."""
        if self.index.path is None or fsio.writes_refused(self.index.path) is None:
            return False
        self.index.close()
        self.index = SideIndex(None)
        self._verified = None
        return True

    def _catch_up(self, db: sqlite3.Connection, fp: dict, full: bool) -> None:
        index = self.index
        stored = index.fingerprint()
        if not full and stored == fp:
            return
        nowait.check(self.index.path or "the side index")  # the side index catches up (writes, scales with the change)
        if not full and stored is not None and fp["rowid"] >= stored["rowid"] and fp["oplog"] >= stored["oplog"]:
            if not _oplog_gap(db, fp, stored):
                rows = [self._index_row(r) for r in
                        db.execute(f"SELECT {_ROW_COLUMNS} FROM insights WHERE rowid > ?", (stored["rowid"],))]
                named = _named_since(db, fp, stored)
                seen = {row.id for row in rows}
                wanted = [key for key in named if key not in seen]
                found: set[str] = set()
                for chunk in iter_chunks(wanted, 500):
                    marks = ",".join("?" * len(chunk))
                    for r in db.execute(f"SELECT {_ROW_COLUMNS} FROM insights WHERE id IN ({marks})", list(chunk)):
                        rows.append(self._index_row(r))
                        found.add(r[1])
                removed = [key for key in wanted if key not in found]
                if not rows and not removed and _counts(stored) == _counts(fp):
                    # nothing to re-index (only oplog rows that change no item: e.g. our own access counters):
                    # the index still holds what the stored fingerprint counted, no write and no count
                    # (two scans of the index, ~4 ms each at 100,000 items) is needed to say so
                    index.apply([], fingerprint=fp)
                    return
                index.apply(rows, removed=removed)
                if index.counts() == _counts(fp):
                    index.apply([], fingerprint=fp)
                    return
        self._reconcile(db, fp)

    def _reconcile(self, db: sqlite3.Connection, fp: dict) -> None:
        """Full pass: re-index every row whose signature differs, drop ids ``mnemon.db`` no longer has."""
        known = self.index.signatures()
        rows = [self._index_row(r) for r in db.execute(f"SELECT {_ROW_COLUMNS} FROM insights")]
        if not known:
            self.index.apply(rows, fingerprint=fp, replace_all=True)
            return
        present = {row.id for row in rows}
        changed = [row for row in rows if known.get(row.id) != row.sig()]
        removed = [key for key in known if key not in present]
        self.index.apply(changed, removed=removed, fingerprint=fp, force=True)

    @staticmethod
    def _index_row(r: Sequence[Any]) -> IndexRow:
        importance = r[4] if isinstance(r[4], int) and not isinstance(r[4], bool) else None
        return IndexRow(id=str(r[1]), content=r[2] if isinstance(r[2], str) else "",
                        category=r[3] if isinstance(r[3], str) else None, importance=importance,
                        tags=_json_list(r[5]), entities=_json_list(r[6]),
                        source=r[7] if isinstance(r[7], str) else None,
                        created=epoch_seconds(r[8]) or 0.0, active=r[9] is None)

    def reindex(self) -> dict:
        """Rebuild the side index from ``mnemon.db`` (deletes the file first). Returns ``{"items", "seconds"}``."""
        with self._lock:
            started = time.perf_counter()
            self.index.reset()
            fp = self._read(lambda db: self._sync(db, force=True))
            return {"items": fp["active"], "seconds": round(time.perf_counter() - started, 3)}

    def sync(self) -> dict:
        """Catch the side index up with ``mnemon.db`` now (cheap when nothing changed); returns the fingerprint."""
        with self._lock:
            return self._read(lambda db: self._sync(db))


def _counts(fp: dict) -> tuple[int, int]:
    """``(active, total)`` rows of a fingerprint (a stored one may lack them: ``-1``, which no index count is)."""
    return fp.get("active", -1), fp.get("total", -1)


def _oplog_gap(db: sqlite3.Connection, fp: dict, since: dict) -> bool:
    """Whether oplog entries after the fingerprint ``since`` are gone (compacted away) by ``fp``: then what
    changed in between cannot be told from the oplog."""
    if fp["oplog"] <= since["oplog"]:
        return False
    low = db.execute("SELECT min(id) FROM oplog").fetchone()[0]
    return low is None or low > since["oplog"] + 1


def _named_since(db: sqlite3.Connection, fp: dict, since: dict) -> list[str]:
    """Distinct insight ids the oplog names for a content-changing operation (:data:`_REFRESH_OPS`) after the
    fingerprint ``since`` (none when ``fp`` holds no newer entry)."""
    if fp["oplog"] <= since["oplog"]:
        return []
    marks = ",".join("?" * len(_REFRESH_OPS))
    return [r[0] for r in db.execute(
        f"SELECT DISTINCT insight_id FROM oplog WHERE id > ? AND insight_id != '' AND operation IN ({marks})",
        (since["oplog"], *_REFRESH_OPS))]
