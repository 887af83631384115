"""How citations order search and recall results (issue 24 items 4 and 7), without changing how a result's
quality tier is decided:

- :func:`worst`: a memory's freshness is the worst of its citations' (``gone`` > ``changed`` > ``unknown`` >
  ``renamed`` > ``moved`` > ``fresh``); a memory without citations has none.
- :func:`order`: within each run of consecutive results of the same tier, a result whose freshness is
  ``changed`` or ``gone`` goes after the others (a stable sort: the order is otherwise kept, and no result
  leaves its tier's run); then a superseded result (one a newer memory in the results supersedes,
  :mod:`.lineage`) goes right after the last of its successors.

Base layer: pure functions.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

#: Freshness from best to worst.
ORDER = ("fresh", "moved", "renamed", "unknown", "changed", "gone")
#: What ranks a result below the fresh ones of its tier.
STALE = ("changed", "gone")


def worst(views: Iterable[Mapping[str, Any]]) -> str | None:
    """The worst ``freshness`` of citation views (:data:`ORDER`), ``None`` for none."""
    states = [v.get("freshness", "unknown") for v in views]
    if not states:
        return None
    return max(states, key=lambda s: ORDER.index(s) if s in ORDER else ORDER.index("unknown"))


def order(results: Sequence[dict[str, Any]], key_of: Callable[[dict[str, Any]], Any],
          successors: Mapping[Any, Sequence[Any]]) -> list[dict[str, Any]]:
    """``results`` reordered (module doc): each result's ``tier`` and ``freshness`` keys are read (either may be
    absent); ``key_of(result)`` names it in ``successors`` (superseded key -> the keys of the memories that
    supersede it). Returns a new list of the same dicts."""
    runs: list[list[dict[str, Any]]] = []
    for item in results:
        if runs and runs[-1][0].get("tier") == item.get("tier"):
            runs[-1].append(item)
        else:
            runs.append([item])
    ranked = [item for run in runs for item in sorted(run, key=lambda i: i.get("freshness") in STALE)]
    if not successors:
        return ranked
    for _round in range(len(ranked)):  # each move settles one result; a cycle cannot loop forever
        keys = [key_of(item) for item in ranked]
        moved = False
        for index, item in enumerate(ranked):
            after = [keys.index(s) for s in successors.get(keys[index], ()) if s in keys]
            last = max(after, default=-1)
            if last > index:
                ranked.insert(last, ranked.pop(index))
                moved = True
                break
        if not moved:
            break
    return ranked
