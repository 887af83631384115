"""Status and items of the ``mnemon-native`` provider (:mod:`.native`): ``count``, ``status`` (the CLI's status
object plus index and semantic state), ``get`` and ``export_items`` (the merge-pair export).

:class:`NativeStatus` is a mixin of :class:`~mnemon_ls.spaces.providers.native.NativeProvider`: its methods
use the provider's connection, lock and side index and are only meant to be called on a ``NativeProvider``.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..model import Item, parse_time, rfc3339
from .base import ExportEdge, ExportItem
from ..cover import ACTIVE_ITEMS_SQL
from .native_schema import _json_list


class NativeStatus:
    """Status, counts and export of :class:`~mnemon_ls.spaces.providers.native.NativeProvider` (mixin)."""

    # ------------------------------------------------------------------ status, counts, items

    def count(self) -> int:
        """Active items. Counted again only when the store changed since the last count: another connection
        committed (``PRAGMA data_version``), this provider committed, or the connection was reopened; so the
        wake of a long-lived host (every ``mnemon_wake``) does not count every row each time."""
        with self._lock:
            def run(db: sqlite3.Connection) -> int:
                key = (self._opened, db.execute("PRAGMA data_version").fetchone()[0], self._committed)
                if self._counted is not None and self._counted[0] == key:
                    return self._counted[1]
                active = db.execute(ACTIVE_ITEMS_SQL).fetchone()[0]
                self._counted = (key, active)
                return active
            return self._read(run)

    def status(self) -> dict[str, Any]:
        """The CLI's status object plus ``user_version``, ``read_only``, ``notice``, ``index`` (``{"path",
        "size_bytes", "items"}``), ``supersedes_edges`` (whether the schema allows them) and ``semantic``
        (:meth:`mnemon_ls.semantic.spaces.SpaceSemantic.status`, or ``{"state": "off"}``)."""
        with self._lock:
            def run(db: sqlite3.Connection) -> dict[str, Any]:
                self._sync(db)
                active = db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0]
                deleted = db.execute("SELECT count(*) FROM insights WHERE deleted_at IS NOT NULL").fetchone()[0]
                by_category = {}
                if "category" in self._columns:
                    by_category = {row[0] or "general": row[1] for row in db.execute(
                        "SELECT category, count(*) FROM insights WHERE deleted_at IS NULL GROUP BY category "
                        "ORDER BY category")}
                edges = db.execute("SELECT count(*) FROM edges").fetchone()[0]
                oplog = db.execute("SELECT count(*) FROM oplog").fetchone()[0] if self._has_oplog else 0
                return {"total_insights": active, "deleted_insights": deleted, "by_category": by_category,
                        "edge_count": edges, "top_entities": self.index.top_entities(20), "oplog_count": oplog,
                        "db_path": str(self.db_path), "db_size_bytes": self.db_path.stat().st_size,
                        "user_version": self.user_version, "read_only": self.read_only_reason is not None,
                        "notice": self.notice, "supersedes_edges": self._supersedes,
                        "index": {"path": str(self.index.path), "size_bytes": self.index.size_bytes(),
                                  "items": self.index.counts()[0]},
                        "semantic": self.semantic.status() if self.semantic is not None else {"state": "off"}}
            return self._read(run)

    def get(self, item_id: str) -> Item | None:
        """The active item ``item_id``, or ``None`` (no access bookkeeping)."""
        with self._lock:
            items = self._read(lambda db: self._load(db, {item_id: (None, None)}))
            return items[0] if items else None

    def ids_starting(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` ids of items, active or forgotten, that start with ``prefix`` (compared as text, no
        pattern: ``_`` and ``%`` are themselves; ASCII letters in either case: ids are lower-case UUIDs, so
        ``3F2A1B0C`` is the start of ``3f2a1b0c-...``), the item whose id is ``prefix`` itself (same case) first; one
        SQL query (no access bookkeeping). :func:`mnemon_ls.spaces.model.full_item_id` makes a short id a full one
        with it: forgotten items count, so that the id (or start) of one never names another, active item."""
        sql = "SELECT id FROM insights WHERE lower(substr(id, 1, ?)) = lower(?) ORDER BY id = ? DESC, id LIMIT ?"

        def run(db: sqlite3.Connection) -> list[str]:
            return [str(r[0]) for r in db.execute(sql, (len(prefix), prefix, prefix, max(0, int(limit))))]
        with self._lock:
            return self._read(run)

    def review_candidates(self, before: str, limit: int) -> list[Item]:
        """Up to ``limit`` active items neither updated nor accessed since ``before`` (RFC3339 UTC, compared as
        text: the store's own ``updated_at`` and ``last_accessed_at``, or ``created_at`` where a store has no
        ``updated_at``), the longest untouched first, each with ``updated_at``/``accessed_at`` set; one bounded
        SQL query (no access bookkeeping): a scan of the table (``+deleted_at``: through the ``deleted_at`` index it
        would look up every active row one by one, about 10x slower at 100,000 items). The review rule
        (:func:`mnemon_ls.citations.review.review_due`) checks each answer again exactly: comparing texts may let
        through an item a few hours short of due (another offset, the legacy ``YYYY-MM-DD HH:MM:SS`` form), never hold
        back one that is due."""
        updated = "updated_at" if "updated_at" in self._columns else "created_at"
        accessed = "last_accessed_at" if "last_accessed_at" in self._columns else "NULL"
        sql = ("SELECT id, content, category, importance, tags, entities, source, created_at, "
               f"{updated}, {accessed} FROM insights WHERE +deleted_at IS NULL AND {updated} < ? "
               f"AND ({accessed} IS NULL OR {accessed} < ?) ORDER BY {updated} ASC, id ASC LIMIT ?")

        def run(db: sqlite3.Connection) -> list[Item]:
            items = []
            for r in db.execute(sql, (before, before, max(0, int(limit)))):
                item = self._item(r, None, None)
                item.updated_at = r[8] if isinstance(r[8], str) else None
                item.accessed_at = r[9] if isinstance(r[9], str) else None
                items.append(item)
            return items
        with self._lock:
            return self._read(run)

    # ------------------------------------------------------------------ merge pair

    def export_items(self) -> tuple[list[ExportItem], list[ExportEdge]]:
        """Every active item (oldest first) and the edges among them."""
        def run(db: sqlite3.Connection):
            items = []
            order = "created_at ASC, rowid ASC"
            for r in db.execute("SELECT id, content, category, importance, tags, entities, source, created_at "
                                f"FROM insights WHERE deleted_at IS NULL ORDER BY {order}"):
                importance = r[3] if isinstance(r[3], int) and 1 <= r[3] <= 5 else 3
                created = parse_time(r[7])
                items.append(ExportItem(id=r[0], content=r[1] or "",
                                        category=r[2] if isinstance(r[2], str) else "general",
                                        importance=importance, tags=_json_list(r[4]), entities=_json_list(r[5]),
                                        source=r[6] if isinstance(r[6], str) and r[6] else "user",
                                        created_at=rfc3339(created) if created else self._now()))
            ids = {item.id for item in items}
            edges = []
            for src, tgt, kind, weight, meta in db.execute(
                    "SELECT source_id, target_id, edge_type, weight, metadata FROM edges ORDER BY rowid"):
                if src in ids and tgt in ids:
                    try:
                        parsed = json.loads(meta) if meta else {}
                    except ValueError:
                        parsed = {}
                    clean = {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}
                    edges.append(ExportEdge(src, tgt, kind, float(weight if weight is not None else 1.0), clean))
            return items, edges
        with self._lock:
            return self._read(run)
