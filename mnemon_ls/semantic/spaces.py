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
from typing import Any, Callable, Mapping, Sequence

import os

from .. import nowait
from .backends import SemanticUnavailable
from .engine import INLINE_REMEMBER_CHARS, SemanticEngine, VectorIndexUnusable
from .fusion import Fused, KeywordHit, Spread, fuse

log = logging.getLogger(__name__)


def _branch_tags(branches: str) -> list[str]:
    """The ``branches`` column of a side-index row (a JSON list of ``branch:`` tags) as a list (``[]`` when it is
    not one)."""
    try:
        tags = json.loads(branches)
    except ValueError:
        return []
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def item_floors(vector: Sequence[tuple[str, float]], terms: Mapping[str, str], floor: float,
                scale: Any) -> dict[str, float]:
    """``{id: absolute cosine floor}`` of the vector candidates found by meaning alone: ``vector`` the
    ``(id, cosine)`` candidates, ``terms`` the indexed terms of those found by meaning alone (others are not
    given a floor), ``floor`` the query's (``scale.medium_floor(query)``), ``scale`` the model's
    :class:`~.backends.ScoreScale`. A candidate over the model's floor (``scale.floor``: one fusion uses,
    however far below the query's best cosine: :mod:`.fusion` keeps no window) gets the stricter floor of the
    query's script and its own (an English query's cosine to a Korean item sits as high as Korean pairs do,
    bench/results/semantic.md "Absolute floor"); one at or under it ``floor`` (fusion leaves it out)."""
    out: dict[str, float] = {}
    for key, cosine in vector:
        held = terms.get(key)
        if held is not None:
            out[key] = max(floor, scale.medium_floor(held)) if cosine > scale.floor else floor
    return out


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
        #: ``(side-index connection, its data_version, its total_changes)`` when the active count was taken.
        self._total_key: tuple | None = None

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
                    # A one-shot command (the CLI: engine.inline) shows the reason in its result (the recall
                    # note, space status, the doctor finding, the space embed error): a warning on stderr too
                    # would say it twice. A server logs it (its results carry the note as well).
                    log.log(logging.DEBUG if self.engine.inline is not None else logging.WARNING,
                            "space %s: %s; recall is keyword-only", self.space_id, reason)
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

    def changed(self, ids: Sequence[str] | None = None) -> None:
        """Another connection changed the space: queue ``ids`` (added or changed there; each is embedded
        again only when its content changed, and its vector dropped when it is no longer active), or
        schedule a sweep of the whole space when ``ids`` is ``None`` (which ones changed is not known).
        Never blocks."""
        vectors = self._vectors
        if vectors is None or (ids is not None and not ids):
            return
        if ids is None:
            vectors.sweep = True
            self.engine.enqueue(vectors, [])
        else:
            self.engine.enqueue(vectors, list(ids), refresh_only=True)

    def prefetch(self, query: str) -> None:
        """Start embedding ``query`` in the background (the local model only; nothing while the model is not
        loaded, the space not attached yet or the query blank), so that :meth:`candidates` finds it done
        or under way: the embedding runs on the other core while the caller does the keyword part. Never
        raises."""
        embedder = self.engine._embedder
        start = getattr(embedder, "prefetch_query", None)
        if start is None or self._vectors is None or not query.strip():
            return
        try:
            start(query)
        except RuntimeError:  # the interpreter is shutting down: candidates embeds it itself
            pass

    def notice(self) -> str | None:
        """The notice of the last recall (module doc; at most one applies at a time), or ``None``."""
        notes = [n for n in (self.engine.keyword_notice(), *self._notes) if n]
        self._notes = []
        return "; ".join(notes) or None

    def candidates(self, query: str, keyword: Sequence[KeywordHit], pool: int, index_db: sqlite3.Connection,
                   keep: Callable[[list[str]], bool] | None, category: str | None,
                   source: str | None, rows: dict[str, tuple] | None = None) -> tuple[list[Fused] | None, set[str]]:
        """``(fused candidates best first, ids of the vector candidates dropped by keep)``, or ``(None, set())``
        when semantic recall is off or fails (then the caller ranks by keyword alone). Ids, not a count, so the
        caller counts an item found by keyword and by vector once. ``pool``: how many vector candidates to read
        (the native provider asks for :func:`~mnemon_ls.spaces.providers.hybrid.vector_pool` of its limit).
        ``keep(tags)`` is given the item's ``branch:`` tags alone (the side index's ``branches`` column; the
        branch rule looks at nothing else) and is not called for an item without one. ``rows``, when given, is
        filled with ``{id: (importance, created, branches JSON or None)}`` of the vector candidates kept (their
        side-index row, read here anyway)."""
        self._notes = []
        embedder = self.engine.embedder()
        vectors = self._attached() if embedder is not None else None
        if vectors is None and self.unusable is not None:
            self._notes.append(self._unusable_note())
        if vectors is None or embedder is None or not query.strip():
            return None, set()
        nowait.check(f"semantic recall of space {self.space_id}")  # embedding the query: not on an event loop
        try:
            self._cover(vectors, index_db)
            vectors.store.prepare()  # while the query thread embeds the query (prefetch)
            qvec = embedder.embed_query(query)
            hits = vectors.store.search(qvec, pool)
            spread = Spread(*vectors.store.spread(qvec), items=vectors.store.count())
        except (SemanticUnavailable, sqlite3.Error, ValueError) as exc:
            self.engine.last_error = getattr(exc, "reason", None) or f"space {self.space_id}: {exc}"
            log.warning("semantic recall failed, keyword only: %s", self.engine.last_error)
            return None, set()
        known = {h.id for h in keyword}
        fresh = [key for key, _c in hits if key not in known]
        allowed: dict[str, str] = {}  # id -> indexed terms of the vector candidates the filters keep
        dropped: set[str] = set()
        scale = embedder.scale
        floor = scale.medium_floor(query)
        for start in range(0, len(fresh), 500):
            chunk = fresh[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for key, branches, cat, src, terms, importance, created in index_db.execute(
                    # "+": with dozens of ids SQLite would otherwise scan docs_active (every active row)
                    f"SELECT id, branches, category, source, terms, importance, created FROM docs "
                    f"WHERE id IN ({marks}) AND +active = 1", chunk):
                if (category is not None and cat != category) or (source is not None and src != source):
                    continue
                if keep is not None and branches:  # NULL for an item without a branch tag (most)
                    tags = _branch_tags(branches)
                    if tags and not keep(tags):
                        dropped.add(key)
                        continue
                allowed[key] = terms or ""
                if rows is not None:
                    rows[key] = (importance, created, branches)
        # the stricter floor of the two scripts: an English query's cosine to a Korean item sits as high as
        # Korean pairs do (bench/results/semantic.md, "Absolute floor"); the item's script from the terms its
        # side-index row holds (read above). Only for the candidates fusion can use: a vector-only one at or under
        # the model's floor (scale.floor) is left out of the fused list whatever its floor
        vector = [(key, cosine) for key, cosine in hits if key in known or key in allowed]
        floors = item_floors(vector, allowed, floor, scale)
        mode = "cli" if embedder.cli_compatible else "calibrated"
        seen = {key for key, _c in vector}
        try:  # the keyword hits the vector search did not reach: their cosines, for the weak-keyword cap
            extra = vectors.store.cosines(qvec, [h.id for h in keyword if h.id not in seen])
        except (sqlite3.Error, ValueError):
            extra = {}
        return fuse(keyword, vector, scale, mode, floor, floors, spread, extra), dropped

    def _active_total(self, vectors: Any, index_db: sqlite3.Connection) -> int:
        """Active items of the side index (``index_db``, the provider's connection to it), counted again only
        when the index changed since the last count: another connection committed (``PRAGMA data_version``)
        or this one wrote (``total_changes``). A count reads every active row (~5 ms at 100,000)."""
        key = (index_db, index_db.execute("PRAGMA data_version").fetchone()[0], index_db.total_changes)
        held = self._total_key
        if held is None or held[0] is not key[0] or held[1:] != key[1:]:
            vectors.total = index_db.execute("SELECT count(*) FROM docs WHERE active = 1").fetchone()[0]
            self._total_key = key
        return vectors.total

    def _cover(self, vectors: Any, index_db: sqlite3.Connection) -> None:
        """One-shot processes first embed missing vectors (bounded); then a note when some are missing."""
        engine = self.engine
        if engine.inline is not None:
            done, left = engine.embed_missing(vectors, engine.inline.seconds, engine.inline.report)
            total = vectors.total
        else:
            total = self._active_total(vectors, index_db)
            left = max(0, total - vectors.store.count())
        if left:
            how = (f"`mnemon-ls space embed {self.space_id}` embeds the rest now" if engine.inline is not None else
                   f"embedding continues in the background; `mnemon-ls space embed {self.space_id}` finishes it now")
            self._notes.append(f"semantic recall of space {self.space_id} covers {total - left} of {total} items "
                               f"({'the other one is' if left == 1 else f'the other {left} are'} found by keyword "
                               f"only): {how}")

    def status(self) -> dict[str, Any]:
        """The ``semantic`` block of ``space status`` (module doc)."""
        engine = self.engine
        out: dict[str, Any] = {"state": engine.state, "model": engine.config.model, "dim": None, "embedded": 0,
                               "total": None, "coverage": None, "otherModels": [], "lastError": engine.last_error}
        vectors = self._attached() if engine.enabled else None
        out["state"] = engine.state
        out["lastError"] = engine.last_error
        out["unusable"] = self.unusable
        if out["state"] == "off":  # the engine exists, so semantic.enabled is auto and nothing provides vectors
            out["reason"] = "the mnemon-ls[semantic] extra is not installed and no semantic.endpoint is set"
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
    :class:`~mnemon_ls.errors.InvalidInput` (field ``spaceId``) for an unknown space (``space_id`` is an id or
    a name), (field ``id``) for a non-native one, or when
    semantic recall is off or unavailable (the reason named)."""
    from ..errors import InvalidInput

    record = service.get_space(space_id).record  # an id or a unique name (mnemon_ls.spaces.naming)
    if not record.native:
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
