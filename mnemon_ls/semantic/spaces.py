"""Hybrid recall for the native provider (:mod:`mnemon_ls.spaces.providers.native`).

:class:`SpaceSemantic` ties one native space to the process's :class:`~.engine.SemanticEngine`:
``remembered(ids)`` queues new items for embedding (never blocking), ``candidates(...)`` fuses the
provider's keyword candidates with vector candidates (:func:`~.fusion.fuse`) after applying the same
category, source and branch filters (``keep``) to the vector candidates, and ``status()`` is the
``semantic`` block of ``space status``: ``{"state", "model", "dim", "embedded", "total", "coverage",
"otherModels", "lastError"}``. Every failure of the semantic side is logged, recorded as the engine's
last error, and leaves keyword recall as it was.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any, Callable, Sequence

import os

from .backends import SemanticUnavailable
from .engine import INLINE_REMEMBER_CHARS, SemanticEngine, VectorIndexUnusable
from .fusion import Fused, KeywordHit, Spread, fuse

log = logging.getLogger(__name__)


class SpaceSemantic:
    """The semantic side of one native space (module doc)."""

    def __init__(self, engine: SemanticEngine, space_id: str, db_path: Path, index_path: Path) -> None:
        self.engine = engine
        self.space_id = space_id
        self.db_path = Path(db_path)
        self.index_path = Path(index_path)
        self._vectors = None
        #: ``(file signature, reason)`` while the vector file is unusable (retried when the file changes).
        self._broken: tuple[tuple, str] | None = None
        self._notes: list[str] = []

    def _signature(self) -> tuple:
        from .vectors import VECTOR_FILE

        try:
            info = os.lstat(self.db_path.parent / VECTOR_FILE)
        except OSError:
            return ()
        return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)

    def _attached(self, load: bool = True):
        if self._vectors is None and self.index_path.exists():
            if self._broken is not None and self._broken[0] == self._signature():
                return None
            try:
                self._vectors = self.engine.attach(self.space_id, self.db_path, self.index_path, load=load)
            except (VectorIndexUnusable, OSError) as exc:
                reason = getattr(exc, "reason", None) or f"vector index: {exc}"
                if self._broken is None or self._broken[1] != reason:
                    log.warning("space %s: %s; recall is keyword-only", self.space_id, reason)
                self._broken = (self._signature(), reason)
                return None
            self._broken = None
        return self._vectors

    @property
    def unusable(self) -> str | None:
        """Why the vector file cannot be used (``None``: it can, or it was not looked at yet)."""
        return self._broken[1] if self._broken is not None else None

    def _unusable_note(self) -> str:
        return (f"semantic recall of space {self.space_id} is keyword-only: {self.unusable}; it is left as it is "
                "(not created by mnemon-ls as a regular SQLite file); move it away and the next recall rebuilds it")

    def remembered(self, ids: Sequence[str], sweep: bool = False) -> None:
        """Queue ``ids`` for embedding (returns at once); ``sweep`` also schedules a full pass (imports,
        forgets). A write never loads the model in a server: while it is not loaded nothing is queued, and
        the sweep after the load embeds what was missed. In a one-shot process (``engine.inline``) a single
        item of at most :data:`~.engine.INLINE_REMEMBER_CHARS` characters is embedded at once; anything
        else waits for the next recall (or ``space embed``). Never raises."""
        engine = self.engine
        if engine.inline is not None:
            if len(ids) == 1 and not sweep:
                try:
                    self._embed_inline(ids[0])
                except Exception as exc:  # noqa: BLE001 - the write is durable; embedding is best effort
                    engine.last_error = f"space {self.space_id}: {exc}"
                    log.warning("semantic embedding of a remember failed: %s", engine.last_error)
            return
        if not engine.loaded:
            return
        vectors = self._attached(load=False)  # the write path never reads the vectors into memory
        if vectors is None:
            return
        if sweep:
            vectors.sweep = True
        if ids:
            engine.enqueue(vectors, list(ids))
        elif sweep:
            engine.enqueue(vectors, [])

    def _embed_inline(self, item_id: str) -> None:
        from .engine import _read_contents

        rows = _read_contents(self.db_path, [item_id])
        if not rows or len(rows[0][1]) > INLINE_REMEMBER_CHARS:
            return
        vectors = self._attached(load=False)
        if vectors is not None:
            self.engine.embed_now(vectors, [item_id])

    def changed(self) -> None:
        """Another connection changed the space: schedule a sweep."""
        vectors = self._vectors
        if vectors is not None:
            vectors.sweep = True
            self.engine.enqueue(vectors, [])

    def notice(self) -> str | None:
        """The notice of the last recall (module doc; at most one applies at a time), or ``None``."""
        notes = [n for n in (self.engine.keyword_notice(), *self._notes) if n]
        self._notes = []
        return "; ".join(notes) or None

    def candidates(self, query: str, keyword: Sequence[KeywordHit], pool: int, index_db: sqlite3.Connection,
                   keep: Callable[[list[str]], bool] | None, category: str | None,
                   source: str | None) -> tuple[list[Fused] | None, int]:
        """``(fused candidates best first, vector candidates dropped by keep)``, or ``(None, 0)`` when
        semantic recall is off or fails (then the caller ranks by keyword alone)."""
        self._notes = []
        embedder = self.engine.embedder()
        vectors = self._attached() if embedder is not None else None
        if vectors is None and self.unusable is not None:
            self._notes.append(self._unusable_note())
        if vectors is None or embedder is None or not query.strip():
            return None, 0
        try:
            self._cover(vectors)
            qvec = embedder.embed_query(query)
            hits = vectors.store.search(qvec, pool)
            spread = Spread(*vectors.store.spread(qvec))
        except (SemanticUnavailable, sqlite3.Error, ValueError) as exc:
            self.engine.last_error = getattr(exc, "reason", None) or f"space {self.space_id}: {exc}"
            log.warning("semantic recall failed, keyword only: %s", self.engine.last_error)
            return None, 0
        known = {h.id for h in keyword}
        fresh = [key for key, _c in hits if key not in known]
        allowed: set[str] = set()
        dropped = 0
        scale = embedder.scale
        floor = scale.medium_floor(query)
        floors: dict[str, float] = {}
        for start in range(0, len(fresh), 500):
            chunk = fresh[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for key, tags_json, cat, src, terms in index_db.execute(
                    # "+": with dozens of ids SQLite would otherwise scan docs_active (every active row)
                    "SELECT d.id, d.tags, d.category, d.source, f.terms FROM docs d LEFT JOIN fts f ON f.rowid = d.doc "
                    f"WHERE d.id IN ({marks}) AND +d.active = 1", chunk):
                if (category is not None and cat != category) or (source is not None and src != source):
                    continue
                try:
                    tags = json.loads(tags_json) if tags_json else []
                except ValueError:
                    tags = []
                if keep is not None and not keep(tags if isinstance(tags, list) else []):
                    dropped += 1
                    continue
                allowed.add(key)
                # the stricter floor of the two scripts: an English query's cosine to a Korean item sits
                # as high as Korean pairs do (bench/results/semantic.md, "Absolute floor")
                floors[key] = max(floor, scale.medium_floor(terms or ""))
        vector = [(key, cosine) for key, cosine in hits if key in known or key in allowed]
        mode = "cli" if embedder.cli_compatible else "rrf"
        return fuse(keyword, vector, scale, mode, floor, floors, spread), dropped

    def _cover(self, vectors: Any) -> None:
        """One-shot processes first embed missing vectors (bounded); then a note when some are missing."""
        engine = self.engine
        if engine.inline is not None:
            done, left = engine.embed_missing(vectors, engine.inline.seconds, engine.inline.report)
            total = vectors.total
        else:
            total = engine._total(vectors)
            left = max(0, total - vectors.store.count())
        if left:
            how = (f"`mnemon-ls space embed {self.space_id}` embeds the rest now" if engine.inline is not None else
                   f"embedding continues in the background; `mnemon-ls space embed {self.space_id}` finishes it now")
            self._notes.append(f"semantic recall of space {self.space_id} covers {total - left} of {total} items "
                               f"(the other {left} are found by keyword only): {how}")

    def status(self) -> dict[str, Any]:
        """The ``semantic`` block of ``space status`` (module doc)."""
        engine = self.engine
        out: dict[str, Any] = {"state": engine.state, "model": engine.config.model, "dim": None, "embedded": 0,
                               "total": None, "coverage": None, "otherModels": [], "lastError": engine.last_error}
        vectors = self._attached() if engine.enabled else None
        out["state"] = engine.state
        out["lastError"] = engine.last_error
        out["unusable"] = self.unusable
        if vectors is not None:
            try:
                out.update(engine.coverage(vectors))
            except sqlite3.Error as exc:
                out["lastError"] = f"vector index: {exc}"
        return out

    def close(self) -> None:
        """Detach from the engine."""
        if self._vectors is not None:
            self.engine.detach(self.db_path)
            self._vectors = None


def embed_space(service: Any, space_id: str, timeout: float = 3600.0) -> dict[str, Any]:
    """Embed every item of native space ``space_id`` of ``service`` (a
    :class:`~mnemon_ls.spaces.SpacesService`) now, waiting up to ``timeout`` seconds; returns the
    ``semantic`` status block (``state``, ``model``, ``embedded``, ``total``, ``coverage``, ...). Raises
    :class:`~mnemon_ls.errors.InvalidInput` (field ``id``) for an unknown or non-native space, or when
    semantic recall is off or unavailable (the reason named)."""
    from ..errors import InvalidInput

    record = next((r for r in service.state().all if r.id == space_id), None)
    if record is None or not record.native:
        raise InvalidInput("id", "must name a native Memory Space")
    provider = service.provider(record)
    side = getattr(provider, "semantic", None)
    if side is None:
        raise InvalidInput("id", "semantic recall is off (semantic.enabled false or MNEMON_SEMANTIC=off)")
    provider.sync()
    engine = side.engine
    if engine.embedder() is None:
        raise InvalidInput("id", f"semantic recall is unavailable: {engine.last_error}")
    vectors = side._attached()
    if vectors is None and side.unusable is not None:
        raise InvalidInput("id", side._unusable_note())
    if engine.inline is not None and vectors is not None:
        engine.embed_missing(vectors, timeout, engine.inline.report)
    else:
        side.remembered([], sweep=True)
        engine.wait_idle(timeout)
    return side.status()
