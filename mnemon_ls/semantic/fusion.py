"""Fusing keyword and vector candidates (pure): calibrated score fusion with exact hits kept on top.

Inputs: the keyword list, best first, as :class:`KeywordHit` (score 0..1 from the side index, and whether
the item holds every query term group: an *exact* hit); the vector list, best first, as ``(id, cosine)``.

The fused score is both the order and the confidence (the tier of :mod:`mnemon_ls.spaces.policy`): every
candidate, found by words, by meaning or by both, is ranked by it, not by what found it (issue 27 item 8b).

- Candidates at or under the model's floor (``scale.floor``) are not used. One found by meaning alone far
  below the query's best cosine is kept and scored by its own similarity (below): a window of 0.04 under the
  best cosine used to drop true answers that ranked fifth in vector-only search.
- A candidate's *meaning* score is :func:`vector_only_score` of its cosine (0..``scale.cap``: how far it
  stands out of the query's cosine distribution over the space and over the model's floor, below).
- ``calibrated`` mode (the bundled model): ``fused = keyword + (1 - keyword) * meaning`` (keyword 0 for an item
  found by meaning alone, whose fused score is then its meaning score): the keyword evidence keeps its order
  and the meaning adds to it in proportion to what the words left unexplained. It replaced ``0.7 *
  max(keyword, strength) + 0.3 * rrf`` (reciprocal rank fusion over the two lists, with ``strength`` the cosine
  relative to the query's best one), which gave every partial keyword hit near the best cosine the same
  score whatever share of the query it held (bench/results/retrieval_quality.md: hybrid MRR@10 0.697 ->
  0.723 on the same store). :data:`RRF_K` stays for Documents search and federated recall.
  ``cli`` mode (vectors from the Mnemon CLI's own endpoint; mnemon-cli.md 9.3 step 6 without the entity and
  graph terms, which the keyword terms and the smart-mode expansion already carry):
  ``fused = (0.30 * keyword score + 0.35 * max(0, cosine)) / 0.65``.
- Vector-only candidates (found by meaning alone) are judged against the query's own cosine distribution
  over the space (:class:`Spread`, from :meth:`~.vectors.VectorStore.spread`): ``z = (cosine - mean) / std``.
  Such a candidate is *medium* only when its cosine clears the model's absolute floor for the query's script
  (``medium_floor``, :meth:`~.backends.ScoreScale.medium_floor`; per item ``floors``) AND ``z`` is at least
  ``z_needed`` = :meth:`~.backends.ScoreScale.z_needed` of the space's size (``Spread.items``: the scale's
  ``z_medium``, 3.5, up to 115 vectors, more in a larger space, where the best of many unrelated items
  stands further out by chance alone); in a space of fewer than ``min_spread_rows`` vectors (where the
  spread says little) the cosine must clear the floor by ``small_margin`` instead. Its score then grows
  with ``z`` from 0.3 to the scale's ``cap`` (0.55, under the default high threshold). Otherwise it is
  *low*: score ``WEAK_CAP * z / z_medium`` (0 at or below the query's mean cosine; in a small space
  ``WEAK_CAP * (cosine - (floor + small_margin - 0.09)) / 0.09``, clamped to 0..1), under the default low threshold
  0.25, so ``strict-v1`` drops it and ``balanced-v1`` shows it last; one over the floor whose ``z`` clears
  ``z_medium`` but not ``z_needed`` scores ``WEAK_CAP..NEAR_CAP`` (0.2..0.24, growing with ``z``), still
  low, ahead of the other low ones (as it ranked when it was medium: the order a person sees is the order
  before the bar grew with the space; only the tiers changed). The score of a vector-only candidate
  is thus its similarity, not a rank constant; ``cosine`` and ``z`` are kept on :class:`Fused` for the
  recall evidence. When nothing in the space is related, the best vector match is the best of a bad lot
  and stays low (measured: bench/semantic_floor.py, bench/results/semantic.md).
- Exact hits are never buried: a keyword hit keeps at least its keyword score, and an item that no exact
  hit's signals found scores strictly below the lowest exact hit. So semantic recall may add results but
  never moves one below a result that matched fewer query terms than the exact hit.
- A keyword hit that is not exact (it holds only some of the query's term groups) and has a cosine (from
  the vector list or ``keyword_cosines``) is judged by its meaning too. Its meaning *stands out* when it
  would make a vector-only hit medium (``z`` at least ``z_needed`` and the script's floor; in a space of
  fewer than ``min_spread_rows`` vectors, the floor plus ``small_margin``); it is *unrelated* when ``z`` is
  under :data:`WEAK_KEYWORD_Z` (small space: when it does not stand out). Then:

  - standing out: the plain fusion score;
  - holding about a third of the query's groups or less (keyword score under :data:`WEAK_KEYWORD_SCORE`:
    one shared common word, one kana bigram): ``WEAK_CAP * keyword score / WEAK_KEYWORD_SCORE`` (``low``, in
    keyword order) when unrelated, else its keyword score (the vectors do not lift it);
  - otherwise at most ``max(keyword score, scale.cap)`` (lifted to ``medium`` at most), and at most
    ``scale.cap`` when unrelated: a partial keyword match whose meaning is unrelated is never ``high``
    ("config file for the cat" against "parseConfigFile returns a ConfigError", keyword score 0.65, z 1.2).

  Without this, an item sharing one word of three with the query ("before" in "what did I eat before
  lunch") that is also the query's nearest vector got 0.7 * 0.55 + 0.3 = 0.685, ``high`` (with reciprocal rank
  fusion), and "use" lifted "Use pnpm instead of npm" to medium above the real answer. Keyword-only recall (no vectors)
  keeps its keyword score. A cosine from ``keyword_cosines`` does not enter the vector ranks.
- Evidence (``via``): ``keyword``, ``vector`` or ``keyword+vector``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .backends import ScoreScale

RRF_K = 60
#: The highest score of a vector-only candidate that is not medium (module doc).
WEAK_CAP = 0.2
#: The lowest score of a medium vector-only candidate.
MEDIUM_BASE = 0.3
#: The highest score of a vector-only candidate over its floor whose ``z`` clears ``z_medium`` but not the
#: larger space's ``z_needed`` (module doc): low, under the default low threshold 0.25, above every other low.
NEAR_CAP = 0.24
#: Below this ``z`` a weak keyword hit is ``low`` (module doc). True paraphrase pairs of the bundled model
#: have a median ``z`` of 2.3 (bench/results/semantic.md).
WEAK_KEYWORD_Z = 1.5
#: A keyword score under this holds at most about a third of the query's term groups: the native score is
#: ``coverage * (0.73..1.0)`` (:mod:`mnemon_ls.spaces.providers.native`), so coverage 1/3 scores at most
#: 0.333 and coverage 1/2 at least 0.365.
WEAK_KEYWORD_SCORE = 0.35
#: ``None``: the rules for keyword hits that are not exact apply (module doc); bench/semantic_floor.py sets
#: 1.0 to measure them off (plain fusion).
PARTIAL_LIFT_CAP: float | None = None


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One keyword candidate: ``id``, ``score`` (0..1), ``exact`` (holds every query term group)."""

    id: str
    score: float
    exact: bool


