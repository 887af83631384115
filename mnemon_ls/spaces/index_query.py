"""The one SQL statement of a side-index search (:meth:`mnemon_ls.spaces.index.SideIndex.search`).

A recall's keyword side asks the side index once: one statement finds how many items hold each query term,
chooses the strategy, matches, and answers every candidate with its stored terms (:func:`held` reads which
query groups it holds from them), so no term costs a statement of its own. What it
computes, step by step (each a CTE):

1. ``q``, ``f``: the query terms (position, text, the upper bound of a prefix term's range, the quoted FTS5
   phrase) and the active items holding each, counted up to ``cap + 1`` (all the strategy asks is "none",
   "at most ``cap``" or "more"; an item list of 50,000 is not read to the end); a prefix term: the sum over
   the terms it begins, from the ``fts5vocab`` view, as before.
2. ``m``: three ``MATCH`` expressions over the terms some item holds: ``rare`` (the terms held by at most
   :func:`common_cap` items, joined by OR), ``allof`` and ``anyof`` (every present term, joined by AND / by
   OR).
3. ``hits``: when there are rare terms, the ``pool`` best by BM25 (``ORDER BY rank``) of the items holding
   one; else (only common terms) the newest ``pool`` items holding all of them, then the newest holding any
   but not all. A branch that does not apply matches the empty phrase ``""``, which matches nothing and
   reads nothing. ``category``/``source`` filter before the cut.
4. the answer, per candidate: its stored terms and, the same on every row, how many items hold each term
   (``counts``: ``"n0,n1,..."`` in the order of the terms, each at most ``cap + 1``), for the label rule of
   :func:`mnemon_ls.spaces.querysense.weak_match`. :func:`held` then reads from the terms the query groups the
   candidate holds (``matched``) and holds by their whole term (``exact``) (a term is held when ``" term "``
   occurs in the space-padded text, a prefix term when ``" term"`` does), as
   :func:`mnemon_ls.text.match_scores` counts them, and which groups it holds (``held``, bit ``i`` for the
   ``i``-th group of :func:`mnemon_ls.text.grouped`): a substring test in Python is cheaper than ``instr`` in
   SQLite.

The strategy and its thresholds are those of the search it replaces (schema 2: a vocabulary lookup per term,
then one or two ``MATCH`` statements), so the candidates are the same.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..text import QueryTerm, grouped

#: Items a term may be held by and still be ranked with BM25: ``max(COMMON_MIN, COMMON_SHARE * total)``. 500,
#: not 1,000 (stop 46): a term held by 5-10 % of a 10,000-item space scored every holder with BM25 (about 2 µs
#: each), half the search's time for the identifier queries of ``bench/mcp_start.py``, and moved no figure of
#: ``bench/retrieval_quality.py`` or ``bench/recall_precision.py`` (at 100,000 items the cap is 2 % either way).
COMMON_MIN = 500
COMMON_SHARE = 0.02

#: The empty FTS5 phrase: matches no row and reads no doclist.
NOTHING = '""'


def common_cap(total: int) -> int:
    """Items (of ``total`` active ones) a term may be held by before it is *common* (module doc)."""
    return max(COMMON_MIN, int(total * COMMON_SHARE))


def phrase(term: QueryTerm) -> str:
    """``term`` as an FTS5 phrase: quoted, a prefix term followed by ``*``."""
    quoted = '"' + term.text.replace('"', '""') + '"'
    return quoted + "*" if term.prefix else quoted


def _upper(text: str) -> str:
    return text[:-1] + chr(ord(text[-1]) + 1)


def statement(terms: Sequence[QueryTerm], *, pool: int, total: int, category: str | None = None,
              source: str | None = None) -> tuple[str, list[Any]]:
    """``(sql, parameters)`` of the search for ``terms`` (non-empty; module doc). ``pool``: candidates at most;
    ``total``: active items (for the common-term cap). The rows are ``(id, bm25, importance, created,
    branches, terms, counts)``: ``bm25`` higher is better (``None`` for the newest-items strategy), ``branches``
    the item's ``branches`` column, ``terms`` its indexed terms (space-joined) and ``counts`` (module doc, step 4);
    :func:`held` turns them into the search's rows. Raises ``ValueError`` for no terms."""
    if not terms:
        raise ValueError("statement() needs at least one query term")
    params: list[Any] = []
    values = []
    for position, term in enumerate(terms):
        values.append("(?, ?, ?, ?)")
        params += [position, term.text, _upper(term.text) if term.prefix else None, phrase(term)]
    cap = common_cap(total)
    params += [cap + 1, cap]
    where, extra = "", []
    if category is not None:
        where += " AND d.category = ?"
        extra.append(category)
    if source is not None:
        where += " AND d.source = ?"
        extra.append(source)
    columns = ("d.id AS id, {bm} AS bm, d.importance AS importance, d.created AS created, d.branches AS branches, "
               "d.terms AS terms FROM fts JOIN docs d ON d.doc = fts.rowid WHERE fts MATCH (SELECT {match} FROM m)")
    rare = columns.format(bm="-rank", match=f"coalesce(rare, '{NOTHING}')")  # rank: bm25(fts), computed once
    every = columns.format(bm="NULL",
                           match=f"CASE WHEN rare IS NULL THEN coalesce(allof, '{NOTHING}') ELSE '{NOTHING}' END")
    some = columns.format(bm="NULL", match=f"CASE WHEN rare IS NULL AND anyof <> allof THEN "
                                           f"'(' || anyof || ') NOT (' || allof || ')' ELSE '{NOTHING}' END")
    for _ in range(3):
        params += [*extra, pool]
    params.append(pool)
    sql = (
        "WITH q(pos, term, upper, phrase) AS (VALUES " + ", ".join(values) + "), "
        "f(pos, phrase, n) AS (SELECT pos, phrase, CASE WHEN upper IS NULL "
        "THEN (SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH q.phrase LIMIT ?)) "
        "ELSE (SELECT sum(doc) FROM temp.vocab WHERE term >= q.term AND term < q.upper) END FROM q), "
        "m(rare, allof, anyof) AS (SELECT group_concat(CASE WHEN n <= ? THEN phrase END, ' OR '), "
        "group_concat(phrase, ' AND '), group_concat(phrase, ' OR ') FROM f WHERE n > 0), "
        f"hits AS (SELECT * FROM (SELECT {rare}{where} ORDER BY rank LIMIT ?) "
        f"UNION ALL SELECT * FROM (SELECT {every}{where} ORDER BY fts.rowid DESC LIMIT ?) "
        f"UNION ALL SELECT * FROM (SELECT {some}{where} ORDER BY fts.rowid DESC LIMIT ?) LIMIT ?) "
        "SELECT id, bm, importance, created, branches, terms, "
        "(SELECT group_concat(n, ',') FROM (SELECT n FROM f ORDER BY pos)) FROM hits"
    )
    return sql, params


