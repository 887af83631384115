"""The SpaceProvider of one PostgreSQL space (protocol: :mod:`mnemon_ls.spaces.providers.base`).

Writes are one transaction each: ``remember`` inserts the item (``ON CONFLICT`` on the active items' content
hash, so two machines writing the same text at once make one item and the other gets ``skipped``),
``forget`` sets ``deleted_at`` (soft delete, as native). Recall is :mod:`.recall`.
"""

from __future__ import annotations

import uuid
from typing import Any, Sequence

from mnemon_ls.errors import InvalidInput, SpaceRefused
from mnemon_ls.spaces.model import Item, branch_tags
from mnemon_ls.spaces.providers.base import KeepFn, NoGraphNoMerge, SearchOutcome

from .rows import ITEM_COLUMNS, _time, content_hash, item_terms, row_item


class PostgresSpace(NoGraphNoMerge):
    """One space of a :class:`~.engine.PostgresEngine` (its row ``spaceKey`` in the ``spaces`` table)."""

    provider_id = "postgres"
    engine_label = "PostgreSQL"  # in the refusals of NoGraphNoMerge

    def __init__(self, engine: Any, key: str, space_id: str) -> None:
        from . import PLUGIN

        self.capabilities = PLUGIN.capabilities
        self.engine = engine
        self.key = key
        self.space_id = space_id
        self.table = f'"{engine.schema}".items'

    def _call(self, fn: Any) -> Any:
        return self.engine.call(fn, space_id=self.space_id)

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]:
        """Insert one item (``{"action": "added"}``) or find the active item with the same text in this space
        (``{"action": "skipped", "id"}``); :class:`SpaceRefused` when this role may not write the space."""
        text = content.strip()
        digest = content_hash(text)
        key = str(uuid.uuid4())
        vector = self._vector(text)

        def write(conn: Any) -> dict[str, Any]:
            with conn.transaction():
                visible = conn.execute(f'SELECT 1 FROM "{self.engine.schema}".spaces WHERE id = %s',
                                       (self.key,)).fetchone()
                if visible is None:
                    raise SpaceRefused("provider postgres: this space does not exist or this role may not use it "
                                       "(a user space is read and written by its own role only)",
                                       spaceId=self.space_id, reason="access")
                row = conn.execute(
                    f"INSERT INTO {self.table} (id, space_id, content, content_hash, category, importance, tags, "
                    "entities, source, branches, author, terms" + (", embedding" if vector else "") + ") VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s" + (", %s::vector" if vector else "") + ") "
                    "ON CONFLICT (space_id, content_hash) WHERE deleted_at IS NULL DO NOTHING RETURNING created_at",
                    (key, self.key, text, digest, category, importance, list(tags), list(entities), source,
                     branch_tags(tags), self.engine.author, item_terms(text, tags, entities),
                     *([vector] if vector else []))).fetchone()
                if row is not None:
                    return {"id": key, "action": "added", "content": text, "category": category,
                            "importance": importance, "tags": list(tags), "entities": list(entities),
                            "created_at": _time(row[0]), "edges_created": {}}
                same = conn.execute(f"SELECT id FROM {self.table} WHERE space_id = %s AND content_hash = %s AND "
                                    "deleted_at IS NULL", (self.key, digest)).fetchone()
                return {"id": str(same[0]) if same else None, "action": "skipped", "content": text}

        return self._call(write)

    def _vector(self, text: str) -> str | None:
        """The passage vector of ``text`` (pgvector text form) when semantic recall is on, else ``None`` (also
        when the model does not load: the item is written without one, and a later recall fills it)."""
        if not self.engine.semantic:
            return None
        from mnemon_ls.semantic.backends import SemanticUnavailable

        from . import vectors

        try:
            return vectors.passage_literals([text])[0]
        except SemanticUnavailable as exc:
            self.engine.semantic_note = f"semantic recall is off: {exc}"
            return None

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """Ranked items (:func:`.recall.search`)."""
        from .recall import search

        return search(self, query, limit=limit, mode=mode, category=category, source=source, keep=keep)

    def forget(self, item_id: str) -> dict[str, Any]:
        """Soft delete (``deleted_at`` = ``updated_at`` = now) of one active item of this space;
        :class:`InvalidInput` (``id``) when there is none."""
        def write(conn: Any) -> Any:
            with conn.transaction():
                return conn.execute(f"UPDATE {self.table} SET deleted_at = now(), updated_at = now() WHERE id = %s "
                                    "AND space_id = %s AND deleted_at IS NULL RETURNING id",
                                    (item_id, self.key)).fetchone()

        if self._call(write) is None:
            raise InvalidInput("id", "is not an active item of this space", id=item_id, spaceId=self.space_id)
        return {"id": item_id, "status": "deleted", "message": "soft-deleted in PostgreSQL"}

    def get(self, item_id: str) -> Item | None:
        """The active item ``item_id`` of this space, or ``None``."""
        row = self._call(lambda conn: conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM {self.table} WHERE id = %s AND space_id = %s AND deleted_at IS NULL",
            (item_id, self.key)).fetchone())
        return None if row is None else self._item(row)

    @staticmethod
    def _item(row: Sequence[Any], score: float | None = None, via: str | None = None) -> Item:

        return row_item(row, score, via)

    def status(self) -> dict[str, Any]:
        """The CLI-like status object of this space (active and deleted counts, by category, top entities)."""
        def read(conn: Any) -> dict[str, Any]:
            active, deleted = conn.execute(
                f"SELECT count(*) FILTER (WHERE deleted_at IS NULL), count(*) FILTER (WHERE deleted_at IS NOT NULL) "
                f"FROM {self.table} WHERE space_id = %s", (self.key,)).fetchone()
            categories = dict(conn.execute(f"SELECT category, count(*) FROM {self.table} WHERE space_id = %s AND "
                                           "deleted_at IS NULL GROUP BY category ORDER BY category",
                                           (self.key,)).fetchall())
            entities = conn.execute(f"SELECT e, count(*) FROM {self.table}, unnest(entities) e WHERE space_id = %s "
                                    "AND deleted_at IS NULL GROUP BY e ORDER BY count(*) DESC, e LIMIT 10",
                                    (self.key,)).fetchall()
            return {"total_insights": active, "deleted_insights": deleted, "by_category": categories,
                    "edge_count": 0, "top_entities": [{"entity": e, "count": n} for e, n in entities],
                    "oplog_count": 0, "db_path": self.engine.location, "db_size_bytes": 0,
                    "schema": self.engine.schema}

        return self._call(read)

    def count(self) -> int:
        """Active items of this space (that this role can read)."""
        return int(self._call(lambda conn: conn.execute(
            f"SELECT count(*) FROM {self.table} WHERE space_id = %s AND deleted_at IS NULL",
            (self.key,)).fetchone()[0]))

    def close(self) -> None:
        """Nothing to release (the engine owns the connection)."""