@dataclass(frozen=True, slots=True)
class Spread:
    """The query's cosine distribution over the space: ``rows`` read, their ``mean`` and ``std``; ``items``
    the vectors the search ranks (the space's size, which the sample of ``rows`` may be smaller than;
    ``None``: ``rows``), for :meth:`~.backends.ScoreScale.z_needed`."""

    rows: int
    mean: float
    std: float
    items: int | None = None

    @property
    def size(self) -> int:
        """The vectors the search ranks (``items``, else ``rows``)."""
        return self.rows if self.items is None else max(self.items, self.rows)


@dataclass(frozen=True, slots=True)
class Fused:
    """One fused candidate: ``score`` 0..1, ``via`` the signals that found it, ``cosine`` (or ``None``) and
    ``z``, the cosine in standard deviations above the query's mean cosine over the space (``None`` without
    a cosine or a usable :class:`Spread`)."""

    id: str
    score: float
    via: str
    cosine: float | None
    z: float | None = None


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def vector_only_score(cosine: float, floor: float, spread: Spread | None,
                      scale: ScoreScale) -> tuple[float, float | None]:
    """``(score 0..scale.cap, z or None)`` of a candidate found by meaning alone (module doc): ``floor`` is
    the absolute cosine floor for its script, ``spread`` the query's distribution over the space."""
    z = None
    if spread is not None and spread.std > 1e-6:
        z = (cosine - spread.mean) / spread.std
    if spread is not None and spread.rows >= scale.min_spread_rows and z is not None:
        needed = scale.z_needed(spread.size)
        if cosine >= floor and z >= needed:
            return MEDIUM_BASE + (scale.cap - MEDIUM_BASE) * _clamp((z - needed) / 2.0), z
        if cosine >= floor and z >= scale.z_medium:  # medium in a small space, not in this one: first of the low
            return WEAK_CAP + (NEAR_CAP - WEAK_CAP) * _clamp((z - scale.z_medium) / (needed - scale.z_medium)), z
        return WEAK_CAP * _clamp(z / scale.z_medium), z
    need = floor + scale.small_margin
    if cosine >= need:
        return MEDIUM_BASE + (scale.cap - MEDIUM_BASE) * _clamp((cosine - need) / 0.03), z
    return WEAK_CAP * _clamp((cosine - (need - 0.09)) / 0.09), z


