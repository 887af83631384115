"""Reads of the Memory Spaces service (:mod:`.service`): ``get_item``, ``related``, the federated ``recall``
across spaces (one provider: by score, whatever found an item, words or meaning, so a result found by meaning
that scores above a word match ranks above it (issue 27 item 8b); several: by tier (high, then medium and
unknown, then low, from each row's score), then reciprocal-rank fusion ``1/(60 + rank)`` within a tier; branch
scope; the recall-quality policy) and the wake ``cover`` block, with their result shapes :class:`RecallResult`
and :class:`SpacesCover`.

A provider with partial answers (the native one's ``search_partial``) ranks its candidates without their rows; only
the results sent are completed (:attr:`~.providers.base.SearchOutcome.complete`, one statement per space), so the
candidates the policy leaves out are never read from the store (issue 27 item 5).

:class:`SpacesRecall` is a mixin of :class:`~mnemon_ls.spaces.service.SpacesService`: its methods use the
service's registry and providers and are only meant to be called on a ``SpacesService``. The rules are in
:mod:`.service`'s module doc; every name here is re-exported by :mod:`.service`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from .. import nowait
from ..errors import InvalidInput, MnemonError, choice_rule, range_rule, type_rule
from . import policy as quality_policy
from .errors import ProviderUnavailable
from .model import (
    CATEGORIES,
    EDGE_TYPES,
    INTENTS,
    MAX_RESULTS,
    RECALL_MODES,
    SOURCES,
    Item,
    branch_tags,
    full_item_id,
    item_not_found,
    validate_item_id,
    validate_limit,
    validate_query,
)
from .policy import RecallQuality
from .providers.base import SearchOutcome, SpaceProvider
from .naming import resolve
from .cover import SpacesCover, render as render_cover, unreadable_reason
from .registry_model import NATIVE_PROVIDER, SpaceRecord
from .thirdparty import call_with_timeout

BRANCH_RECALL_MODES = ("filter", "label", "off")
#: Who a recall's answer is for: a ``person`` gets every result the policy selects; an ``assistant`` is not
#: sent the ones with low confidence outside the ranking's head (:func:`withheld_from_assistant`).
AUDIENCES = ("person", "assistant")
DETACHED_HEAD_POLICIES = ("hide", "show")
RRF_K = 60


@dataclass(slots=True)
class RecallResult:
    """A federated recall (``to_dict()``)::

        {"query", "mode", "limit", "candidateLimit", "policy": {"id", "fallbackFrom", "setting"},
         "results": [{"spaceId", "spaceName", "providerId", "id", "content", "score", "normalizedScore",
                      "tier": high|medium|low|unknown, "category", "importance", "tags", "entities", "source",
                      "createdAt", "matchedVia", "similarity"?: {"cosine", "z"}, "branches", "branchLabel"?,
                      "federatedScore"?}],
         "sources": [{"spaceId", "spaceName", "providerId", "status": ready|empty|unavailable|unsupported,
                      "hint"?, "stats": {"policyId", "fallbackFrom", "fetched", "retained", "selected",
                      "droppedLowScore", "droppedNonPositiveScore", "droppedInvalidScore", "unscored",
                      "unscaled", "branchHidden"}}],
         "hidden": {"otherBranch", "detachedHead"}, "branch": {"name", "recall", "detachedHeadPolicy"},
         "truncated", "hint", "notices", "audience": person|assistant, "withheld": {"lowConfidence"}}

    ``withheld.lowConfidence``: results an ``assistant`` audience was not sent (tier ``low`` and outside the
    ranking's head: :func:`withheld_from_assistant`), counted among those the policy would have sent; each
    source's ``stats.withheld`` counts its own. Always 0 for a ``person``, and for an assistant that asked
    for them (``includeLowConfidence``). ``stats.selected``: the results of
    that space in ``results`` (what was sent: after the cap of 12, without an item forgotten between its search
    and the load of the results); ``fetched`` and ``retained`` count the candidates its search ranked.
    """

    data: dict[str, Any]
    #: ``"<spaceId>/<id>"`` of a result -> ``(updated at, last accessed at)`` before this recall (RFC3339 or
    #: ``None``), for the review rule; not in :meth:`to_dict`.
    times: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.data

    @property
    def results(self) -> list[dict[str, Any]]:
        """The result items."""
        return self.data["results"]


class SpacesRecall:
    """Reads, federated recall and the wake cover of :class:`~mnemon_ls.spaces.service.SpacesService` (mixin)."""

    # ------------------------------------------------------------------ reads

    def get_item(self, space_id: str, item_id: str) -> Item | None:
        """The active (not forgotten) item ``item_id`` of a registered space, active or not, or ``None``
        when it is gone; no access counters are touched. Raises :class:`InvalidInput` (``spaceId``) for an
        unknown space and the provider's errors when its store cannot be read. A provider without an
        exact lookup is searched for the id instead (keyword search, 50 results)."""
        record = resolve(self.state(), space_id)
        key = validate_item_id(item_id, "id")
        provider = self.provider(record)
        get = getattr(provider, "get", None)
        if get is not None:
            return get(key)
        found = provider.search(key, limit=MAX_RESULTS, mode="keyword")
        return next((i for i in found.items if i.id == key), None)

    def review_candidates(self, before: str, limit: int) -> list[tuple[str, Item]]:
        """``(spaceId, item)`` of up to ``limit`` items per active native space neither updated nor accessed since
        ``before`` (RFC3339 UTC; :meth:`~.providers.native_status.NativeStatus.review_candidates`: one bounded SQL
        query per space, the longest untouched first). A third-party space, or a provider without that query
        (the ``cli`` driver), is not scanned; neither is a store that cannot be read now (skipped, not an
        error: review lists what it can)."""
        found: list[tuple[str, Item]] = []
        for record in self.state().all:
            if not (record.active and record.native):
                continue
            try:
                query = getattr(self.provider(record), "review_candidates", None)
                items = query(before, limit) if query is not None else []
            except MnemonError:
                continue
            found += [(record.id, item) for item in items]
        return found

    def has_exact_lookup(self, space_id: str) -> bool:
        """Whether the provider of space ``space_id`` can look an item up by id (else :meth:`get_item`
        falls back to a keyword search, which a vector-only provider cannot answer for an id)."""
        record = resolve(self.state(), space_id)
        return getattr(self.provider(record), "get", None) is not None

    def takes_short_ids(self, space_id: str) -> bool:
        """Whether the space ``space_id`` names an item by the unique start of its id (at least 8 characters:
        :func:`.model.full_item_id`, a native space served in-process); ``False`` for a space not registered."""
        record = self.state().find(space_id)
        return record is not None and getattr(self.provider(record), "ids_starting", None) is not None

    def related(self, space_id: str, item_id: str, *, depth: int = 2, edge_type: str | None = None,
                limit: int = 20) -> dict[str, Any]:
        """Walk the graph from one item of an active space: ``{"spaceId", "spaceName", "id", "items":
        [Item + depth, edgeType], "notices"?}``. Under ``secrets: redact`` or ``reject`` the items are sent redacted as
        recall results are (:func:`.foreign.redact_results`: what another program stored), a notice per item changed.
        Raises :class:`InvalidInput` for a malformed argument and :class:`~mnemon_ls.errors.ItemNotFound`
        (``id``, exit 3) when no active item has the id."""
        record = self._readable(space_id, "spaceId")
        key = validate_item_id(item_id, "id")
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 5:
            raise InvalidInput("depth", range_rule("integer", {"ge": 1, "le": 5}, depth))
        if edge_type is not None and edge_type not in EDGE_TYPES:
            raise InvalidInput("edgeType", choice_rule(EDGE_TYPES, edge_type))
        count = validate_limit(limit, default=20)
        self._capable(record, "related")
        provider = self.provider(record)
        key = full_item_id(provider, key, "id")  # a short id: the unique start of one (SpacesWrites.forget)
        try:
            items = provider.related(key, depth=depth, edge_type=edge_type, limit=count)
        except InvalidInput as exc:  # every provider names a well-formed id it does not hold with field "id"
            raise item_not_found(exc, {"id": key}) from None
        data: dict[str, Any] = {"spaceId": record.id, "spaceName": record.name, "id": key,
                                "items": [i.to_dict() for i in items]}
        if data["items"] and getattr(self, "secrets", "redact") != "allow":
            from .foreign import redact_results

            notices = redact_results(data["items"], space=(record.id, record.name))
            if notices:
                data["notices"] = notices
        return data

    def recall(self, query: str, *, spaces: Sequence[str] | None = None, limit: int | None = None,
               mode: str = "smart", category: str | None = None, source: str | None = None,
               intent: str | None = None, branch: str | None = None, branch_recall: str = "filter",
               detached_head_policy: str = "hide", quality: RecallQuality | None = None,
               audience: str = "person", include_low: bool = False) -> RecallResult:
        """Federated recall across the selected active spaces (module doc; shape in :class:`RecallResult`).

        ``spaces`` ``None`` = every active space; ``limit`` 1..50 (default 10); ``mode`` smart | keyword |
        basic; ``category``/``source``/``intent`` filters as the CLI takes them; ``branch`` the workspace's
        current branch (``None``: unknown); ``audience`` ``person`` | ``assistant`` (an assistant is not
        sent the results :func:`withheld_from_assistant` names; they are counted in ``withheld``);
        ``include_low`` (the ``includeLowConfidence`` of an assistant that asks for them) withholds nothing and,
        when the quality policy drops low rows (:data:`DROPPING_LOW`), ranks with ``balanced-v1`` for this
        recall instead (low rows listed after the others). Raises :class:`InvalidInput` naming the field for a
        bad value."""
        if audience not in AUDIENCES:
            raise InvalidInput("audience", choice_rule(AUDIENCES, audience))
        text = validate_query(query)
        count = validate_limit(limit)
        if mode not in RECALL_MODES:
            raise InvalidInput("mode", choice_rule(RECALL_MODES, mode))
        if category is not None and category not in CATEGORIES:
            raise InvalidInput("category", choice_rule(CATEGORIES, category))
        if source is not None and source not in SOURCES:
            raise InvalidInput("source", choice_rule(SOURCES, source))
        if intent is not None and (not isinstance(intent, str) or intent.upper() not in INTENTS):
            raise InvalidInput("intent", choice_rule(INTENTS, intent))
        if branch_recall not in BRANCH_RECALL_MODES:
            raise InvalidInput("branchRecall", choice_rule(BRANCH_RECALL_MODES, branch_recall))
        if detached_head_policy not in DETACHED_HEAD_POLICIES:
            raise InvalidInput("detachedHeadPolicy", choice_rule(DETACHED_HEAD_POLICIES,
                                                                          detached_head_policy))
        if branch is not None and (not isinstance(branch, str) or not branch.strip()):
            raise InvalidInput("branch", "must be a branch name or null")
        config = quality or self.quality
        if include_low is not False and include_low is not True:
            raise InvalidInput("includeLowConfidence", type_rule("true or false", include_low))
        if include_low and config.policy in DROPPING_LOW:  # what it asks for: the low rows the policy drops
            config = replace(config, policy="balanced-v1")
        withholds = audience == "assistant" and not include_low
        state = self.state()
        if spaces is None:
            selected = [r for r in state.all if r.active]
        else:
            if isinstance(spaces, str) or not isinstance(spaces, (list, tuple)):
                raise InvalidInput("spaces", type_rule("a list of space ids", spaces))
            selected = []
            for index, space in enumerate(spaces):
                record = resolve(state, space, f"spaces[{index}]")
                key = record.id
                if not record.active:
                    raise InvalidInput(f"spaces[{index}]", f"is not active for reading ({record.name}; activate "
                                                           "it first)", spaceId=key)
                if record not in selected:
                    selected.append(record)
        chosen = quality_policy.plan(count, config)
        scope = _BranchScope(branch.strip() if branch else None, branch_recall, detached_head_policy)
        keep = scope.keep if scope.filters else None
        rows: list[tuple[SpaceRecord, int, int, Item, bool, str]] = []
        sources: list[dict[str, Any]] = []
        # a repair now, or a damaged copy kept by one before (once per registry), a file of a newer version
        notices: list[str] = []  # the registry's lines lead them, taken last (below: each is said once)
        hidden = {"otherBranch": 0, "detachedHead": 0}
        completers: dict[int, Callable[[Sequence[Item]], list[Item]]] = {}  # space order -> its outcome.complete
        for order, record in enumerate(selected):
            entry: dict[str, Any] = {"spaceId": record.id, "spaceName": record.name,
                                     "providerId": self._provider_id(record), "status": "ready"}
            def ask(record: SpaceRecord = record) -> tuple[SpaceProvider, SearchOutcome]:
                found = self.provider(record)
                # partial items where the provider has them: only the rows sent are loaded (_complete)
                search = getattr(found, "search_partial", None) or found.search
                return found, search(text, limit=chosen.candidate_limit, mode=mode, category=category,
                                     source=source, intent=intent.upper() if intent else None, keep=keep)

            try:
                if record.native:
                    provider, outcome = ask()
                else:  # a slow or hung third-party engine must not hold the other spaces' evidence back
                    nowait.check(f"provider {record.provider_id}")  # it may wait on the network: not on a loop
                    provider, outcome = call_with_timeout(ask, self.thirdparty.timeout, provider=record.provider_id,
                                                          space_id=record.id)
            except ProviderUnavailable as exc:
                entry.update(status="unavailable" if not exc.data.get("reason") == "no adapter" else "unsupported",
                             hint=exc.message, stats=None)
                sources.append(entry)
                continue
            except MnemonError as exc:
                entry.update(status="unsupported" if exc.data.get("reason") == "not-installed" else "unavailable",
                             hint=exc.message, stats=None)
                if exc.code in ("provider-timeout", "provider-not-configured"):
                    entry["error"] = exc.code
                sources.append(entry)
                continue
            except Exception as exc:  # a third-party engine's own error: this space fails, the recall answers
                if record.native:
                    raise
                entry.update(status="unavailable", hint=f"{type(exc).__name__}: {exc}", stats=None,
                             error="provider-failed")
                sources.append(entry)
                continue
            notices.extend(n for n in outcome.notices if n)
            hidden["detachedHead" if scope.branch is None else "otherBranch"] += outcome.dropped
            semantics = provider.capabilities.normalized_scores
            if outcome.complete is not None:
                completers[order] = outcome.complete
            for rank, item in enumerate(outcome.items, start=1):
                rows.append((record, rank, order, item, semantics, entry["providerId"]))
            entry["hint"] = outcome.hint
            entry["branchHidden"] = outcome.dropped
            sources.append(entry)
        federated = len({r[5] for r in rows}) > 1 or len({self._provider_id(r) for r in selected}) > 1
        # by score, not by what found a row (module doc); across providers by tier, then by rank
        if federated:
            tier = {"high": 0, "medium": 1, "unknown": 1, "low": 2}
            rows.sort(key=lambda r: (tier[quality_policy.decide(r[3].score, r[4], config).tier]
                                     if _finite_or_none(r[3].score) else 2, -1 / (RRF_K + r[1]), r[2]))
        else:
            rows.sort(key=lambda r: (-(r[3].score if r[3].score is not None and _finite(r[3].score) else 0.0), r[2]))
        auto = quality is None and getattr(self, "quality_auto", False)
        # recallPolicy auto (module doc of mnemon_ls.settings): semantic recall ran here, or a provider's own
        # vectors found something (Mem0's ``mem0-vector``)
        if auto and (self._semantic_ready() or any(meaning_only(r[3]) for r in rows)):
            config = replace(config, policy="balanced-v1")
            chosen = quality_policy.plan(count, config)
        selection = quality_policy.select([(r[3].score, r[4]) for r in rows], count, config, chosen)
        picked = selection.indexes
        withheld: list[int] = []
        if withholds:  # the same selection without the low rows outside the head
            withheld = [i for i in picked if withheld_from_assistant(rows[i][3], selection.decisions[i])]
            kept = [i for i in range(len(rows)) if not withheld_from_assistant(rows[i][3], selection.decisions[i])]
            if withheld:
                narrowed = quality_policy.select([(rows[i][3].score, rows[i][4]) for i in kept], count, config, chosen)
                picked = [kept[j] for j in narrowed.indexes]
                selection = replace(selection, indexes=picked, policy_id=narrowed.policy_id,
                                    fallback_from=narrowed.fallback_from, retains=narrowed.retains)
        if withholds:  # what a policy that drops low rows left out is not sent either: say so too
            withheld_count = len(withheld) + _dropped_low(selection, [*picked, *withheld], count)
        else:
            withheld_count = len(withheld)
        results = []
        times: dict[str, tuple[str | None, str | None]] = {}
        shown, lost = _complete(rows, picked[:MAX_RESULTS], completers)
        for order, exc in lost.items():  # its store went away (or stayed busy) after its search: it failed
            sources[order].update(status="unavailable", hint=exc.message, stats=None)
            sources[order].pop("branchHidden", None)
        for index in shown:
            record, rank, _order, item, _sem, provider_id = rows[index]
            decision = selection.decisions[index]
            results.append(self._result(record, item, decision, provider_id, scope,
                                        1 / (RRF_K + rank) if federated else None))
            if item.updated_at is not None or item.accessed_at is not None:
                times[f"{record.id}/{item.id}"] = (item.updated_at, item.accessed_at)
        if results and getattr(self, "secrets", "redact") != "allow":  # what another program stored (.foreign)
            from .foreign import redact_results  # the pass itself is loaded already (.service's Scrubber)

            notices.extend(redact_results(results))
        for entry in sources:
            if entry.get("stats", 0) is None:
                continue
            mine = [i for i, r in enumerate(rows) if r[0].id == entry["spaceId"]]
            decisions = selection.decisions
            stats = {
                "policyId": selection.policy_id, "fallbackFrom": selection.fallback_from,
                "fetched": len(mine),
                "retained": sum(1 for i in mine if selection.retains(decisions[i])),
                # what was sent: an item forgotten since its search (left out by _complete) is not counted
                "selected": sum(1 for i in shown if rows[i][0].id == entry["spaceId"]),
                "droppedLowScore": sum(1 for i in mine if decisions[i].reason == "low-score"
                                       and not selection.retains(decisions[i])),
                "droppedNonPositiveScore": sum(1 for i in mine if decisions[i].reason == "non-positive-score"
                                               and not selection.retains(decisions[i])),
                "droppedInvalidScore": sum(1 for i in mine if not decisions[i].valid),
                "unscored": sum(1 for i in mine if decisions[i].reason == "unscored"),
                "unscaled": sum(1 for i in mine if decisions[i].reason == "unscaled-score"),
                "branchHidden": entry.pop("branchHidden", 0),
                "withheld": sum(1 for i in withheld if rows[i][0].id == entry["spaceId"]),
            }
            entry["stats"] = stats
            entry["status"] = "ready" if stats["retained"] else "empty"
        # a repair now, or a damaged copy kept by one before (once per registry), a file of a newer version: taken
        # after every step that may hand the recall to a worker thread on an event loop (mnemon_ls.nowait)
        notices[:0] = self.registry.recall_notice_lines()
        data = {
            "query": text, "mode": mode, "limit": count, "candidateLimit": chosen.candidate_limit,
            "policy": {"id": selection.policy_id, "fallbackFrom": selection.fallback_from,
                       "setting": "auto" if auto else config.policy},
            "results": results, "sources": sources, "hidden": hidden,
            "branch": {"name": scope.branch, "recall": branch_recall, "detachedHeadPolicy": detached_head_policy},
            "truncated": max(0, len(picked) - MAX_RESULTS),
            "hint": None if results else ("no active space" if not selected else WITHHELD_HINT if withheld_count
                                          else _branch_hint(hidden) if _branch_hid_all(rows, picked, hidden)
                                          else _policy_hint(rows, selection, audience) if rows
                                          else _failed_hint(sources)),
            "notices": notices,
            "audience": audience, "withheld": {"lowConfidence": withheld_count},
            # an active space that could not answer (its engine failed, timed out, or is not installed) is named
            "failed": [s["spaceId"] for s in sources if s["status"] in ("unavailable", "unsupported")],
        }
        for entry in sources:
            if entry["status"] in ("unavailable", "unsupported"):
                notices.append(f"space {entry['spaceName']} ({entry['spaceId']}) failed: {entry.get('hint')}")
        return RecallResult(data, times)

    def _provider_id(self, record: SpaceRecord) -> str:
        if not record.native:
            return record.provider_id
        return "mnemon-cli" if self.native_driver == "cli" else NATIVE_PROVIDER

    def _semantic_ready(self) -> bool:
        """Whether semantic recall ran for this process: the engine's backend is loaded (``recallPolicy``
        ``auto`` then means ``balanced-v1``)."""
        engine = getattr(self, "semantic", None)
        return engine is not None and engine.state == "ready"

    @staticmethod
    def _result(record: SpaceRecord, item: Item, decision: quality_policy.Decision, provider_id: str,
                scope: "_BranchScope", federated: float | None) -> dict[str, Any]:
        branches = branch_tags(item.tags)
        data: dict[str, Any] = {
            "spaceId": record.id, "spaceName": record.name, "providerId": provider_id, "id": item.id,
            "content": item.content, "score": item.score, "normalizedScore": decision.normalized,
            "tier": decision.tier, "category": item.category, "importance": item.importance,
            "tags": list(item.tags), "entities": list(item.entities), "source": item.source,
            "createdAt": item.created_at, "matchedVia": item.matched_via, "branches": branches,
        }
        if item.similarity is not None:
            data["similarity"] = dict(item.similarity)
        label = scope.label(branches)
        if label:
            data["branchLabel"] = label
        if federated is not None:
            data["federatedScore"] = round(federated, 6)
        return data

    # ------------------------------------------------------------------ wake cover

    def cover(self, budget_chars: int = 1200, recall_hint: str = "mnemon/recall") -> SpacesCover:
        """The bounded Memory Spaces block of the wake snapshot (:func:`mnemon_ls.spaces.cover.render`), native
        spaces counted through their providers (no third-party engine is opened for a wake)."""
        state = self.state()
        notices = [p.message for p in self.registry.notices]

        def count(record: SpaceRecord) -> int | None:
            try:
                return self.provider(record).count()
            except MnemonError:
                return None

        return render_cover(state.all, notices, count, budget_chars, recall_hint, unreadable_reason(state))


class _BranchScope:
    """The branch rule of one recall (module doc)."""

    def __init__(self, branch: str | None, mode: str, detached: str) -> None:
        self.branch = branch
        self.mode = mode
        self.detached = detached

    @property
    def filters(self) -> bool:
        """True when some branch-tagged items are dropped."""
        if self.mode == "off":
            return False
        return self.branch is not None and self.mode == "filter" or self.branch is None and self.detached == "hide"

    def keep(self, tags: Sequence[str]) -> bool:
        branches = branch_tags(tags)
        if not branches:
            return True
        if self.branch is None:
            return self.detached == "show"
        return self.branch in branches or self.mode != "filter"

    def label(self, branches: list[str]) -> str | None:
        if self.mode == "off" or not branches:
            return None
        if self.branch is None:
            return "branch-unknown"
        return None if self.branch in branches else "other-branch"


#: ``matchedVia`` values of an item found by meaning alone (no word of the query): the native provider's
#: vector-only hits (``vector``) and a vector engine's (``<engine>-vector``, e.g. ``mem0-vector``).
MEANING_ONLY_VIA = "vector"


def meaning_only_via(via: str | None) -> bool:
    """Whether a ``matchedVia`` value says found by meaning alone: ``vector`` or ``<engine>-vector``
    (``keyword+vector``, ``mem0-keyword+vector``, ``keyword``, ``holographic``, ``entity``, ... and ``None``
    are word matches or unknown). The one rule of ranking (:func:`meaning_only`) and of the text label
    (:func:`mnemon_ls.ops.humantext.recall_match_label`)."""
    via = via or ""
    return via == MEANING_ONLY_VIA or via.endswith("-" + MEANING_ONLY_VIA)


def meaning_only(item: Item) -> bool:
    """Whether ``item`` was found by meaning alone (:func:`meaning_only_via` of its ``matched_via``); such
    items rank after the word matches."""
    return meaning_only_via(item.matched_via)


def withheld_from_assistant(item: Item, decision: quality_policy.Decision) -> bool:
    """Whether an ``assistant`` audience is not sent ``item``: its tier is ``low`` (a weak similarity, a match
    on only a name or one common word, a score under the low threshold) and it is not in the ranking's head
    (:attr:`~mnemon_ls.spaces.policy.Decision.head`: close to a best result that is not low). Whatever found
    it, words or meaning (issue 27 item 8: by the ranking's evidence, not by match kind); an item the policy
    calls ``unknown`` (an unscaled score, whose confidence is not known) is sent."""
    return decision.valid and decision.tier == "low" and not decision.head


#: The hint of an assistant's recall whose every selected result was withheld.
WITHHELD_HINT = "nothing matched with enough confidence"


def _failed_hint(sources: list[dict[str, Any]]) -> str:
    """The hint of a recall that found nothing: ``nothing matched``, unless spaces it asked could not answer
    (their engine failed or timed out: the notices say why), which an empty answer must not hide."""
    failed = sum(1 for s in sources if s["status"] in ("unavailable", "unsupported"))
    if not failed:
        return "nothing matched"
    if failed == len(sources):
        return ("no space could answer: the one asked failed" if failed == 1
                else f"no space could answer: all {failed} asked failed") + " (the notes say why)"
    return f"nothing matched in the spaces that answered; {failed} of {len(sources)} failed (the notes say why)"


def _branch_hid_all(rows: list[tuple], picked: list[int], hidden: dict[str, int]) -> bool:
    """Whether a recall with no result owes it to branch scope alone: it hid some items (``hidden``, the
    counts of the answer) and the quality policy left nothing out (no row found, or every row ``picked``:
    those a space lost since its search)."""
    return bool(hidden["otherBranch"] or hidden["detachedHead"]) and len(picked) >= len(rows)


def _branch_hint(hidden: dict[str, int]) -> str:
    """The hint of a recall whose only matches branch scope hid (:func:`_branch_hid_all`): the branch reason,
    not the quality policy's (``its only match is scoped to another git branch``)."""
    count = hidden["otherBranch"] or hidden["detachedHead"]
    matches = "its only match is" if count == 1 else "its only matches are"
    if hidden["otherBranch"]:
        return f"{matches} scoped to another git branch (branchRecall: label lists {'it' if count == 1 else 'them'})"
    return f"{matches} scoped to a git branch, and there is no current branch"


#: The policies that leave ``low`` rows out (outside the head); ``balanced-v1`` and ``exhaustive-v1`` list them.
DROPPING_LOW = ("strict-v1", "strict-v2")


def _dropped_low(selection: Any, picked: list[int], count: int) -> int:
    """How many ``low`` rows (scored low: a weak similarity, a name or one common word alone) a policy of
    :data:`DROPPING_LOW` left out, at most as many as the answer had room for (``count`` less the rows
    ``picked``: those sent and those already withheld): the ones an assistant is told were withheld
    (``withheld.lowConfidence``), as ``balanced-v1`` tells the low rows it would have listed. ``0`` under any
    other policy."""
    if selection.policy_id not in DROPPING_LOW:
        return 0
    chosen = set(picked)
    dropped = sum(1 for index, decision in enumerate(selection.decisions)
                  if index not in chosen and decision.valid and decision.reason == "low-score")
    return max(0, min(dropped, count - len(picked)))


def _policy_hint(rows: list[tuple], selection: Any, audience: str = "person") -> str:
    """The hint of a recall whose every row the policy left out; to a person it says how many scored low (weak
    matches: found by meaning alone with a weak similarity, or by a name or one common word alone) and how to
    list them (an assistant is told how many were withheld instead: :func:`_dropped_low`)."""
    weak = sum(1 for decision in selection.decisions if decision.reason == "low-score" and decision.valid)
    if not weak or selection.policy_id not in DROPPING_LOW or audience == "assistant":
        # balanced-v1 lists every low row
        return "no result passed the quality policy"
    words = f"{weak} weak match{'es' if weak != 1 else ''}"
    return (f"no result passed the quality policy ({words}, labelled low: recallPolicy balanced-v1 lists them, "
            "MNEMON_RECALL_POLICY=balanced-v1 for one command)")


def _complete(rows: list[tuple], indexes: list[int], completers: dict[int, Callable[[Sequence[Item]], list[Item]]]
              ) -> tuple[list[int], dict[int, MnemonError]]:
    """``(sent, failed)``: ``indexes`` (rows to send) with the partial items among them completed
    (:attr:`SearchOutcome.complete` of their space, one call per space, in place), a row whose item is gone since
    its search left out; ``failed``: ``{space order: error}`` of the spaces whose completion raised a
    :class:`MnemonError` (the store deleted, replaced by an unreadable file or kept busy since the search), whose
    rows are left out as a space that could not answer is."""
    wanted: dict[int, list[Item]] = {}
    for index in indexes:
        if rows[index][2] in completers:
            wanted.setdefault(rows[index][2], []).append(rows[index][3])
    if not wanted:
        return indexes, {}
    done: set[int] = set()
    failed: dict[int, MnemonError] = {}
    for order, items in wanted.items():
        try:
            done.update(id(item) for item in completers[order](items))
        except MnemonError as exc:
            failed[order] = exc
    return [i for i in indexes if rows[i][2] not in completers or id(rows[i][3]) in done], failed


def _finite(value: float) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))


def _finite_or_none(value: Any) -> bool:
    """Whether ``value`` is ``None`` or a finite number (a row the policy can decide on)."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value))

