"""Semantic Documents search: document chunks (:mod:`.chunks`) embedded into ``documents/.semantic-chunks.sqlite3``
and fused with the lexical ranking, ranked by document.

Schema::

    chunks(model TEXT, dim INTEGER, doc TEXT, body_hash TEXT, n INTEGER, heading TEXT, text TEXT, vec BLOB,
           PRIMARY KEY(model, dim, doc, n))

Vectors are little-endian float32 keyed by model and dimension like the space vectors
(:mod:`.vectors`); a document whose ``bodyHash`` changed is re-chunked. Embedding happens during a search,
at most :data:`EMBED_BUDGET` chunks per call (the rest on later calls; the result's notice says how many
documents are not embedded yet). Derived data: deleting the file costs re-embedding.

Ranking (:func:`fuse_documents`): documents whose title or description holds the whole query as a phrase
stay first (the lexical tiers, never buried), then reciprocal rank fusion (k = 60) of the lexical order and
the order by each document's best chunk cosine. A document found only by vectors is judged by the relevance
rule of recall (:func:`~.fusion.vector_only_score`: the absolute floor of the query's and the chunk's
script, and the chunk's ``z`` against the query's cosines over every chunk of the searched documents): a
*medium* one has ``matched`` ``semantic``; one that is only *low* but clears the absolute floor has
``matched`` ``semantic-low`` and comes after every other result; anything else is left out. Its ``score``
is that relevance (0.3..0.55 medium, under 0.25 low: the scale of recall's vector-only items), and a
``semantic-low`` one scores below every document matched by words in the same search, so it never outranks
one by its number either (before, its score was the best chunk's cosine: 0.81 for a document about nothing
the query asked, above the 0.29 of a real word match); ``similarity`` ``{"cosine", "z"}`` keeps the best
chunk's cosine, and the excerpt is that chunk's. An ``assistant`` is not sent ``semantic-low`` documents
(:meth:`~mnemon_ls.documents.search.Search.find`). A ``semantic-low`` document does not count as accessed
(:meth:`~mnemon_ls.documents.search.Search.find` touches ``lastAccessedAt`` of the others only), so a
search about nothing stored cannot make every document look recently used to the archival order.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import fsio
from .chunks import split_chunks
from .engine import VectorIndexUnusable, move_damaged_aside
from .fusion import RRF_K, Spread, vector_only_score

log = logging.getLogger(__name__)

FILE_NAME = ".semantic-chunks.sqlite3"
EMBED_BUDGET = 256
EXCERPT_CHARS = 220
#: The score (:func:`~.fusion.vector_only_score`) of a *medium* vector-only document: the default low
#: threshold of the recall-quality policies.
MEDIUM_SCORE = 0.25


class DocumentVectors:
    """The chunk vector file of one Documents store, for one embedder. Thread-safe."""

    def __init__(self, path: Path, embedder: Any) -> None:
        import numpy

        self._np = numpy
        self.path = Path(path)
        self.embedder = embedder
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._cache: tuple[Any, list[tuple[str, str]], dict[str, str]] | None = None

    def _conn(self) -> sqlite3.Connection:
        """The open file; raises :class:`~.engine.VectorIndexUnusable` when the path is not ours to open or
        replace (:func:`~.engine.unusable_reason`: a directory, a link, a FIFO, not SQLite...): never
        followed, opened or deleted."""
        if self._db is None:
            from .engine import VectorIndexUnusable, unusable_reason

            reason = unusable_reason(self.path)
            if reason is not None:
                raise VectorIndexUnusable(self.path, reason)
            # 0600 before SQLite creates it (it holds document text): SQLite gives -wal/-shm the same mode
            fsio.private_database(self.path)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS chunks(model TEXT NOT NULL, dim INTEGER NOT NULL, doc TEXT NOT NULL,"
                       " body_hash TEXT NOT NULL, n INTEGER NOT NULL, heading TEXT, text TEXT, vec BLOB NOT NULL,"
                       " PRIMARY KEY(model, dim, doc, n))")
            self._db = db
        return self._db

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _hashes(self, db: sqlite3.Connection) -> dict[str, str]:
        e = self.embedder
        return dict(db.execute("SELECT doc, body_hash FROM chunks WHERE model = ? AND dim = ? AND n = 0",
                               (e.model_id, e.dim)))

    def ensure(self, docs: Sequence[tuple[str, str, str]], load_body: Callable[[str], str | None]) -> int:
        """Embed the chunks of ``docs`` (``(id, title, body_hash)``) not yet embedded for their body hash,
        at most :data:`EMBED_BUDGET` chunks; returns how many of ``docs`` are still not embedded."""
        np = self._np
        e = self.embedder
        with self._lock:
            db = self._conn()
            known = self._hashes(db)
            todo = [d for d in docs if known.get(d[0]) != d[2]]
            spent = 0
            done = 0
            for doc_id, title, body_hash in todo:
                if spent >= EMBED_BUDGET:
                    break
                body = load_body(doc_id)
                if body is None:
                    continue
                chunks = split_chunks(title, body)
                vectors = e.embed_passages([c.embed for c in chunks])
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute("DELETE FROM chunks WHERE model = ? AND dim = ? AND doc = ?",
                               (e.model_id, e.dim, doc_id))
                    db.executemany("INSERT INTO chunks(model, dim, doc, body_hash, n, heading, text, vec) "
                                   "VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                                   [(e.model_id, e.dim, doc_id, body_hash, n, c.heading, c.text,
                                     np.asarray(vectors[n], dtype="<f4").tobytes()) for n, c in enumerate(chunks)])
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                spent += len(chunks)
                done += 1
                self._cache = None
            return len(todo) - done

    def search(self, query_vec: Any, allowed: set[str]) -> tuple[list[tuple[str, float, str]], Spread]:
        """``([(doc id, best chunk cosine, that chunk's text)] of the allowed documents best first, the
        query's cosine spread over every chunk of the allowed documents)``."""
        np = self._np
        e = self.embedder
        with self._lock:
            if self._cache is None:
                rows = self._conn().execute("SELECT doc, text, vec FROM chunks WHERE model = ? AND dim = ?",
                                            (e.model_id, e.dim)).fetchall()
                matrix = (np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), e.dim)
                          if rows else np.zeros((0, e.dim), dtype=np.float32))
                self._cache = (matrix, [(r[0], r[1] or "") for r in rows], {})
            matrix, keys, _ = self._cache
        if not keys:
            return [], Spread(0, 0.0, 0.0)
        scores = matrix @ np.asarray(query_vec, dtype=np.float32)
        mask = np.fromiter((doc in allowed for doc, _t in keys), dtype=bool, count=len(keys))
        chosen = scores[mask]
        spread = Spread(int(len(chosen)), float(chosen.mean()),
                        float(chosen.std())) if len(chosen) else Spread(0, 0.0, 0.0)
        best: dict[str, tuple[float, str]] = {}
        for index in np.argsort(-scores):
            doc, text = keys[index]
            if doc in allowed and doc not in best:
                best[doc] = (float(scores[index]), text)
        return [(doc, value[0], value[1]) for doc, value in best.items()], spread


def fuse_documents(lexical: Sequence[tuple[Any, float, str]], vector: Sequence[tuple[str, float, str]],
                   records: dict[str, Any], scale: Any, query: str,
                   spread: Spread | None = None
                   ) -> tuple[list[tuple[Any, float, str]], dict[str, str], dict[str, dict[str, Any]]]:
    """``(ranked (record, score, matched) best first, {doc id: excerpt} and {doc id: {"cosine", "z"}} for
    vector-only documents)`` (module doc: their score is their relevance, a ``semantic-low`` one's below
    every lexical score). ``lexical`` is the lexical ranking ``(record, score, matched)`` best first, as
    :meth:`~mnemon_ls.documents.search.Search.find` ranks it; ``vector`` and ``spread`` the output of
    :meth:`DocumentVectors.search`; ``scale`` the embedder's :class:`~.backends.ScoreScale` (candidates at or below its
    ``floor`` are ignored); ``query`` the query text (its script picks the absolute floor)."""
    floor = scale.floor
    query_floor = scale.medium_floor(query)
    pinned = [row for row in lexical if row[2] in ("title", "description")]
    pinned_ids = {row[0].id for row in pinned}
    rrf: dict[str, float] = {}
    rows: dict[str, tuple[Any, float, str]] = {}
    for rank, row in enumerate((r for r in lexical if r[0].id not in pinned_ids), start=1):
        rrf[row[0].id] = 1.0 / (RRF_K + rank)
        rows[row[0].id] = row
    excerpts: dict[str, str] = {}
    similarity: dict[str, dict[str, Any]] = {}
    # a semantic-low document scores below every word match of this search (module doc)
    below = min((row[1] for row in lexical), default=None)
    rank = 0
    for doc_id, cosine, text in vector:
        if doc_id in pinned_ids or cosine <= floor or doc_id not in records:
            continue
        rank += 1
        rrf[doc_id] = rrf.get(doc_id, 0.0) + 1.0 / (RRF_K + rank)
        if doc_id not in rows:
            need = max(query_floor, scale.medium_floor(text))  # the stricter of the two scripts
            relevance, z = vector_only_score(cosine, need, spread, scale)
            if relevance >= MEDIUM_SCORE:
                matched = "semantic"
            elif cosine >= need and relevance > 0:
                matched = "semantic-low"
                if below is not None:
                    relevance = max(0.0, min(relevance, below - 0.0001))
            else:
                continue
            rows[doc_id] = (records[doc_id], round(relevance, 4), matched)
            similarity[doc_id] = {"cosine": round(cosine, 4), "z": None if z is None else round(z, 2)}
            excerpts[doc_id] = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rstrip() + "…"
    fused = sorted(rows, key=lambda d: (rows[d][2] == "semantic-low", -rrf[d], d))
    return pinned + [rows[d] for d in fused], excerpts, similarity


def unusable_notice(reason: str) -> str:
    """The notice (and ``doctor`` finding) for an unusable chunk vector file; ``reason`` names the file."""
    return (f"semantic document search is lexical only: {reason}; it is left as it is (not created by mnemon-ls "
            "as a regular SQLite file); move it away and the next search rebuilds it")


def semantic_rank(store: Any, view: Any, eligible: Sequence[Any], query: str,
                  lexical: list[tuple[Any, float, str]]
                  ) -> tuple[list[tuple[Any, float, str]], dict[str, str], dict[str, dict[str, Any]], str | None]:
    """The hybrid ranking of one Documents search (``store`` a :class:`~mnemon_ls.documents.DocumentStore`
    with ``store.search.semantic`` set): ``(ranked, excerpts, similarities, notice or None)`` (:func:`fuse_documents`).
    Any failure of the semantic side leaves ``lexical`` as it was, with a notice naming the error."""
    engine = store.search.semantic
    embedder = engine.embedder()
    if embedder is None:
        return lexical, {}, {}, engine.keyword_notice()
    rebuilt = None
    for attempt in (1, 2):
        try:
            left, found, spread = _search_chunks(store, view, eligible, query, embedder)
            break
        except VectorIndexUnusable as exc:  # not the engine's error: the model is fine
            return lexical, {}, {}, unusable_notice(exc.reason)
        except sqlite3.OperationalError as exc:  # cannot open / locked / read-only: not damage
            return lexical, {}, {}, f"semantic document search skipped: {store.documents_dir / FILE_NAME}: {exc}"
        except sqlite3.DatabaseError as exc:  # a damaged file of ours (derived data): moved aside, rebuilt once
            path = store.documents_dir / FILE_NAME
            if store.search.chunk_vectors is not None:
                store.search.chunk_vectors.close()
                store.search.chunk_vectors = None
            if attempt == 2 or not path.is_file() or path.is_symlink():
                return lexical, {}, {}, f"semantic document search skipped: {path} is damaged ({exc})"
            aside = move_damaged_aside(path)
            rebuilt = f"semantic document index {path} was damaged ({exc}): moved to {aside.name}, rebuilt"
            log.warning("%s", rebuilt)
        except (OSError, ValueError) as exc:
            return lexical, {}, {}, f"semantic document search skipped: {exc}"
        except Exception as exc:  # noqa: BLE001 - SemanticUnavailable and model errors: lexical stands
            engine.last_error = getattr(exc, "reason", str(exc))
            return lexical, {}, {}, f"semantic document search skipped: {engine.last_error}"
    if left is None:  # no documents directory yet
        return lexical, {}, {}, None
    ranked, excerpts, similarity = fuse_documents(lexical, found, {r.id: r for r in eligible}, embedder.scale, query,
                                                  spread)
    notice = f"semantic search: {left} document(s) not embedded yet (embedded on later searches)" if left else None
    if rebuilt:
        notice = rebuilt if notice is None else f"{rebuilt}; {notice}"
    return ranked, excerpts, similarity, notice


def _search_chunks(store: Any, view: Any, eligible: Sequence[Any], query: str,
                   embedder: Any) -> tuple[int | None, Any, Any]:
    """``(documents left to embed, chunk hits, spread)`` of one search (``(None, None, None)`` when the
    documents directory does not exist); raises what SQLite, the file checks and the model raise."""
    vectors = store.search.chunk_vectors
    if vectors is None or vectors.embedder is not embedder:
        if not store.documents_dir.is_dir():
            return None, None, None
        vectors = store.search.chunk_vectors = DocumentVectors(store.documents_dir / FILE_NAME, embedder)
    store.search.sync(view)
    docs = []
    for record in eligible:
        known = store.files.signatures.get(record.id)
        if known is not None and record.id not in store.files.missing:
            # a body taken with placeholders is keyed apart: under another secrets setting it is embedded again
            redacted = store.files.redacted_for_search(record, known[1], store.secrets)
            docs.append((record.id, record.title, known[1] + ("+redacted" if redacted else "")))

    def load(doc_id: str) -> str | None:
        return store.files.searchable_body(view.by_id[doc_id], store.secrets)

    left = vectors.ensure(docs, load)
    found, spread = vectors.search(embedder.embed_query(query), {d[0] for d in docs})
    return left, found, spread