def _partial(fused: float, kscore: float, cosine: float, z: float | None, floor: float, spread: Spread | None,
             scale: ScoreScale) -> float:
    """The fused score of a keyword hit that is not exact (module doc): ``fused`` as the plain fusion gave it,
    ``kscore`` its keyword score, ``cosine``/``z`` its vector evidence, ``floor`` its script's absolute floor.
    :data:`PARTIAL_LIFT_CAP` set (the bench's "rules off") caps every lift there instead."""
    if PARTIAL_LIFT_CAP is not None:
        return min(fused, max(kscore, PARTIAL_LIFT_CAP))
    if spread is not None and z is not None and spread.rows >= scale.min_spread_rows:
        stands_out = z >= scale.z_needed(spread.size) and cosine >= floor
        unrelated = z < WEAK_KEYWORD_Z
    else:  # a small space: the absolute floor plus the small-space margin, as for a vector-only hit
        stands_out = cosine >= floor + scale.small_margin
        unrelated = not stands_out
    if stands_out:
        return fused
    if kscore < WEAK_KEYWORD_SCORE:
        return min(fused, WEAK_CAP * kscore / WEAK_KEYWORD_SCORE) if unrelated else min(fused, kscore)
    return min(fused, min(kscore, scale.cap) if unrelated else max(kscore, scale.cap))


def fuse(keyword: Sequence[KeywordHit], vector: Sequence[tuple[str, float]], scale: ScoreScale,
         mode: str = "calibrated", medium_floor: float | None = None,
         floors: Mapping[str, float] | None = None, spread: Spread | None = None,
         keyword_cosines: Mapping[str, float] | None = None) -> list[Fused]:
    """The fused candidates, best first (module doc). ``mode`` ``calibrated`` | ``cli``; ``medium_floor`` the
    absolute cosine floor of a vector-only candidate (``None``: the scale's ``default_medium``); ``floors``
    overrides it per candidate id; ``spread`` the query's cosine distribution over the space (``None``:
    judged as a small space, by the floor plus ``small_margin``); ``keyword_cosines`` the cosines of keyword
    hits the vector list does not hold (their meaning score and the weak-keyword cap). Raises
    ``ValueError`` for another ``mode``."""
    if mode not in ("calibrated", "cli"):
        raise ValueError(f"mode must be calibrated or cli, not {mode!r}")
    keyword_cosines = keyword_cosines or {}
    weak_below = scale.default_medium if medium_floor is None else medium_floor
    floors = floors or {}
    kw: dict[str, KeywordHit] = {}
    for hit in keyword:
        kw.setdefault(hit.id, hit)
    cos: dict[str, float] = {}
    for key, cosine in vector:
        if cosine > scale.floor or key in kw:
            cos.setdefault(key, cosine)
    usable = spread if spread is not None and spread.std > 1e-6 else None
    out: list[Fused] = []
    for key in [*kw, *(k for k in cos if k not in kw)]:
        hit = kw.get(key)
        cosine = cos.get(key)
        z = (cosine - usable.mean) / usable.std if cosine is not None and usable is not None else None
        if hit is None and cosine is not None:
            fused, z = vector_only_score(cosine, floors.get(key, weak_below), spread, scale)
            out.append(Fused(key, round(fused, 4), "vector", cosine, z))
            continue
        if cosine is None and hit is not None and key in keyword_cosines and usable is not None:
            cosine_seen = keyword_cosines[key]
            z = (cosine_seen - usable.mean) / usable.std
        else:
            cosine_seen = cosine
        kscore = hit.score if hit else 0.0
        if mode == "cli":
            fused = (0.30 * kscore + 0.35 * max(0.0, cosine or 0.0)) / 0.65
        else:
            meaning = (vector_only_score(cosine_seen, floors.get(key, weak_below), spread, scale)[0]
                       if cosine_seen is not None else 0.0)
            fused = kscore + (1.0 - kscore) * meaning
        if hit is not None:
            fused = max(fused, hit.score)
            if not hit.exact and cosine_seen is not None:
                fused = _partial(fused, hit.score, cosine_seen, z, floors.get(key, weak_below), usable, scale)
        via = "keyword+vector" if hit is not None and cosine is not None else "keyword"
        out.append(Fused(key, min(1.0, fused), via, cosine_seen, z))
    exact = [f.score for f in out if kw.get(f.id) is not None and kw[f.id].exact]
    if exact:
        floor = min(exact)
        out = [f if (kw.get(f.id) is not None and kw[f.id].exact) or f.score < floor
               else Fused(f.id, max(kw[f.id].score if f.id in kw else 0.0, floor - 0.0001), f.via, f.cosine, f.z)
               for f in out]
    out.sort(key=lambda f: (-f.score, -(1 if kw.get(f.id) and kw[f.id].exact else 0), f.id))
    return out
