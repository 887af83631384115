"""Recall-quality policies (pure): which recalled rows an assistant gets (shared/reference/dsh-mnemon.md 6.6).

Per row, a decision from its score (thresholds of :class:`RecallQuality`, defaults low 0.25 / high 0.6):

============================  ==========  ======================
score                         tier        reason
============================  ==========  ======================
none                          unknown     ``unscored``
not finite                    (dropped)   ``invalid-score``
provider has no score scale   unknown     ``unscaled-score``
<= 0                          low         ``non-positive-score`` (normalized 0)
> 1                           unknown     ``unscaled-score``
< low                         low         ``low-score``
< high                        medium
otherwise                     high
============================  ==========  ======================

The *head* of a recall (issue 27 item 8a): when the best-scored row (the highest score in 0..1) is not low,
every row scoring at least :data:`HEAD_RATIO` (0.9) of it, whatever its tier (:attr:`Decision.head`). These
are the rows the ranking cannot tell from its best answer; a policy that cut some of them would cut what the
ranking got right as often as what it got wrong (seven facts tied on the words they share with the question:
a cap of four medium rows sent the answer about half the time, bench/results/retrieval_quality.md).

Policies:

- ``strict-v2`` (default): every high row and every row of the head, then at most ``maxMediumResults``
  other medium rows, then at most ``maxUnknownResults`` unknown ones, in the ranking's order, cut to the
  limit; other low rows and non-positive rows dropped.
- ``strict-v1`` (the default before issue 27 item 8): low and non-positive rows dropped; all high, then at
  most ``maxMediumResults`` medium, then at most ``maxUnknownResults`` unknown, cut to the limit (no backfill).
- ``balanced-v1``: low kept, non-positive dropped; non-low rows first, then low, cut to the limit.
- ``exhaustive-v1``: every finite row kept; the first ``limit``.

Every policy asks providers for ``candidateLimit`` rows: ``min(50, max(limit, ceil(limit * candidateMultiplier)))``
(limit 2 -> 6, 10 -> 30). A policy that returns a candidate limit outside ``[limit, 50]`` or not an integer,
raises, selects more than ``limit`` rows, or selects a dropped or repeated row is replaced by the default,
``strict-v2`` (``fallbackFrom`` records it); the default failing itself raises. Custom policies register with
:func:`register_policy` (a duplicate id is rejected).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from ..errors import InvalidInput, range_rule
from .model import MAX_LIMIT

POLICY_ID_RE = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
DEFAULT_POLICY = "strict-v2"
BUILT_IN = ("strict-v1", "strict-v2", "balanced-v1", "exhaustive-v1")
#: A row scoring at least this share of the best (non-low) score is in the recall's head (module doc).
HEAD_RATIO = 0.9


@dataclass(frozen=True, slots=True)
class RecallQuality:
    """The ``recallQuality`` configuration. Construct with :meth:`from_dict` for field-named errors."""

    policy: str = DEFAULT_POLICY
    low_score_threshold: float = 0.25
    high_score_threshold: float = 0.6
    candidate_multiplier: int = 3
    max_medium_results: int = 4
    max_unknown_results: int = 2

    def __post_init__(self) -> None:
        prefix = "recallQuality."
        if not isinstance(self.policy, str) or not POLICY_ID_RE.match(self.policy):
            raise InvalidInput(prefix + "policy", "must match ^[a-z][a-z0-9-]{0,63}$")
        for name, value in (("lowScoreThreshold", self.low_score_threshold),
                            ("highScoreThreshold", self.high_score_threshold)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise InvalidInput(prefix + name, range_rule("number", {"ge": 0, "le": 1}, value))
        if not self.low_score_threshold < self.high_score_threshold:
            raise InvalidInput(prefix + "lowScoreThreshold", "must be below highScoreThreshold")
        for name, value, low, high in (("candidateMultiplier", self.candidate_multiplier, 1, 5),
                                       ("maxMediumResults", self.max_medium_results, 0, 50),
                                       ("maxUnknownResults", self.max_unknown_results, 0, 50)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidInput(prefix + name, range_rule("integer", {"ge": low, "le": high}, value))

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "RecallQuality":
        """From camelCase settings keys (``policy``, ``lowScoreThreshold``, ``highScoreThreshold``,
        ``candidateMultiplier``, ``maxMediumResults``, ``maxUnknownResults``); missing keys take defaults."""
        data = data or {}
        known = {"policy": "policy", "lowScoreThreshold": "low_score_threshold",
                 "highScoreThreshold": "high_score_threshold", "candidateMultiplier": "candidate_multiplier",
                 "maxMediumResults": "max_medium_results", "maxUnknownResults": "max_unknown_results"}
        for key in data:
            if key not in known:
                raise InvalidInput(f"recallQuality.{key}", "is not a recall-quality setting")
        return cls(**{known[k]: v for k, v in data.items()})


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on one row: ``tier``, ``reason`` (``None`` for plain medium/high), ``normalized`` (the
    score in 0..1 when it has one), ``valid`` (false only for non-finite scores), ``head`` (the row is in the
    recall's head: :func:`mark_head`)."""

    tier: str
    reason: str | None
    normalized: float | None
    valid: bool = True
    head: bool = False