def held(terms: Sequence[QueryTerm], rows: Sequence[Sequence[Any]]) -> list[tuple]:
    """The rows of :func:`statement` (``(id, bm25, importance, created, branches, terms text, counts)``) as the
    search answers them: ``(id, bm25, importance, created, branches, matched, exact, held, counts)`` (module doc,
    step 4), in the same order. A term is held when ``" term "`` occurs in the item's space-padded terms text, a
    prefix term when ``" term"`` does (:func:`mnemon_ls.text.match_scores` counts the same). Done here, not in
    SQL: ``instr`` over every candidate's text cost about 1.6 µs per term and row there, and a flattened query
    evaluated each flag once per use (stop 46: 2.7 ms of a 4.7 ms search at 180 candidates)."""
    groups = grouped(terms)
    slot = {term: i for i, term in enumerate(terms)}
    needles = [" " + term.text if term.prefix else " " + term.text + " " for term in terms]
    members = [[slot[t] for t in group] for group in groups]
    answer = []
    for ident, bm, importance, created, branches, text, counts in rows:
        padded = " " + (text or "") + " "
        flags = [needle in padded for needle in needles]
        matched = exact = mask = 0
        for bit, group in enumerate(members):
            if flags[group[0]]:
                exact += 1
                matched += 1
                mask |= 1 << bit
            else:
                for index in group:
                    if flags[index]:
                        matched += 1
                        mask |= 1 << bit
                        break
        answer.append((ident, bm, importance, created, branches, matched, exact, mask, counts))
    return answer
