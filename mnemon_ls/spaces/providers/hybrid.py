"""Hybrid recall glue of the native provider: keyword candidates of :meth:`NativeProvider._ranked` fused with
vector candidates (:mod:`mnemon_ls.semantic`). Kept apart so that ``native.py`` needs no numpy and stays
keyword-only when the ``semantic`` extra is missing.

A keyword candidate here is the provider's tuple ``(score, importance, created, id, branch tags, exact)`` (the
item's ``branch:<name>`` tags alone: the side index's ``branches`` column); the
fused list has the same shape plus ``via`` (``keyword`` | ``vector`` | ``keyword+vector``) as a 7th element
and the similarity evidence as an 8th: ``{"cosine", "z"}`` (rounded to 4 places; ``z`` may be ``None``) or
``None`` for an item the vectors did not find.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from ...semantic.engine import SemanticEngine
    from ...semantic.spaces import SpaceSemantic
else:
    SemanticEngine = Any

#: Vector candidates of a hybrid recall (:func:`vector_pool`): at least this many ...
VECTOR_POOL_MIN = 64
#: ... and this many per result the provider was asked for (the fused list is cut to that limit).
VECTOR_POOL_FACTOR = 2


def vector_pool(limit: int) -> int:
    """How many vector candidates a hybrid recall asking the provider for ``limit`` items reads:
    ``max(VECTOR_POOL_MIN, VECTOR_POOL_FACTOR * limit)`` (64 for the default policy's 30 candidates). The
    fused list is cut to ``limit``, and a vector-only candidate's score depends on its cosine, not its rank, so
    candidates past twice the limit could only enter it when most of those above them are dropped by the
    filters; each one costs an exact cosine from the vector file and a filter lookup (measured in
    bench/results/semantic.md: 180 candidates, the keyword pool, cost ~4 ms CPU per recall at 100,000 items)."""
    return max(VECTOR_POOL_MIN, VECTOR_POOL_FACTOR * limit)


def semantic_side(engine: "SemanticEngine", space_id: str, db_path: Path, index_path: Path) -> "SpaceSemantic":
    """The :class:`~mnemon_ls.semantic.spaces.SpaceSemantic` of one space."""
    from ...semantic.spaces import SpaceSemantic

    return SpaceSemantic(engine, space_id, db_path, index_path)


def hybrid_rank(semantic: "SpaceSemantic", index: Any, query: str, scored: Sequence[tuple], pool: int,
                keep: Callable[[list[str]], bool] | None, category: str | None,
                source: str | None, read: dict[str, tuple] | None = None) -> tuple[list[tuple], set[str]] | None:
    """``(fused candidates best first, ids of the vector candidates dropped by keep)`` or ``None`` (keyword
    ranking stands). ``read``, when given, gets the side-index values ``(importance, created, branches)`` of the
    vector candidates, by id (the raw importance: ``None`` stays ``None`` there)."""
    from ...semantic.fusion import KeywordHit

    keyword = [KeywordHit(s[3], s[0], bool(s[5])) for s in scored]
    if read is None:
        read = {}  # the side-index rows of the vector candidates, read by candidates()
    fused, dropped = semantic.candidates(query, keyword, pool, index.connect(), keep, category, source, rows=read)
    if fused is None:
        return None
    by_id = {s[3]: s for s in scored}
    missing = [f.id for f in fused if f.id not in by_id and f.id not in read]
    db = index.connect()
    for start in range(0, len(missing), 500):
        chunk = missing[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for key, importance, created, branches in db.execute(
                f"SELECT id, importance, created, branches FROM docs WHERE id IN ({marks})", chunk):
            read[key] = (importance, created, branches)
    meta: dict[str, tuple] = {}
    for f in fused:
        if f.id not in by_id and f.id in read:
            importance, created, branches = read[f.id]
            try:
                tag_list = json.loads(branches) if branches else []
            except ValueError:
                tag_list = []
            meta[f.id] = (importance if isinstance(importance, int) else 3, created or 0.0, tag_list)
    out: list[tuple] = []
    for f in fused:
        base = by_id.get(f.id)
        similarity = None if f.cosine is None else {
            "cosine": round(f.cosine, 4), "z": None if f.z is None else round(f.z, 2)}
        if base is not None:
            out.append((f.score, base[1], base[2], f.id, base[4], base[5], f.via, similarity))
        elif f.id in meta:
            imp, created, tags = meta[f.id]
            out.append((f.score, imp, created, f.id, tags, False, f.via, similarity))
    out.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
    return out, dropped