def decide(score: Any, normalized_scores: bool, quality: RecallQuality) -> Decision:
    """The decision for one row (module doc table)."""
    if score is None:
        return Decision("unknown", "unscored", None)
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return Decision("unknown", "invalid-score", None, valid=False)
    if not normalized_scores:
        return Decision("unknown", "unscaled-score", None)
    if score <= 0:
        return Decision("low", "non-positive-score", 0.0)
    if score > 1:
        return Decision("unknown", "unscaled-score", None)
    if score < quality.low_score_threshold:
        return Decision("low", "low-score", float(score))
    if score < quality.high_score_threshold:
        return Decision("medium", None, float(score))
    return Decision("high", None, float(score))


def mark_head(decisions: Sequence[Decision]) -> list[Decision]:
    """``decisions`` with :attr:`Decision.head` set on the rows of the head (module doc): none when no row has a
    normalized score or the best one is low."""
    scored = [d for d in decisions if d.valid and d.normalized is not None]
    if not scored:
        return list(decisions)
    top = max(scored, key=lambda d: d.normalized or 0.0)
    if top.tier == "low" or not top.normalized:
        return list(decisions)
    bar = HEAD_RATIO * top.normalized
    return [Decision(d.tier, d.reason, d.normalized, True, True)  # valid (the test); cheaper than replace()
            if d.valid and d.normalized is not None and d.normalized >= bar else d for d in decisions]


class Policy(Protocol):
    """A recall-quality policy: ``id``, ``candidate_limit(limit, quality)``, ``retains(decision)`` (whether
    the row survives the policy's drop rule) and ``select(decisions, limit, quality)`` -> row indexes in
    output order."""

    id: str

    def candidate_limit(self, limit: int, quality: RecallQuality) -> int: ...

    def retains(self, decision: Decision) -> bool: ...

    def select(self, decisions: Sequence[Decision], limit: int, quality: RecallQuality) -> list[int]: ...


def default_candidate_limit(limit: int, quality: RecallQuality) -> int:
    """``min(50, max(limit, ceil(limit * candidateMultiplier)))``."""
    return min(MAX_LIMIT, max(limit, math.ceil(limit * quality.candidate_multiplier)))


class StrictV1:
    """``strict-v1`` (module doc)."""

    id = "strict-v1"

    def candidate_limit(self, limit: int, quality: RecallQuality) -> int:
        return default_candidate_limit(limit, quality)

    def retains(self, decision: Decision) -> bool:
        return decision.valid and decision.tier != "low"

    def select(self, decisions: Sequence[Decision], limit: int, quality: RecallQuality) -> list[int]:
        high = [i for i, d in enumerate(decisions) if d.valid and d.tier == "high"]
        medium = [i for i, d in enumerate(decisions) if d.valid and d.tier == "medium"][:quality.max_medium_results]
        unknown = [i for i, d in enumerate(decisions) if d.valid and d.tier == "unknown"][:quality.max_unknown_results]
        return [*high, *medium, *unknown][:limit]


class StrictV2:
    """``strict-v2`` (module doc)."""

    id = "strict-v2"

    def candidate_limit(self, limit: int, quality: RecallQuality) -> int:
        return default_candidate_limit(limit, quality)

    def retains(self, decision: Decision) -> bool:
        return decision.valid and (decision.tier != "low" or decision.head)

    def select(self, decisions: Sequence[Decision], limit: int, quality: RecallQuality) -> list[int]:
        picked: list[int] = []
        medium = unknown = 0
        for i, d in enumerate(decisions):
            if not d.valid:
                continue
            if d.tier == "high" or d.head:
                picked.append(i)
            elif d.tier == "medium" and medium < quality.max_medium_results:
                picked.append(i)
                medium += 1
            elif d.tier == "unknown" and unknown < quality.max_unknown_results:
                picked.append(i)
                unknown += 1
        return picked[:limit]


