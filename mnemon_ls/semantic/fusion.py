"""Fusing keyword and vector candidates (pure): reciprocal rank fusion with exact hits kept on top.

Inputs: the keyword list, best first, as :class:`KeywordHit` (score 0..1 from the side index, and whether
the item holds every query term group: an *exact* hit); the vector list, best first, as ``(id, cosine)``.

- ``rrf(d) = sum over the lists holding d of 1 / (RRF_K + rank)`` (rank from 1, ``RRF_K`` = 60, as the
  Mnemon CLI's anchors), normalised by its largest possible value ``2 / (RRF_K + 1)`` to 0..1.
- A vector candidate's *strength* is its cosine relative to the query's best one
  (:class:`~.backends.ScoreScale`); candidates of strength 0 (far below the best, or under the model's
  floor) are not used.
- ``rrf`` mode: ``fused = 0.7 * max(keyword score, strength) + 0.3 * rrf``.
  ``cli`` mode (vectors from the Mnemon CLI's own endpoint; mnemon-cli.md 9.3 step 6 without the entity and
  graph terms, which the keyword terms and the smart-mode expansion already carry):
  ``fused = (0.30 * keyword score + 0.35 * max(0, cosine)) / 0.65``.
- Absolute floor: a *vector-only* candidate whose cosine is under ``medium_floor`` (the model's
  :meth:`~.backends.ScoreScale.medium_floor` for the query's script) is scaled into 0..:data:`WEAK_CAP` (0.2,
  under the default low threshold 0.25, order kept): when nothing in the space is related, the best vector match is
  labelled low, never medium or high because it is the best of a bad lot.
- Exact hits are never buried: a keyword hit keeps at least its keyword score, and an item that no exact
  hit's signals found scores strictly below the lowest exact hit. So semantic recall may add results but
  never moves one below a result that matched fewer query terms than the exact hit.
- Evidence (``via``): ``keyword``, ``vector`` or ``keyword+vector``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .backends import ScoreScale

RRF_K = 60
#: The highest score of a vector-only candidate under the absolute medium floor (module doc).
WEAK_CAP = 0.2


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One keyword candidate: ``id``, ``score`` (0..1), ``exact`` (holds every query term group)."""

    id: str
    score: float
    exact: bool


@dataclass(frozen=True, slots=True)
class Fused:
    """One fused candidate: ``score`` 0..1, ``via`` the signals that found it, ``cosine`` (or ``None``)."""

    id: str
    score: float
    via: str
    cosine: float | None


def fuse(keyword: Sequence[KeywordHit], vector: Sequence[tuple[str, float]], scale: ScoreScale,
         mode: str = "rrf", medium_floor: float | None = None,
         floors: Mapping[str, float] | None = None) -> list[Fused]:
    """The fused candidates, best first (module doc). ``mode`` ``rrf`` | ``cli``; ``medium_floor`` the
    cosine a vector-only candidate needs to score above :data:`WEAK_CAP` (``None``: the scale's
    ``default_medium``); ``floors`` overrides it per candidate id."""
    weak_below = scale.default_medium if medium_floor is None else medium_floor
    floors = floors or {}
    best = 2.0 / (RRF_K + 1)
    rrf: dict[str, float] = {}
    kw: dict[str, KeywordHit] = {}
    for rank, hit in enumerate(keyword, start=1):
        kw[hit.id] = hit
        rrf[hit.id] = rrf.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
    cos: dict[str, float] = {}
    rank = 0
    top = max((c for _k, c in vector), default=0.0)
    for key, cosine in vector:
        if scale.score(cosine, top) <= 0 and key not in kw:
            continue
        rank += 1
        cos[key] = cosine
        rrf[key] = rrf.get(key, 0.0) + 1.0 / (RRF_K + rank)
    out: list[Fused] = []
    for key, value in rrf.items():
        hit = kw.get(key)
        cosine = cos.get(key)
        kscore = hit.score if hit else 0.0
        if mode == "cli":
            fused = (0.30 * kscore + 0.35 * max(0.0, cosine or 0.0)) / 0.65
        else:
            strength = scale.score(cosine, top) if cosine is not None else 0.0
            fused = 0.7 * max(kscore, strength) + 0.3 * value / best
        if hit is not None:
            fused = max(fused, hit.score)
        elif cosine is not None and cosine < floors.get(key, weak_below):
            fused = min(WEAK_CAP, fused * WEAK_CAP / 0.55)  # scaled down, so the order among them stays
        via = "keyword+vector" if hit is not None and cosine is not None else ("keyword" if hit else "vector")
        out.append(Fused(key, min(1.0, fused), via, cosine))
    exact = [f.score for f in out if kw.get(f.id) is not None and kw[f.id].exact]
    if exact:
        floor = min(exact)
        out = [f if (kw.get(f.id) is not None and kw[f.id].exact) or f.score < floor
               else Fused(f.id, max(kw[f.id].score if f.id in kw else 0.0, floor - 0.0001), f.via, f.cosine)
               for f in out]
    out.sort(key=lambda f: (-f.score, -(1 if kw.get(f.id) and kw[f.id].exact else 0), f.id))
    return out
