"""The search workflow of a Documents store: query rules, phrase tiers, BM25F rows, excerpts.

:meth:`Search.find` validates the query, finds whole-query phrases in titles and descriptions,
ranks the rest with the derived SQLite index (:mod:`.search_index`, kept in sync with the managed files'
bodies), reads each hit's body from its managed file and cuts an excerpt around the best match.
Normalization and terms come from :mod:`mnemon_ls.text`.

:class:`Search` is a part a :class:`~.store.DocumentStore` owns (``store.search``): it holds the derived index
and the semantic engine, and reaches the store only through :class:`SearchedStore`: the mutex, the index,
the managed files, the freshness checks, the clock, and the store's access log and notices.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

from ..errors import InvalidInput, range_rule, type_rule
from .files import ManagedFiles, redacted_for_search, searchable
from .index import IndexFile, IndexView
from .model import DocumentRecord, collapse_space, js_trim, sha256_hex, time_key
from ..text import check_query_length, normalize, required_matches
from .search_index import IndexedDoc, SearchIndex, query_terms
from .views import SearchHit, SearchResult

#: Largest ``limit`` of a search.
MAX_SEARCH_LIMIT = 50
#: Phrase (title/description) hits outside the best BM25 rows that are scored with an extra query.
MAX_PHRASE_RESCORE = 100
#: Characters of a search excerpt (and of a catalog excerpt), before the ``…`` marks.
EXCERPT_CHARS = 220


class FreshnessChecks(Protocol):
    """What a search uses of ``store.freshness`` (:class:`~.freshness.Freshness`)."""

    def refresh_if_due(self) -> Any: ...

    def check_changed(self, view: IndexView) -> None: ...


class SearchedStore(Protocol):
    """What search uses of its :class:`~.store.DocumentStore`: the mutex, ``documents/`` (where the semantic
    side finds its vector file: :func:`mnemon_ls.semantic.documents.semantic_rank` is given the store), the
    index, the managed files, the freshness checks, the clock, the access log, the notices of a reading and the
    ``secrets`` setting (what search may keep of a body not adopted: :func:`~.files.searchable`; see the store's
    members of these names)."""

    mutex: AbstractContextManager[Any]
    secrets: str
    documents_dir: Path
    index: IndexFile
    files: ManagedFiles
    freshness: FreshnessChecks

    def now(self) -> str: ...

    def touch(self, ids: Iterable[str], view: IndexView) -> None: ...

    def read_notices(self, view: IndexView, eligible: Iterable[DocumentRecord] | None = None) -> list[str]: ...


class Search:
    """Ranked search (module doc); ``store.search`` of a ``DocumentStore``.

    ``path`` is the derived index's SQLite file (``documents/.search.sqlite3``), ``None`` to keep it in
    memory. Not locked itself: every public method but :meth:`close` takes the store's mutex or expects it held.
    """

    def __init__(self, store: SearchedStore, path: Path | None) -> None:
        self.store = store
        self._index = SearchIndex(path)
        self._synced: tuple[Any, ...] | None = None  # (index revision, files generation, index generation) synced
        self._norm: dict[str, tuple[str, str, str, str]] = {}  # id -> (title, description, their normalized forms)
        #: The semantic chunk vectors of this store (:class:`mnemon_ls.semantic.documents.DocumentVectors`), made,
        #: replaced and closed by :mod:`mnemon_ls.semantic.documents`; ``None`` until a semantic search needs one.
        self.chunk_vectors: Any = None
        #: Where :attr:`semantic` comes from when it was not set: a zero-argument callable (the host's), asked on
        #: first use, so a store that never searches (the wake's cover) never imports :mod:`mnemon_ls.semantic`.
        self.semantic_source: Any = None
        self._semantic: Any = None
        self._semantic_known = False

    @property
    def semantic(self) -> Any:
        """The process's :class:`mnemon_ls.semantic.engine.SemanticEngine` (set by the host, or asked of
        :attr:`semantic_source`), or ``None``: then search is lexical only. See :mod:`mnemon_ls.semantic.documents`."""
        if not self._semantic_known and self.semantic_source is not None:
            self._semantic, self._semantic_known = self.semantic_source(), True
        return self._semantic

    @semantic.setter
    def semantic(self, engine: Any) -> None:
        self._semantic, self._semantic_known = engine, True

    def find(self, query: Any, include_archived: bool = False, limit: Any = 20, *,
             include_content: bool = False, semantic: bool | None = None, audience: str = "person") -> SearchResult:
        """Ranked lexical search over title, description and body (:mod:`mnemon_ls.text`, :mod:`.search_index`).

        ``query`` at most 2000 characters (code points: :func:`mnemon_ls.text.check_query_length`; an empty query lists
        every eligible document, newest ``updatedAt`` first, score 1); ``include_archived`` adds archived documents;
        ``limit`` 1..50. Order: documents whose title holds the whole query as a phrase, then those whose description
        does, then by BM25F score, then newest ``updatedAt``. A document must contain enough distinct query terms
        (:func:`mnemon_ls.text.required_matches`). Returned documents count as accessed (side file, not the index). A
        missing or unreadable managed file leaves that document out with a notice. ``include_content`` adds each body.
        ``semantic`` (default: on when the host gave an engine) also ranks document chunks by vector similarity and
        fuses both orders (:mod:`mnemon_ls.semantic.documents`): title/description phrase hits stay first; documents
        found only that way have ``matched`` ``semantic``. ``audience`` ``person`` | ``assistant``: an assistant is not
        sent the ``semantic-low`` documents (found by meaning alone with low confidence); the result counts them in
        ``withheld`` (:mod:`mnemon_ls.ops.audience`). Raises :class:`InvalidInput` naming the field for a bad value.
        """
        if audience not in ("person", "assistant"):
            raise InvalidInput("audience", "must be one of person, assistant")
        if not isinstance(query, str):
            raise InvalidInput("query", type_rule("a string", query))
        text = js_trim(query)
        check_query_length(text, "query")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidInput("limit", range_rule("integer", {"ge": 1, "le": MAX_SEARCH_LIMIT}, limit))
        if not isinstance(include_archived, bool):
            raise InvalidInput("includeArchived", type_rule("true or false", include_archived))
        store = self.store
        files = store.files
        with store.mutex:
            store.freshness.refresh_if_due()
            view = store.index.view()
            store.freshness.check_changed(view)
            eligible = view.cache.get(("eligible", include_archived))
            if eligible is None:
                eligible = view.cache[("eligible", include_archived)] = [
                    r for r in view.records if include_archived or r.status == "active"]
            phrase = collapse_space(normalize(text))
            ranked: list[tuple[DocumentRecord, float, str]]
            notices: list[str] = []
            if not phrase:
                present = [r for r in eligible if r.id not in files.missing]
                ranked = [(r, 1.0, "all") for r in sorted(present, key=lambda r: time_key(r.updated_at), reverse=True)]
                terms, matches = [], len(present)
            elif not eligible:
                ranked, terms, matches = [], [], 0
            else:
                terms = query_terms(phrase)
                ranked, matches, problem = self._rank(view, eligible, phrase, terms, include_archived, limit)
                if problem:
                    notices.append(problem)
            excerpts: dict[str, str] = {}
            similarity: dict[str, dict[str, Any]] = {}
            if phrase and eligible and semantic is not False and self.semantic is not None:
                from ..semantic.documents import semantic_rank

                ranked, excerpts, similarity, said = semantic_rank(store, view, eligible, text, ranked)
                if said:
                    notices.append(said)
            hits: list[SearchHit] = []
            withheld = 0
            for record, score, matched in ranked:
                if len(hits) + withheld >= limit:  # the withheld count as sent: a person gets that many
                    break
                if audience == "assistant" and matched == "semantic-low":
                    withheld += 1  # found by meaning alone with low confidence: counted, not sent
                    continue
                if record.id in files.missing:
                    continue
                body = files.searchable_body(record, store.secrets)
                if body is None:
                    if store.index.view(force=True).by_id.get(record.id) != record:
                        files.missing.pop(record.id, None)  # another process moved or changed it meanwhile
                    continue
                hits.append(SearchHit(record, record.last_accessed_at, score, matched,
                                      excerpts.get(record.id) or make_excerpt(body, phrase, terms),
                                      body if include_content else None, similarity.get(record.id)))
            if files.missing:
                # A file seen missing while another process moved it (archive: copy, commit, remove) is
                # not missing: drop what the index no longer says (found by the concurrent-writer test).
                fresh = store.index.view(force=True)
                for doc_id in [d for d in files.missing if fresh.by_id.get(d) != view.by_id.get(d)]:
                    files.missing.pop(doc_id, None)
            notices = store.read_notices(view, eligible) + notices
            if hits:
                # a document found by meaning alone with low relevance is shown, not counted as accessed
                # (mnemon_ls.semantic.documents): a junk search must not refresh every document's lastAccessedAt
                touched = [h.record.id for h in hits if h.matched != "semantic-low"]
                if touched:
                    store.touch(touched, view)
                hits = [SearchHit(h.record, store.index.accessed(h.record), h.score, h.matched, h.excerpt, h.content,
                                  h.similarity) for h in hits]
            return SearchResult(text, include_archived, limit, tuple(hits), matches, store.now(), view.revision,
                                tuple(notices), audience, withheld)

    def _normalized(self, record: DocumentRecord) -> tuple[str, str]:
        hit = self._norm.get(record.id)
        if hit is not None and hit[0] == record.title and hit[1] == record.description:
            return hit[2], hit[3]
        title, description = collapse_space(normalize(record.title)), collapse_space(normalize(record.description))
        self._norm[record.id] = (record.title, record.description, title, description)
        return title, description

    def _normalized_view(self, view: IndexView) -> tuple[list[tuple[DocumentRecord, str, str]], str, str]:
        """``([(record, normalized title, normalized description)], all titles joined, all descriptions
        joined)`` (cached per view; the joined forms let one ``in`` rule out a phrase everywhere)."""
        cached = view.cache.get("normalized")
        if cached is None:
            rows = [(r, *self._normalized(r)) for r in view.records]
            cached = view.cache["normalized"] = (rows, "\x00".join(t for _, t, _ in rows),
                                                 "\x00".join(d for _, _, d in rows))
        return cached

    def _rank(self, view: IndexView, eligible: Sequence[DocumentRecord], phrase: str, terms: Sequence[Any],
              include_archived: bool, limit: int) -> tuple[list[tuple[DocumentRecord, float, str]], int, str | None]:
        """``(ranked (record, score, matched) best first, total matches, problem)``."""
        bounds = (_needs_boundary(phrase[0]), _needs_boundary(phrase[-1]))
        eligible_ids = view.cache.get(("eligible-ids", include_archived))
        if eligible_ids is None:
            eligible_ids = view.cache[("eligible-ids", include_archived)] = {r.id for r in eligible}
        missing = self.store.files.missing
        tiers: dict[str, int] = {}
        rows, titles, descriptions = self._normalized_view(view)
        for column, tier in ((descriptions, 1), (titles, 2)):
            if phrase not in column:  # one C-level scan of all titles (or descriptions) joined
                continue
            for record, title, description in rows:
                text = title if tier == 2 else description
                if phrase in text and _phrase_in(phrase, text, bounds) and record.id in eligible_ids \
                        and record.id not in missing:
                    tiers[record.id] = tier
        problem = None
        scores: dict[str, float] = {}
        matches = len(tiers)
        if terms:
            required = required_matches(len({t.group for t in terms}))
            statuses = ("active", "archived") if include_archived else ("active",)
            try:
                try:
                    self.sync(view)
                except OSError:
                    # the side index cannot be created here (read-only directory): keep it in memory
                    self._index.close()
                    self._index = SearchIndex(None)
                    self._synced = None
                    self.sync(view)
                found, total = self._index.query(terms, required, statuses=statuses,
                                                  limit=limit + len(missing) + 8)
                scores = {doc_id: score for doc_id, score, _ in found}
                absent = [doc_id for doc_id in tiers if doc_id not in scores]
                covered = 0
                if absent and len(absent) <= MAX_PHRASE_RESCORE:
                    extra, _ = self._index.query(terms, 0, statuses=statuses, limit=len(absent), only=absent)
                    for doc_id, score, groups in extra:
                        scores[doc_id] = score
                        covered += groups >= required
                # beyond MAX_PHRASE_RESCORE phrase hits outside the top rows keep score 0 (ordered by updatedAt)
                matches = total + len(absent) - covered
            except sqlite3.Error as exc:
                problem = f"the search index is busy or unreadable ({exc}); only title and description phrases matched"
        positions = view.cache.get("positions")
        if positions is None:
            positions = view.cache["positions"] = {r.id: i for i, r in enumerate(view.records)}
        ranked: list[tuple[int, float, int, int, DocumentRecord]] = []
        for doc_id in (scores.keys() | tiers.keys()):
            position = positions.get(doc_id)
            if position is None or doc_id not in eligible_ids or doc_id in missing:
                continue
            record = view.records[position]
            ranked.append((tiers.get(doc_id, 0), scores.get(doc_id, 0.0), time_key(record.updated_at), -position,
                           record))
        ranked.sort(reverse=True)
        names = ("terms", "description", "title")
        found = [(record, score, names[tier]) for tier, score, _, _, record in ranked]
        return found, max(matches, len(ranked)), problem

    def sync(self, view: IndexView) -> None:
        """Bring the derived index up to date with ``view`` and the managed files as last checked
        (``store.files.signatures``): bodies are read only for documents added or changed since the last
        sync (none when nothing changed). The store's mutex must be held. Raises :class:`sqlite3.Error`
        and the :class:`OSError` of creating the index file."""
        files = self.store.files
        token = (view.revision, files.generation, self._index.generation())
        if token == self._synced:
            return
        wanted = []
        for record in view.records:
            known = files.signatures.get(record.id)
            if record.id in files.missing or known is None:
                continue
            wanted.append(IndexedDoc(record.id, record.title, record.description, known[1], known[0], record.status,
                                     redacted_for_search(record, known[1], self.store.secrets)))
        expected = {doc.id: doc.body_hash for doc in wanted}

        def load(doc_id: str) -> str | None:
            record = view.by_id[doc_id]
            body = files.read_body(record)
            if body is None or sha256_hex(body) != expected[doc_id]:
                return None
            return searchable(record, body, self.store.secrets)  # an unadopted edit: no credential kept

        self._index.sync(wanted, load)
        self._synced = (view.revision, files.generation, self._index.generation())


    def stored_signatures(self) -> dict[str, tuple[str, str]]:
        """``id -> (file signature, body sha256 hex)`` as the derived index last recorded them (what the
        store's freshness starts from in a new process instead of reading every file). Raises
        :class:`sqlite3.Error` and :class:`OSError` of reading the index file."""
        return self._index.signatures()

    def invalidate(self) -> None:
        """Make the next search check the derived index against every document again (after the store's
        knowledge of its files was dropped, e.g. by a recovery)."""
        self._synced = None

    def reset(self) -> None:
        """Delete the derived index (its file, WAL and all; :meth:`SearchIndex.reset`): the next search
        rebuilds it from the managed files (after a redaction, so no old term survives in it)."""
        self._index.reset()
        self._synced = None

    def close(self) -> None:
        """Close the derived index's connection (it reopens lazily on the next search)."""
        self._index.close()


def _needs_boundary(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not _is_cjk(ch)


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F
            or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF or code in (0x3005, 0x3006, 0x303B))


def _phrase_in(phrase: str, text: str, bounds: tuple[bool, bool] | None = None) -> bool:
    """Whether ``phrase`` occurs in ``text`` (both normalized) not inside a longer word. ``bounds``:
    whether the phrase's first / last character needs a word boundary (computed once per query)."""
    if not phrase or not text:
        return False
    start = text.find(phrase)
    check_start, check_end = bounds or (_needs_boundary(phrase[0]), _needs_boundary(phrase[-1]))
    while start >= 0:
        end = start + len(phrase)
        if (not check_start or start == 0 or not _needs_boundary(text[start - 1])) and \
                (not check_end or end == len(text) or not _needs_boundary(text[end])):
            return True
        start = text.find(phrase, start + 1)
    return False


def make_excerpt(body: str, phrase: str, terms: Sequence[Any], width: int = EXCERPT_CHARS) -> str:
    """About ``width`` characters of ``body`` (whitespace collapsed) around the best match: the whole
    query, else its longest term found; the start of the body when nothing is found. ``…`` marks cuts.

    Only a window of the body around the match is collapsed (bodies run to megabytes)."""
    needles = [phrase] if phrase else []
    needles += sorted({t.text for t in terms}, key=len, reverse=True)
    position, length = _locate(body, [n for n in needles if n])
    if position < 0:
        raw_start = 0
    else:
        raw_start = max(0, position - 3 * width)
    raw_end = min(len(body), max(position, 0) + length + 3 * width)
    window = body[raw_start:raw_end]
    flat = collapse_space(window)
    if not flat:
        return ""
    offset, match_len = (-1, 0)
    if position >= 0:
        offset, match_len = _locate(flat, [n for n in needles if n])
    if offset < 0 or len(flat) <= width:
        start = 0
    else:
        start = max(0, offset - max(0, width - match_len) // 3)
    end = min(len(flat), start + width)
    start = max(0, min(start, end - width))
    text = flat[start:end]
    cut_before = start > 0 or (raw_start > 0 and bool(collapse_space(body[:raw_start])))
    cut_after = end < len(flat) or (raw_end < len(body) and bool(collapse_space(body[raw_end:raw_end + 64])))
    return ("…" if cut_before else "") + text + ("…" if cut_after else "")


def _locate(text: str, needles: Sequence[str]) -> tuple[int, int]:
    """``(position, length)`` in ``text`` of the first needle (normalized, case-folded) found, case-
    insensitively and across any whitespace run for a multi-word needle; ``(-1, 0)`` when none is."""
    folded = text.casefold()
    same = len(folded) == len(text)
    for needle in needles:
        if same and " " not in needle:
            found = folded.find(needle)
            if found >= 0:
                return found, len(needle)
            continue
        import regex

        pattern = r"\s+".join(regex.escape(part) for part in needle.split(" "))
        match = regex.search(pattern, text, regex.IGNORECASE | regex.FULLCASE)
        if match:
            return match.start(), match.end() - match.start()
    return -1, 0