class BalancedV1:
    """``balanced-v1`` (module doc)."""

    id = "balanced-v1"

    def candidate_limit(self, limit: int, quality: RecallQuality) -> int:
        return default_candidate_limit(limit, quality)

    def retains(self, decision: Decision) -> bool:
        return decision.valid and decision.reason != "non-positive-score"

    def select(self, decisions: Sequence[Decision], limit: int, quality: RecallQuality) -> list[int]:
        kept = [i for i, d in enumerate(decisions) if self.retains(d)]
        return [*[i for i in kept if decisions[i].tier != "low"],
                *[i for i in kept if decisions[i].tier == "low"]][:limit]


class ExhaustiveV1:
    """``exhaustive-v1`` (module doc)."""

    id = "exhaustive-v1"

    def candidate_limit(self, limit: int, quality: RecallQuality) -> int:
        return default_candidate_limit(limit, quality)

    def retains(self, decision: Decision) -> bool:
        return decision.valid

    def select(self, decisions: Sequence[Decision], limit: int, quality: RecallQuality) -> list[int]:
        return [i for i, d in enumerate(decisions) if d.valid][:limit]


_POLICIES: dict[str, Policy] = {p.id: p for p in (StrictV1(), StrictV2(), BalancedV1(), ExhaustiveV1())}


def register_policy(policy: Policy) -> None:
    """Add a custom policy; raises :class:`InvalidInput` (``policy.id``) for a bad or duplicate id."""
    if not isinstance(getattr(policy, "id", None), str) or not POLICY_ID_RE.match(policy.id):
        raise InvalidInput("policy.id", "must match ^[a-z][a-z0-9-]{0,63}$")
    if policy.id in _POLICIES:
        raise InvalidInput("policy.id", "is already registered", policyId=policy.id)
    _POLICIES[policy.id] = policy


def unregister_policy(policy_id: str) -> None:
    """Remove a custom policy (the built-in ones stay)."""
    if policy_id not in BUILT_IN:
        _POLICIES.pop(policy_id, None)


def policy_ids() -> list[str]:
    """Registered policy ids."""
    return list(_POLICIES)


@dataclass(slots=True)
class Plan:
    """The policy to run: ``policy``, ``candidate_limit``, ``fallback_from`` (the configured id when it was
    replaced by the default, else ``None``)."""

    policy: Policy
    candidate_limit: int
    fallback_from: str | None = None
    failure: str | None = None


def plan(limit: int, quality: RecallQuality) -> Plan:
    """Resolve the configured policy and its candidate limit, falling back to the default (module doc).
    An unknown policy id falls back too."""
    policy = _POLICIES.get(quality.policy)
    if policy is None:
        return _strict_plan(limit, quality, quality.policy, "unknown policy")
    try:
        candidates = policy.candidate_limit(limit, quality)
    except Exception as exc:  # a custom policy must never break recall
        return _strict_plan(limit, quality, policy.id, f"candidate_limit raised {type(exc).__name__}")
    if isinstance(candidates, bool) or not isinstance(candidates, int) or not limit <= candidates <= MAX_LIMIT:
        return _strict_plan(limit, quality, policy.id, "candidate limit outside [limit, 50]")
    return Plan(policy, candidates)


def _strict_plan(limit: int, quality: RecallQuality, origin: str, why: str) -> Plan:
    strict = _POLICIES[DEFAULT_POLICY]
    return Plan(strict, strict.candidate_limit(limit, quality), origin if origin != strict.id else None, why)


@dataclass(slots=True)
class Selection:
    """The outcome: ``indexes`` selected (output order), per-row ``decisions``, the policy id used and
    ``fallback_from``."""

    indexes: list[int]
    decisions: list[Decision]
    policy_id: str
    fallback_from: str | None
    retains: Any = field(default=None, repr=False)


def select(scores: Sequence[tuple[Any, bool]], limit: int, quality: RecallQuality, chosen: Plan) -> Selection:
    """Apply ``chosen`` to rows given as ``(score, provider has normalized scores)`` in the ranking's order; the
    decisions carry the head (:func:`mark_head`); falls back to the default when the policy misbehaves (module
    doc)."""
    decisions = mark_head([decide(score, semantics, quality) for score, semantics in scores])
    policy, fallback = chosen.policy, chosen.fallback_from
    try:
        picked = list(policy.select(decisions, limit, quality))
        ok = (len(picked) <= limit and len(set(picked)) == len(picked)
              and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(decisions)
                      and decisions[i].valid and policy.retains(decisions[i]) for i in picked))
    except Exception:
        ok = False
    if not ok:
        if policy.id == DEFAULT_POLICY:
            raise RuntimeError(f"{DEFAULT_POLICY} recall policy failed")
        fallback = policy.id
        policy = _POLICIES[DEFAULT_POLICY]
        picked = policy.select(decisions, limit, quality)
    return Selection(picked, decisions, policy.id, fallback, policy.retains)
