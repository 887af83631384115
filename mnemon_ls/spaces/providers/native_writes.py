"""Write path of the ``mnemon-native`` provider (:mod:`.native`): ``remember``/``remember_many``, the automatic
edges and ``effective_importance`` (mnemon-cli.md 7-8), ``link``, ``forget`` and ``import_items`` (the
merge-pair import, with the temporal backbone rebuild).

:class:`NativeWrites` is a mixin of :class:`~mnemon_ls.spaces.providers.native.NativeProvider`: its methods
use the provider's connection, lock, transactions (``_write``/``_read``) and side-index bookkeeping
(``_after_write``) and are only meant to be called on a ``NativeProvider``. Shapes, errors and guarantees are
in :mod:`.native`'s module doc and each method's docstring.
"""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any, Sequence

from .. import graph
from ...errors import InvalidInput, choice_rule
from ..index import BULK_ROWS, TOKENIZER, IndexRow
from ..model import EDGE_TYPES, epoch_seconds, parse_time, rfc3339
from .base import ExportEdge, ExportItem
from .native_schema import _ROW_COLUMNS, BULK_CACHE_KIB, CACHE_KIB, _json_dump, missing_item


class NativeWrites:
    """Writes of :class:`~mnemon_ls.spaces.providers.native.NativeProvider` (mixin; see module doc)."""

    # ------------------------------------------------------------------ remember

    def remember(self, content: str, *, category: str = "general", importance: int = 3,
                 tags: Sequence[str] = (), entities: Sequence[str] = (), source: str = "user",
                 entity_mode: str = "merge") -> dict[str, Any]:
        """Store one insight (validated values; see module doc). Returns the CLI's remember JSON shape:
        ``{"id", "content", "category", "importance", "tags", "entities", "action": "added", "diff_suggestion":
        "ADD", "created_at", "edges_created": {"temporal", "entity", "causal", "semantic"}, "embedded": false,
        "effective_importance", "auto_pruned": 0, "auto_pruned_ids": []}`` or, for an exact duplicate,
        ``{"id": <unstored uuid>, "content", "action": "skipped", "diff_suggestion": "DUPLICATE",
        "replaced_id": <existing id>}``."""
        return self.remember_many([{"content": content, "category": category, "importance": importance,
                                    "tags": tags, "entities": entities, "source": source}], entity_mode=entity_mode)[0]

    def remember_many(self, items: Sequence[dict[str, Any]], *, entity_mode: str = "merge") -> list[dict[str, Any]]:
        """Store several insights in one write transaction (one durable commit; all or nothing).

        ``items[i]`` holds :meth:`remember`'s keyword arguments (``content`` required, validated values);
        the results are :meth:`remember`'s, in order. An exact duplicate of a stored item or of an earlier
        item of the batch is ``skipped`` naming that item. Later items see the earlier ones (temporal and
        entity edges), as if remembered one by one."""
        prepared = [(item, graph.merge_entities(list(item.get("entities") or ()), item["content"], entity_mode))
                    for item in items]
        with self._lock:
            added: list[IndexRow] = []

            def body(db: sqlite3.Connection) -> list[dict[str, Any]]:
                added.clear()  # a busy retry runs the body again from the start
                fp = self._sync(db)
                now = self._now()
                results: list[dict[str, Any]] = []
                in_batch: dict[str, str] = {}
                pending: dict[str, list[str]] = {}
                rowid: int | None = None
                for item, final_entities in prepared:
                    content = item["content"]
                    category, importance = item.get("category") or "general", int(item.get("importance", 3))
                    tags, source = list(item.get("tags") or ()), item.get("source") or "user"
                    existing = in_batch.get(content) or self._duplicate_of(db, content)
                    if existing is not None:
                        unstored = str(uuid.uuid4())
                        self._oplog(db, "diff-skip", unstored, f"duplicate of {existing}", now)
                        results.append({"id": unstored, "content": content, "action": "skipped",
                                        "diff_suggestion": "DUPLICATE", "replaced_id": existing})
                        continue
                    new_id = str(uuid.uuid4())
                    rowid = self._insert(db, new_id, content, category, importance, tags, final_entities,
                                         source, now, now)
                    edges = self._auto_edges(db, new_id, content, source, final_entities, now, temporal=True,
                                             pending=pending)
                    for entity in final_entities:
                        pending.setdefault(entity, []).append(new_id)
                    ei = self._refresh_ei(db, new_id, importance)
                    self._oplog(db, "remember", new_id, content, now)
                    added.append(IndexRow(new_id, content, category, importance, tags, final_entities, source,
                                          epoch_seconds(now) or 0.0, True))
                    in_batch[content] = new_id
                    results.append({"id": new_id, "content": content, "category": category, "importance": importance,
                                    "tags": tags, "entities": final_entities, "action": "added",
                                    "diff_suggestion": "ADD", "created_at": now, "edges_created": edges,
                                    "semantic_candidates": [], "causal_candidates": [], "embedded": False,
                                    "effective_importance": ei, "auto_pruned": 0, "auto_pruned_ids": []})
                self._pending_fp = self._bump(fp, db, new_rows=len(added), rowid=rowid)
                return results

            self._pending_fp = None
            result = self._write(body)
            self._after_write(added, self._pending_fp)
            return result

    def _bump(self, fp: dict, db: sqlite3.Connection, *, new_rows: int, rowid: int | None = None,
              deleted: int = 0) -> dict:
        oplog = db.execute("SELECT coalesce(max(id), 0) FROM oplog").fetchone()[0] if self._has_oplog else 0
        return {"rowid": max(fp["rowid"], rowid or 0), "oplog": oplog,
                "active": fp["active"] + new_rows - deleted, "total": fp["total"] + new_rows}

    def _after_write(self, rows: list[IndexRow], fp: dict | None, removed: Sequence[str] = ()) -> None:
        """Index what we just committed (best effort: a failure is repaired by the next sync)."""
        if fp is None:
            return
        try:
            self.index.apply(rows, removed=removed, fingerprint=fp)
            if self._verified is not None:
                self._verified = (self._verified[0], self._verified[1], fp)
        except sqlite3.Error:
            self._verified = None
            try:
                self.index.reset()
            except OSError:
                pass
        if self.semantic is not None and (rows or removed):
            self.semantic.remembered([row.id for row in rows if row.active], sweep=bool(removed) or len(rows) > 1)

    def _duplicate_of(self, db: sqlite3.Connection, content: str) -> str | None:
        for candidate in self.index.duplicates(content):
            row = db.execute("SELECT content FROM insights WHERE id = ? AND +deleted_at IS NULL",
                             (candidate,)).fetchone()
            if row is not None and row[0] == content:
                return candidate
        return None

    def _insert(self, db: sqlite3.Connection, new_id: str, content: str, category: str, importance: int,
                tags: list[str], entities: list[str], source: str, created_at: str, now: str) -> int:
        values: dict[str, Any] = {
            "id": new_id, "content": content, "category": category, "importance": importance,
            "tags": _json_dump(tags), "entities": _json_dump(entities), "source": source,
            "access_count": 0, "stored_at": now, "created_at": created_at, "updated_at": created_at,
            "deleted_at": None, "embedding": None, "effective_importance": 0.5,
        }
        names = [name for name in values if name in self._columns]
        cursor = db.execute(f"INSERT INTO insights({', '.join(names)}) VALUES({', '.join('?' * len(names))})",
                            [values[name] for name in names])
        return int(cursor.lastrowid or 0)

    def _edge(self, db: sqlite3.Connection, source: str, target: str, edge_type: str, weight: float,
              metadata: dict[str, str], now: str) -> int:
        if edge_type == "supersedes" and not self._supersedes:
            return 0
        try:
            db.execute("INSERT OR REPLACE INTO edges(source_id, target_id, edge_type, weight, metadata, created_at) "
                       "VALUES(?, ?, ?, ?, ?, ?)",
                       (source, target, edge_type, float(weight), _json_dump(metadata), now))
        except sqlite3.IntegrityError:
            return 0
        return 1

    def _auto_edges(self, db: sqlite3.Connection, new_id: str, content: str, source: str, entities: list[str],
                    now: str, *, temporal: bool, pending: dict[str, list[str]] | None = None) -> dict[str, int]:
        counts = {"temporal": 0, "entity": 0, "causal": 0, "semantic": 0}
        has_source = "source" in self._columns
        order = "created_at DESC, rowid DESC"
        if temporal:
            prev = None
            if has_source:
                prev = db.execute(f"SELECT id FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                                  f"ORDER BY {order} LIMIT 1", (source, new_id)).fetchone()
            if prev is not None:
                counts["temporal"] += self._edge(db, prev[0], new_id, "temporal", 1.0,
                                                 {"sub_type": "backbone", "direction": "precedes"}, now)
                counts["temporal"] += self._edge(db, new_id, prev[0], "temporal", 1.0,
                                                 {"sub_type": "backbone", "direction": "succeeds"}, now)
        rows = 0
        for entity in entities:
            if rows >= 50:
                break
            recent = list(reversed(pending.get(entity, [])))[:5] if pending else []
            if len(recent) < 5:
                recent += [o for o in self.index.entity_neighbours(entity, 5, exclude=new_id) if o not in recent]
            for other in recent[:5]:
                if rows >= 50:
                    break
                alive = db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL", (other,)).fetchone()
                if alive is None:
                    continue
                made = self._edge(db, new_id, other, "entity", 1.0, {"entity": entity}, now)
                made += self._edge(db, other, new_id, "entity", 1.0, {"entity": entity}, now)
                rows += made
                counts["entity"] += made
        if has_source:
            recent = db.execute(f"SELECT id, content FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                                f"ORDER BY {order} LIMIT 10", (source, new_id)).fetchall()
            new_cue = graph.causal_cue(content)
            new_terms = TOKENIZER.term_set(content)
            for other, other_content in recent:
                other_cue = graph.causal_cue(other_content or "")
                if not new_cue and not other_cue:
                    continue
                ratio = graph.overlap(new_terms, TOKENIZER.term_set(other_content or ""))
                if ratio < 0.15:
                    continue
                cause, effect, effect_text = (other, new_id, content) if new_cue else (new_id, other, other_content)
                counts["causal"] += self._edge(db, cause, effect, "causal", round(ratio, 4),
                                               {"overlap": f"{ratio:.4f}",
                                                "sub_type": graph.causal_sub_type(effect_text or "")}, now)
        return counts

    def _refresh_ei(self, db: sqlite3.Connection, item_id: str, importance: int) -> float:
        if "effective_importance" not in self._columns:
            return 0.5
        edges = db.execute("SELECT (SELECT count(*) FROM edges WHERE source_id = ?) + "
                           "(SELECT count(*) FROM edges WHERE target_id = ?)", (item_id, item_id)).fetchone()[0]
        base = {5: 1.0, 4: 0.8, 3: 0.5, 2: 0.3}.get(importance, 0.15)
        value = round(base * (1 + 0.1 * min(edges, 5)), 6)
        db.execute("UPDATE insights SET effective_importance = ? WHERE id = ?", (value, item_id))
        return value

    def link(self, source_id: str, target_id: str, *, edge_type: str = "semantic", weight: float = 0.5,
             metadata: dict[str, str] | None = None) -> dict[str, Any]:
        """Link two active items (both directions; ``supersedes`` one row source -> target, the newer one
        first). ``metadata`` gets ``created_by: mnemon-ls``. Raises :class:`InvalidInput` naming
        ``sourceId``/``targetId`` when an end is missing or forgotten, ``edgeType`` when the store's schema
        predates ``supersedes``. Returns the CLI's link JSON."""
        if edge_type not in EDGE_TYPES:
            raise InvalidInput("edgeType", choice_rule(EDGE_TYPES, edge_type))
        meta = {**(metadata or {}), "created_by": "mnemon-ls"}
        with self._lock:
            def body(db: sqlite3.Connection) -> dict[str, Any]:
                for field_name, key in (("sourceId", source_id), ("targetId", target_id)):
                    if db.execute("SELECT 1 FROM insights WHERE id = ? AND +deleted_at IS NULL",
                                  (key,)).fetchone() is None:
                        raise missing_item(db, field_name,
                                           key, "no active item with this id in the space (missing or forgotten)",
                                           id=key, spaceId=self.space_id)
                if edge_type == "supersedes" and not self._supersedes:
                    raise InvalidInput("edgeType", "this store's schema predates supersedes edges; "
                                                   "open it once with the Mnemon CLI to migrate it")
                now = self._now()
                self._edge(db, source_id, target_id, edge_type, weight, meta, now)
                if edge_type != "supersedes":
                    self._edge(db, target_id, source_id, edge_type, weight, meta, now)
                self._oplog(db, "link", source_id,
                            f"{source_id[:8]}\u2192{target_id[:8]} type={edge_type} weight={weight:.2f}", now)
                self._pending_fp = self._bump(self._sync(db), db, new_rows=0)
                return {"status": "linked", "source_id": source_id, "target_id": target_id,
                        "edge_type": edge_type, "weight": weight, "metadata": meta}
            self._pending_fp = None
            result = self._write(body)
            self._after_write([], self._pending_fp)
            return result

    def forget(self, item_id: str) -> dict[str, Any]:
        """Soft-delete one active item by exact id (``deleted_at`` = ``updated_at`` = now) and delete its
        edges, in one transaction; oplog ``forget``. Raises :class:`InvalidInput` (``id``) when no active
        item has the id, before the side index is opened (a refused forget creates no file). Returns
        ``{"id", "status": "deleted", "message"}``."""
        with self._lock:
            def body(db: sqlite3.Connection) -> dict[str, Any]:
                active = db.execute("SELECT 1 FROM insights WHERE id = ? AND deleted_at IS NULL", (item_id,))
                if active.fetchone() is None:
                    raise missing_item(db, "id", item_id,
                                       "no active item with this id in the space (unknown or already forgotten)",
                                       id=item_id, spaceId=self.space_id)
                fp = self._sync(db)
                now = self._now()
                sets = "deleted_at = ?" + (", updated_at = ?" if "updated_at" in self._columns else "")
                args = [now, now] if "updated_at" in self._columns else [now]
                db.execute(f"UPDATE insights SET {sets} WHERE id = ? AND deleted_at IS NULL", (*args, item_id))
                db.execute("DELETE FROM edges WHERE source_id = ? OR target_id = ?", (item_id, item_id))
                self._oplog(db, "forget", item_id, "", now)
                self._pending_fp = self._bump(fp, db, new_rows=0, deleted=1)
                return {"id": item_id, "status": "deleted", "message": "Insight soft-deleted successfully"}
            self._pending_fp = None
            result = self._write(body)
            row = self._read(lambda db: db.execute(f"SELECT {_ROW_COLUMNS} FROM insights WHERE id = ?",
                                                   (item_id,)).fetchone())
            self._after_write([self._index_row(row)] if row else [], self._pending_fp)
            return result

    def import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = (),
                     batch: int = 500) -> dict[str, Any]:
        """Import items; see :meth:`_import_items`. The ``mnemon.db`` page cache is :data:`BULK_CACHE_KIB`
        while it runs and :data:`CACHE_KIB` again afterwards (pages beyond it are freed). When at least
        :data:`~mnemon_ls.spaces.index.BULK_ROWS` items were imported, the side index is merged into one segment
        afterwards (:meth:`~mnemon_ls.spaces.index.SideIndex.optimize`; best effort: derived data, a failure
        leaves it as fast as before); marked due first (:meth:`~mnemon_ls.spaces.index.SideIndex.merge_pending`),
        so an import killed before the merge leaves it to the next write."""
        with self._lock:
            db = self._conn()
            if len(items) >= BULK_ROWS:
                try:
                    self.index.merge_pending()  # killed before the merge below: the next write merges
                except sqlite3.Error:
                    pass
            db.execute(f"PRAGMA cache_size={-BULK_CACHE_KIB}")
            try:
                result = self._import_items(items, edges, batch)
            finally:
                if self._db is not None:
                    self._db.execute(f"PRAGMA cache_size={-CACHE_KIB}")
            if result["imported"] >= BULK_ROWS:
                try:
                    self.index.optimize()
                except sqlite3.Error:
                    pass  # the index still answers; the next rebuild merges it
            return result

    def _import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = (),
                      batch: int = 500) -> dict[str, Any]:
        """Import items (keeping content, category, importance, tags, entities, source, created_at) in
        batches of ``batch`` per transaction. Exact duplicates of active content (or of an earlier item of
        the same import) are ``skipped`` and name the existing id. Entity and causal edges as remember makes
        them; the temporal backbone is rebuilt per source in time order; ``edges`` (by source ids) are copied
        one row each when both ends landed (``temporal`` edges are not copied: the backbone replaces them).
        Returns the CLI's import shape ``{"imported", "updated": 0, "skipped", "errors", "edges_inserted",
        "results": [{"index", "id", "source_id", "content", "action": "added"|"skipped"|"", "error"?}]}``."""
        results: list[dict[str, Any]] = []
        mapping: dict[str, str] = {}
        totals = {"imported": 0, "updated": 0, "skipped": 0, "errors": 0, "edges_inserted": 0}
        with self._lock:
            for start in range(0, len(items), batch):
                chunk = list(items[start:start + batch])
                added_rows: list[IndexRow] = []

                def body(db: sqlite3.Connection) -> list[dict[str, Any]]:
                    fp = self._sync(db)
                    out: list[dict[str, Any]] = []
                    seen: dict[str, str] = {}
                    pending: dict[str, list[str]] = {}
                    new_ids: list[tuple[str, str, str]] = []
                    for offset, item in enumerate(chunk):
                        index = start + offset
                        now = self._now()
                        try:
                            existing = seen.get(item.content) or self._duplicate_of(db, item.content)
                            if existing is not None:
                                self._oplog(db, "import-skip", existing, f"duplicate of {existing}", now)
                                out.append({"index": index, "id": existing, "source_id": item.id,
                                            "content": item.content, "action": "skipped"})
                                mapping[item.id] = existing
                                continue
                            new_id = str(uuid.uuid4())
                            created = rfc3339(parse_time(item.created_at) or self.clock())
                            rowid = self._insert(db, new_id, item.content, item.category, item.importance,
                                                 list(item.tags), list(item.entities), item.source, created, now)
                            self._auto_edges(db, new_id, item.content, item.source, list(item.entities), now,
                                             temporal=False, pending=pending)
                            for entity in item.entities:
                                pending.setdefault(entity, []).append(new_id)
                            self._oplog(db, "import", new_id, item.content, now)
                            seen[item.content] = new_id
                            mapping[item.id] = new_id
                            new_ids.append((new_id, item.source, created))
                            added_rows.append(IndexRow(new_id, item.content, item.category, item.importance,
                                                       list(item.tags), list(item.entities), item.source,
                                                       epoch_seconds(created) or 0.0, True))
                            fp = {**fp, "rowid": max(fp["rowid"], rowid)}
                            out.append({"index": index, "id": new_id, "source_id": item.id, "content": item.content,
                                        "action": "added"})
                        except sqlite3.IntegrityError as exc:
                            out.append({"index": index, "id": "", "source_id": item.id, "content": item.content,
                                        "action": "", "error": f"insert insight: {exc}"})
                    now = self._now()
                    self._rebuild_backbone(db, new_ids, now)
                    importance_of = {r.id: r.importance or 3 for r in added_rows}
                    for new_id, _src, _created in new_ids:
                        self._refresh_ei(db, new_id, importance_of[new_id])
                    self._pending_fp = self._bump(fp, db, new_rows=len(new_ids))
                    return out

                self._pending_fp = None
                out = self._write(body)
                self._after_write(added_rows, self._pending_fp)
                results.extend(out)
            for row in results:
                key = ("imported" if row["action"] == "added"
                       else "skipped" if row["action"] == "skipped" else "errors")
                totals[key] += 1
            copy = [e for e in edges if e.edge_type != "temporal" and e.source_id in mapping and e.target_id in mapping
                    and mapping[e.source_id] != mapping[e.target_id]]
            if copy:
                def link_all(db: sqlite3.Connection) -> int:
                    now = self._now()
                    made = 0
                    for e in copy:
                        made += self._edge(db, mapping[e.source_id], mapping[e.target_id], e.edge_type,
                                           max(0.0, min(1.0, e.weight)), e.metadata, now)
                    return made
                totals["edges_inserted"] = self._write(link_all)
            if len(items) >= batch:
                self._checkpoint()
        return {**totals, "auto_pruned": 0, "auto_pruned_ids": [], "results": results}

    def _checkpoint(self) -> None:
        """Fold the WAL back into ``mnemon.db`` and truncate it after a bulk write (best effort)."""
        try:
            self._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass

    def _rebuild_backbone(self, db: sqlite3.Connection, new_ids: list[tuple[str, str, str]], now: str) -> None:
        """Place each imported item in its source's chronological backbone (mnemon-cli.md 7.2, import)."""
        if "source" not in self._columns:
            return
        for new_id, source, created in sorted(new_ids, key=lambda t: (t[2], t[0])):
            rowid = db.execute("SELECT rowid FROM insights WHERE id = ?", (new_id,)).fetchone()[0]
            # range scans on (source, created_at); ties on created_at are ordered by rowid, as the CLI does
            prev = next((r[:1] for r in db.execute(
                "SELECT id, created_at, rowid FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                "AND created_at <= ? ORDER BY created_at DESC, rowid DESC LIMIT 64", (source, new_id, created))
                if r[1] < created or r[2] < rowid), None)
            nxt = next((r[:1] for r in db.execute(
                "SELECT id, created_at, rowid FROM insights WHERE source = ? AND deleted_at IS NULL AND id != ? "
                "AND created_at >= ? ORDER BY created_at ASC, rowid ASC LIMIT 64", (source, new_id, created))
                if r[1] > created or r[2] > rowid), None)
            if prev is not None and nxt is not None:
                for a, b in ((prev[0], nxt[0]), (nxt[0], prev[0])):
                    db.execute("DELETE FROM edges WHERE source_id = ? AND target_id = ? AND edge_type = 'temporal' "
                               "AND metadata LIKE '%\"sub_type\":\"backbone\"%'", (a, b))
            if prev is not None:
                self._edge(db, prev[0], new_id, "temporal", 1.0, {"sub_type": "backbone", "direction": "precedes"}, now)
                self._edge(db, new_id, prev[0], "temporal", 1.0, {"sub_type": "backbone", "direction": "succeeds"}, now)
            if nxt is not None:
                self._edge(db, new_id, nxt[0], "temporal", 1.0, {"sub_type": "backbone", "direction": "precedes"}, now)
                self._edge(db, nxt[0], new_id, "temporal", 1.0, {"sub_type": "backbone", "direction": "succeeds"}, now)
