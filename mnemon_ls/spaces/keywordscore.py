"""The keyword score of one recall candidate (pure), shared by the native provider's ranking
(:mod:`.providers.native_recall`) and other providers that rank with the same policy (``providers/postgres``).

``score = cover * (0.73 + 0.14 * exactness + 0.06 * relevance + 0.04 * (importance - 1) / 4
+ 0.03 * 0.5 ** (age_days / 180))``, at most 1.0: ``cover`` the share (0..1) of the query's groups the item
holds (the time range it names counting as one more), ``exactness`` the share of those held by their whole
term, ``relevance`` the item's BM25-like rank over the best candidate's (0..1; 0.5 when unknown),
``importance`` 1..5 (clamped), ``age_days`` since it was created (>= 0).
"""

from __future__ import annotations

#: The highest score of an item created outside the time range the query names: medium at most (under the
#: default high threshold 0.6), whatever its words and meaning (issue 27 item 8d).
OUTSIDE_RANGE_CAP = 0.55


def keyword_score(cover: float, exactness: float, relevance: float, importance: int, age_days: float) -> float:
    """The score of the module doc (0..1, not capped by the time range or the weak-match rule)."""
    return min(1.0, cover * (0.73 + 0.14 * exactness + 0.06 * relevance
                             + 0.04 * (min(max(importance, 1), 5) - 1) / 4 + 0.03 * 0.5 ** (age_days / 180)))
