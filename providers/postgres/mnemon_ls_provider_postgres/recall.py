"""Keyword recall of a PostgreSQL space, ranked with the native provider's policy.

The query is read as native recall reads it (:func:`mnemon_ls.spaces.querysense.sense`: its term groups, the
proper names, the time range it names). Two SQL statements: the first counts, in ``postings`` (schema 4), the
items holding each query term, up to :data:`RARE_ITEMS` + 1; the second takes the candidates from
``postings`` as native recall does (:func:`_candidates`: every item of a rare term, else the newest of each
common one; an identifier's inside by ``LIKE`` on ``lower(content)`` for a term no item holds whole, served by
the ``pg_trgm`` index when the server has it; the items created in the time range), keeps the
:data:`SHORTLIST` ``* pool`` holding the most query groups (the newest first) before any item is read (all
of them with a category or source filter, which the shortlist cannot see), reads
those items with the branch scope (``branches`` column) and the category and source filters, and ranks them by
``ts_rank`` (a ``tsquery`` of the terms as they are, no language configuration), counting in the same
statement the candidates the branch scope hid. So the work is bounded whatever the size of the space. The best
``pool`` = ``max(64, 6 * limit)`` are
scored in Python exactly as native ones (:func:`mnemon_ls.spaces.keywordscore.keyword_score` of coverage,
exactness, relevance = ``ts_rank`` over the best, importance and age), capped by the time range and the
weak-match rule
(:func:`mnemon_ls.spaces.querysense.weak_match`, with the items holding each group's whole term counted in
SQL). One thing more than native: a query group held by no term of the item but standing inside one of its
identifiers (:func:`identifiers`: ``configfile`` in ``parseConfigFile``) counts as held by a part (coverage, not
exactness); a plain word inside a plain word (``deploy`` in ``Deploys``) does not, as in native ranking.
Chinese, Japanese and Korean text is matched by its character pairs, the same terms native indexes. With
semantic recall on (:mod:`.vectors`) the candidates are fused with the vector ones as native
hybrid recall fuses them (``matchedVia`` ``keyword``, ``vector`` or ``keyword+vector``, ``similarity``), and the
time-range and weak-match caps are applied again after fusion (the native provider's ``_adjusted``).
``mode`` ``basic`` is the CLI's plain substring scan.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

import regex

from mnemon_ls.spaces.index import TOKENIZER
from mnemon_ls.spaces.keywordscore import OUTSIDE_RANGE_CAP, keyword_score
from mnemon_ls.spaces.providers.base import KeepFn, SearchOutcome, sparse_hint
from mnemon_ls.spaces.providers.native_recall import weakened
from mnemon_ls.spaces.querysense import (ELSEWHERE_NOTICE, WEAK_MATCH_CAP, WEAK_MATCH_FACTOR, answered_elsewhere, sense,
                                         weak_matcher)
from mnemon_ls.text import grouped

from .rows import ITEM_COLUMNS

_IDENT = regex.compile(r"[\p{L}\p{N}_][\p{L}\p{N}_.\-]*[\p{L}\p{N}_]")


def lexeme(text: str, prefix: bool = False) -> str:
    """``text`` as one quoted ``tsquery`` lexeme (``'..'`` with ``'`` doubled and ``\\`` escaped), ``:*`` for
    a prefix."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'" + (":*" if prefix else "")


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def branch_sql(keep: KeepFn | None) -> tuple[str, list[Any]] | None:
    """The SQL condition of a recall's branch scope (``keep`` of the service's branch rule: ``branch``,
    ``mode``, ``detached``), or ``None`` when ``keep`` is another predicate (then applied in Python only)."""
    scope = getattr(keep, "__self__", None)
    if keep is None or not all(hasattr(scope, name) for name in ("branch", "mode", "detached")):
        return None
    if scope.mode == "off":
        return "TRUE", []
    if scope.branch is None:
        return ("TRUE", []) if scope.detached == "show" else ("cardinality(i.branches) = 0", [])
    if scope.mode != "filter":
        return "TRUE", []
    return "(cardinality(i.branches) = 0 OR %s = ANY(i.branches))", [scope.branch]


def search(space: Any, query: str, *, limit: int, mode: str, category: str | None, source: str | None,
           keep: KeepFn | None) -> SearchOutcome:
    """The ranked items (module doc), at most ``limit``, best first."""
    if mode == "basic":
        return _basic(space, query, limit, category, source, keep)
    now = datetime.now(timezone.utc)
    sensed = sense(query, TOKENIZER, now)
    terms, when = sensed.terms, sensed.when
    if not terms and when is None and not (mode == "smart" and space.engine.semantic and query.strip()):
        return SearchOutcome([], sparse_hint(0, limit))
    pool = max(64, limit * 6)
    base = ["i.space_id = %s", "i.deleted_at IS NULL"]
    bargs: list[Any] = [space.key]
    if category is not None:
        base.append("i.category = %s")
        bargs.append(category)
    if source is not None:
        base.append("i.source = %s")
        bargs.append(source)
    scope = branch_sql(keep)
    scoped = " AND ".join(base + ([scope[0]] if scope is not None else []))
    sargs = [*bargs, *(scope[1] if scope is not None else [])]
    tsquery = " | ".join(lexeme(t.text, t.prefix) for t in terms)
    firsts = [members[0] for members in grouped(terms)]
    hybrid = mode == "smart" and space.engine.semantic and bool(query.strip())

    def read(conn: Any) -> tuple[list, int, dict[int, int], int]:
        held_by = _held_by(conn, space, terms)
        frequency = {t.group: held_by[i] for i, t in enumerate(terms) if t in firsts}
        sources, cargs = _candidates(space, terms, held_by, when, pool)
        if not sources:
            return [], 0, frequency, 0
        rank = "ts_rank(i.tsv, %s::tsquery)" if terms else "0::real"
        ok = scope[0] if scope is not None else "TRUE"
        oargs = scope[1] if scope is not None else []
        shortlist = (f"c(item_id, created_at, g, m) AS ({' UNION ALL '.join(sources)}), "
                     "s AS (SELECT item_id, count(DISTINCT g) AS n, max(created_at) AS t FROM c GROUP BY item_id "
                     "HAVING bool_or(m) ORDER BY n DESC, t DESC, item_id LIMIT %s)")
        # a category or source filter reads every candidate (the shortlist knows neither); LIMIT NULL: no cut
        cut = SHORTLIST * pool if category is None and source is None else None
        rows = conn.execute(
            f"WITH {shortlist}, r AS (SELECT {columns}, {rank} AS r, ({ok}) AS ok, s.n AS n FROM {space.table} i "
            f"JOIN s ON i.id = s.item_id WHERE {' AND '.join(base)}) "
            f"SELECT {ITEM_COLUMNS}, r, (SELECT count(*) FROM r WHERE NOT ok), "
            "(SELECT coalesce(max(n), 0) FROM r WHERE NOT ok) FROM r WHERE ok "
            "ORDER BY r DESC, created_at DESC, id LIMIT %s",
            [*cargs, cut, *([tsquery] if terms else []), *oargs, *bargs, pool]).fetchall()
        hidden, elsewhere = (int(rows[0][-2]), int(rows[0][-1])) if rows else (0, 0)
        if not rows and ok != "TRUE":
            hidden, elsewhere = conn.execute(
                f"WITH {shortlist} SELECT count(*), coalesce(max(s.n), 0) FROM {space.table} i "
                f"JOIN s ON i.id = s.item_id WHERE {' AND '.join(base)} AND NOT ({ok})",
                [*cargs, cut, *bargs, *oargs]).fetchone()
        return [row[:-2] for row in rows], int(hidden), frequency, int(elsewhere)

    columns = ", ".join("i." + c.strip() for c in ITEM_COLUMNS.split(","))
    rows, hidden, frequency, elsewhere = space._call(read)  # elsewhere: the most groups an item of another
    # branch holds (the shortlist's count of the query groups each item holds)
    groups = grouped(terms)
    count_groups = sensed.groups + (when is not None)
    best = max((float(r[-1] or 0.0) for r in rows), default=0.0) or 1.0
    stamp = now.timestamp()
    scored: list[tuple] = []
    by_id: dict[str, tuple] = {}
    dropped = 0
    weak: set[str] = set()
    is_weak = weak_matcher(sensed, frequency)
    here = 0  # the most query groups held by one item the branch filter keeps
    for row in rows:
        tags = list(row[4] or [])
        kept = keep is None or keep(tags)
        held_terms = set(row[9] or [])
        inside: list[str] | None = None  # the item's identifiers, read when a group needs them
        folded: str | None = None  # its text casefolded, read before them
        matched = exact = 0
        held = 0
        for members in groups:
            whole = members[0]
            if _holds(whole, held_terms):
                matched, exact, held = matched + 1, exact + 1, held | 1 << whole.group
            elif any(_holds(t, held_terms) for t in members[1:]):
                matched, held = matched + 1, held | 1 << whole.group
            elif any(not t.prefix and len(t.text) >= 3 for t in members):
                folded = (row[1] or "").casefold() if folded is None else folded
                if not any(not t.prefix and len(t.text) >= 3 and t.text in folded for t in members):
                    continue  # nowhere in the text: in no identifier either (their folded forms are its slices)
                inside = identifiers(row[1] or "") if inside is None else inside
                if any(not t.prefix and len(t.text) >= 3 and t.text in ident and t.text != ident
                       for t in members for ident in inside):
                    matched, held = matched + 1, held | 1 << whole.group
        if not kept:
            dropped += 1
            elsewhere = max(elsewhere, matched)
            continue
        here = max(here, matched)
        created = row[7].timestamp() if row[7] is not None else 0.0
        dated = when is not None and when.start.timestamp() <= created < when.end.timestamp()
        if matched + dated <= 0:
            continue
        cover = (matched + dated) / count_groups
        exactness = (exact + dated) / (matched + dated)
        importance = row[3] if isinstance(row[3], int) else 3
        age_days = max(0.0, (stamp - created) / 86400) if created else 3650.0
        score = keyword_score(cover, exactness, float(row[-1] or 0.0) / best, importance, age_days)
        if when is not None and not dated:
            score = min(score, OUTSIDE_RANGE_CAP)
        if not dated and is_weak(held, exact == matched):
            score = min(score * WEAK_MATCH_FACTOR, WEAK_MATCH_CAP)
            weak.add(str(row[0]))
        ident = str(row[0])
        by_id[ident] = row[:-1]
        scored.append((min(1.0, score), importance, created, ident, tags, matched + dated == count_groups))
    notices: list[str] = []
    if scored and answered_elsewhere(elsewhere, here):  # what this branch holds only shares a part of the query
        scored = weakened(scored, weak)
        notices.append(ELSEWHERE_NOTICE)
    scored.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
    if hybrid:
        fused = _fused(space, query, scored, by_id, scoped, sargs, limit, keep)
        if fused is not None:
            scored, extra_dropped = fused
            dropped += extra_dropped
            if when is not None or weak:
                from mnemon_ls.spaces.providers.native_recall import _adjusted

                window = (when.start.timestamp(), when.end.timestamp()) if when is not None else None
                scored = _adjusted(scored, window, sensed.groups, weak)
    chosen = scored[:limit]
    items = []
    for s in chosen:
        item = space._item(by_id[s[3]], round(s[0], 4), s[6] if len(s) > 6 else "keyword")
        item.similarity = s[7] if len(s) > 7 else None
        items.append(item)
    return SearchOutcome(items, sparse_hint(len(items), limit), fetched=len(rows), dropped=dropped + hidden,
                         notices=notices)


#: Items a term may be held by and still be *rare*: when a query has rare terms, every item holding one is a
#: candidate and the rest of the query counts in coverage only; a query of common terms only takes the newest
#: :data:`COMMON_TAKE` (at least ``pool``) items holding each. The counts stop at this cap + 1 (module doc).
RARE_ITEMS = 1000
COMMON_TAKE = 256
#: Candidates read from ``items`` (and ranked by ``ts_rank``) per result of the pool: ``SHORTLIST * pool``.
SHORTLIST = 4


def _postings_of(term: Any) -> tuple[str, list[Any]]:
    """The ``postings`` condition of ``term`` (a prefix term: the range of the terms it begins)."""
    if term.prefix:
        return "p.space_id = %s AND p.term >= %s AND p.term < %s", [term.text, term.text + "\U0010ffff"]
    return "p.space_id = %s AND p.term = %s", [term.text]


def _held_by(conn: Any, space: Any, terms: Sequence[Any]) -> list[int]:
    """How many active items hold each of ``terms`` (from ``postings``), each counted up to
    :data:`RARE_ITEMS` + 1 (a prefix term: its postings, up to the same cap), in one statement."""
    if not terms:
        return []
    parts, args = [], []
    for term in terms:
        where, extra = _postings_of(term)
        parts.append(f'(SELECT count(*) FROM (SELECT 1 FROM "{space.engine.schema}".postings p WHERE {where} '
                     "LIMIT %s) x)")
        args += [space.key, *extra, RARE_ITEMS + 1]
    return [int(n) for n in conn.execute("SELECT " + ", ".join(parts), args).fetchone()]


def _candidates(space: Any, terms: Sequence[Any], held_by: Sequence[int], when: Any,
                pool: int) -> tuple[list[str], list[Any]]:
    """The sub-selects whose ``UNION ALL`` is the candidate list, rows ``(item_id, created_at, g, m)`` with ``g``
    the query group the row stands for and ``m`` whether it makes the item a candidate, and their parameters.

    From ``postings`` (an index range each, no item read): when a term is rare (held by at most
    :data:`RARE_ITEMS` items, ``held_by``), every item holding a rare term; else the newest :data:`COMMON_TAKE`
    (at least ``pool``) holding each common term (beside a rare term they only count for the coverage of the
    items the rare terms bring, as in native recall). Also the items whose text holds, as a substring, a term of
    three or more characters no item holds whole (an identifier's inside; ``LIKE`` on ``lower(content)``, served
    by the trigram index when the server has ``pg_trgm``), at most ``pool``, and the newest ``pool`` created in
    the time range ``when`` (each a group of its own). The caller keeps the :data:`SHORTLIST` ``* pool`` items
    holding the most groups, the newest first, before any item is read. (One statement for the counts and the
    candidates measured slower at 1,000,000 items: its plan took longer to make than the round trip it saved.)"""
    postings = f'"{space.engine.schema}".postings'
    sources: list[str] = []
    args: list[Any] = []
    rare = any(0 < n <= RARE_ITEMS for n in held_by)
    for term, n in zip(terms, held_by):
        if n == 0:
            continue
        where, extra = _postings_of(term)
        take = "" if n <= RARE_ITEMS else " ORDER BY p.created_at DESC, p.item_id DESC LIMIT %s"
        m = "TRUE" if n <= RARE_ITEMS or not rare else "FALSE"
        sources.append(f"(SELECT p.item_id, p.created_at, {int(term.group)} AS g, {m} AS m FROM {postings} p "
                       f"WHERE {where}{take})")
        args += [space.key, *extra, *([max(COMMON_TAKE, pool)] if n > RARE_ITEMS else [])]
    likes = sorted({_like(t.text) for t, n in zip(terms, held_by) if n == 0 and not t.prefix and len(t.text) >= 3})
    if likes:
        sources.append(f"(SELECT i.id, i.created_at, -1, TRUE FROM {space.table} i WHERE i.space_id = %s AND "
                       "i.deleted_at IS NULL AND lower(i.content) LIKE ANY(%s) LIMIT %s)")
        args += [space.key, likes, pool]
    if when is not None:
        sources.append(f"(SELECT i.id, i.created_at, -2, TRUE FROM {space.table} i WHERE i.space_id = %s AND "
                       "i.deleted_at IS NULL AND i.created_at >= %s AND i.created_at < %s "
                       "ORDER BY i.created_at DESC LIMIT %s)")
        args += [space.key, when.start, when.end, pool]
    return sources, args


def _fused(space: Any, query: str, scored: list[tuple], by_id: dict[str, tuple], scoped: str, sargs: list[Any],
           limit: int, keep: KeepFn | None) -> tuple[list[tuple], int] | None:
    """The keyword candidates ``scored`` fused with the vector candidates (:mod:`.vectors`), in the native
    provider's tuple shape plus ``via`` and the similarity evidence; ``None`` when the model does not load
    (keyword ranking stands, and the engine keeps the reason for ``provider test``)."""
    from mnemon_ls.semantic.backends import E5_SCALE, SemanticUnavailable
    from mnemon_ls.semantic.fusion import KeywordHit, fuse
    from mnemon_ls.spaces.providers.hybrid import vector_pool

    from . import vectors

    keyword = [KeywordHit(s[3], s[0], bool(s[5])) for s in scored]

    def read(conn: Any) -> Any:
        vectors.backfill(conn, space.table, space.key)
        return vectors.candidates(conn, space.table, scoped, sargs, query, vector_pool(limit), [h.id for h in keyword])

    try:
        nearest, spread, extra, rows = space._call(read)
    except SemanticUnavailable as exc:
        space.engine.semantic_note = f"semantic recall is off: {exc}"
        return None
    dropped = 0
    known = {h.id for h in keyword}
    floor = E5_SCALE.medium_floor(query)
    vector, floors = [], {}
    for key, cosine in nearest:
        if key not in known:
            row = rows[key]
            if keep is not None and not keep(list(row[4] or [])):
                dropped += 1
                continue
            by_id[key] = row
            floors[key] = max(floor, E5_SCALE.medium_floor(row[1] or "")) if cosine > E5_SCALE.floor else floor
        vector.append((key, cosine))
    base = {s[3]: s for s in scored}
    out = []
    for f in fuse(keyword, vector, E5_SCALE, "calibrated", floor, floors, spread, extra):
        similarity = None if f.cosine is None else {"cosine": round(f.cosine, 4),
                                                     "z": None if f.z is None else round(f.z, 2)}
        if f.id in base:
            s = base[f.id]
            out.append((f.score, s[1], s[2], f.id, s[4], s[5], f.via, similarity))
        elif f.id in by_id:
            row = by_id[f.id]
            created = row[7].timestamp() if row[7] is not None else 0.0
            out.append((f.score, row[3] if isinstance(row[3], int) else 3, created, f.id, list(row[4] or []), False,
                        f.via, similarity))
    out.sort(key=lambda s: (-s[0], -s[1], -s[2], s[3]))
    return out, dropped


def identifiers(text: str) -> list[str]:
    """The folded identifiers of ``text``: its words the tokenizer splits into parts (``retry_backoff_ms``,
    ``parseConfigFile``, ``v2.1-rc``), where a query term may stand inside as a substring (module doc)."""
    out = []
    for word in _IDENT.findall(text):
        pieces = TOKENIZER.word_pieces(word)
        if len(pieces) > 1:
            out.append(pieces[0])
    return out


def _holds(term: Any, document: set[str]) -> bool:
    if term.prefix:
        return any(t.startswith(term.text) for t in document)
    return term.text in document


def _basic(space: Any, query: str, limit: int, category: str | None, source: str | None,
           keep: KeepFn | None) -> SearchOutcome:
    """The CLI's ``basic`` recall: active items whose content holds ``query`` (case-sensitive ``LIKE``), by
    importance then newest; no score."""
    sql = (f"SELECT {ITEM_COLUMNS} FROM {space.table} WHERE space_id = %s AND deleted_at IS NULL AND content LIKE %s")
    args: list[Any] = [space.key, _like(query)]
    if category is not None:
        sql += " AND category = %s"
        args.append(category)
    if source is not None:
        sql += " AND source = %s"
        args.append(source)
    rows = space._call(lambda conn: conn.execute(sql + " ORDER BY importance DESC, created_at DESC, id LIMIT %s",
                                                 [*args, max(limit * 4, 100)]).fetchall())
    items, dropped = [], 0
    for row in rows:
        if keep is not None and not keep(list(row[4] or [])):
            dropped += 1
            continue
        if len(items) < limit:
            items.append(space._item(row, None, "basic"))
    return SearchOutcome(items, sparse_hint(len(items), limit), fetched=len(rows), dropped=dropped)
