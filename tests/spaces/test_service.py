"""The Memory Spaces service on the embedded store: activation rules (cases 70, 71), delete rules (60, 61),
recall-quality policies (65-69) and receipt mapping (72), merge accounting (73), branch scope, federation,
the wake cover, and bad input that must be refused without changing a byte."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from mnemon_ls.errors import ConfirmationRequired, InvalidInput
from mnemon_ls.spaces import RecallQuality, SpacesService, receipt_status, register_policy, unregister_policy
from mnemon_ls.spaces.errors import SpaceRefused
from mnemon_ls.spaces.model import Item
from mnemon_ls.spaces.policy import decide, plan, select
from mnemon_ls.spaces.providers.base import Capabilities, SearchOutcome

from tests.conftest import Disk, FrozenClock


@pytest.fixture
def service(root: Path, clock: FrozenClock) -> SpacesService:
    svc = SpacesService(root, clock=clock)
    yield svc
    svc.close()


def two_spaces(service: SpacesService) -> tuple[str, str]:
    a = service.create_space("Project", "Decisions of this repository", active=True).record.id
    b = service.create_space("Personal", "Preferences of the user").record.id
    return a, b


# --------------------------------------------------------------------------- activation (70, 71)


def test_reads_use_active_spaces_and_refuse_inactive_ones(service: SpacesService) -> None:
    a, b = two_spaces(service)
    service.remember("Ship on Thursdays", space_id=a)
    with pytest.raises(InvalidInput) as inactive:
        service.recall("ship", spaces=[a, b])
    assert inactive.value.field == "spaces[1]" and "not active" in inactive.value.rule
    with pytest.raises(InvalidInput) as unknown:
        service.recall("ship", spaces=["ghost"])
    assert unknown.value.field == "spaces[0]"
    with pytest.raises(InvalidInput):
        service.related(b, "x")
    assert service.space_status(b)["space"]["id"] == b  # an inspection: an inactive space too
    assert [r["spaceId"] for r in service.recall("ship").results] == [a]


def test_write_to_inactive_space_activates_it_only_when_committed(service: SpacesService) -> None:
    a, b = two_spaces(service)
    receipt = service.remember("Prefers dark mode", space_id=b, category="preference")
    assert (receipt.status, receipt.activated) == ("committed", True)
    assert service.get_space(b).record.active is True
    service.deactivate(b)
    again = service.remember("Prefers dark mode", space_id=b)
    assert (again.status, again.activated, again.id) == ("skipped", False, receipt.id)
    assert again.to_dict()["duplicateOf"] == receipt.id
    assert service.get_space(b).record.active is False


@pytest.mark.parametrize("active", [0, 2])
def test_write_without_target_needs_exactly_one_active_space(service: SpacesService, active: int) -> None:
    a, b = two_spaces(service)
    service.deactivate(a)
    if active == 2:
        service.activate(a)
        service.activate(b)
    with pytest.raises(InvalidInput) as refused:
        service.remember("Where does this go?")
    assert refused.value.field == "spaceId" and f"{active} spaces are active" in refused.value.rule
    service.deactivate(b)
    service.activate(a)
    assert service.remember("Where does this go?").space_id == a


# --------------------------------------------------------------------------- delete (60, 61)


def test_delete_refuses_the_last_native_store(service: SpacesService, root: Path) -> None:
    only = service.create_space("Only", "The only store").record.id
    with pytest.raises(SpaceRefused):
        service.delete_space(only)
    assert (root / "data" / only / "mnemon.db").exists()


def test_delete_of_the_cli_default_store_repoints_it_first(service: SpacesService, root: Path) -> None:
    a, b = two_spaces(service)
    (root / "active").write_text(f"{a}\n")
    result = service.delete_space(a)
    assert result["deleted"] == a and result["defaultStore"] == b
    assert (root / "active").read_text() == f"{b}\n"
    assert not (root / "data" / a).exists()
    assert [v.record.id for v in service.list_spaces()] == [b]


def test_delete_of_a_space_holding_items_needs_confirm_and_changes_nothing(service: SpacesService, root: Path,
                                                                          disk: Disk) -> None:
    a, b = two_spaces(service)
    service.remember("Ship on Thursdays", space_id=b)
    service.remember("Prefers dark mode", space_id=b)
    service.close()
    before = disk.freeze(root)
    for confirm in (False, "yes", 1):  # only True confirms
        with pytest.raises(ConfirmationRequired) as refused:
            service.delete_space("Personal", confirm=confirm)  # type: ignore[arg-type]
        assert refused.value.data == {"field": "confirm", "spaceId": b, "spaceName": "Personal", "items": 2}
        assert refused.value.message.startswith(f"confirm: space Personal ({b}) holds 2 items; deleting it needs "
                                                "explicit confirmation")
    service.close()
    assert disk.state(root) == before  # the store, the catalog, the CLI's default store: not a byte moved
    assert [v.record.id for v in service.list_spaces()] == [a, b]


def test_a_confirmed_delete_keeps_a_dated_copy_that_opens_with_the_items(service: SpacesService, root: Path,
                                                                        clock: FrozenClock) -> None:
    import sqlite3

    a, b = two_spaces(service)
    kept_id = service.remember("Ship on Thursdays", space_id=b).id
    forgotten = service.remember("Prefers dark mode", space_id=b).id
    service.forget(b, forgotten)  # one live item, one forgotten: both are kept
    result = service.delete_space(b, confirm=True)
    stamp = clock().strftime("%Y%m%dT%H%M%S.") + f"{clock().microsecond // 1000:03d}Z"
    copy = root / "data" / ".deleted" / f"{stamp}-{b}"
    assert (result["deleted"], result["items"], result["keptAt"]) == (b, 1, str(copy))
    assert result["message"] == (f"Deleted space Personal ({b}). Its store was moved to {copy} (to restore it, "
                                 f"move that folder back to {root / 'data' / b}).")
    assert not (root / "data" / b).exists()
    with sqlite3.connect(f"file:{copy / 'mnemon.db'}?mode=ro", uri=True) as db:
        rows = dict(db.execute("SELECT id, deleted_at IS NULL FROM insights").fetchall())
    assert rows == {kept_id: 1, forgotten: 0}
    entry = json.loads((copy.parent / f"{copy.name}.json").read_text())
    assert (entry["id"], entry["name"], entry["description"]) == (b, "Personal", "Preferences of the user")
    assert stat.S_IMODE(copy.stat().st_mode) == 0o700 and stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    service.close()
    again = SpacesService(root, clock=clock)  # a later process: the copy is not a store discovery registers
    try:
        assert [v.record.id for v in again.list_spaces()] == [a]
        assert again.registry.store_dirs() == [a]
    finally:
        again.close()


def test_a_deleted_store_moved_back_is_discovered_with_its_items(service: SpacesService, root: Path,
                                                                clock: FrozenClock) -> None:
    # the restore docs/storage.md describes: move the folder back to data/<id>
    a, b = two_spaces(service)
    service.remember("Ship on Thursdays", space_id=b)
    kept = Path(service.delete_space(b, confirm=True)["keptAt"])
    service.close()
    kept.rename(root / "data" / b)
    restored = {v.record.id: v.record for v in service.list_spaces()}
    assert set(restored) == {a, b} and restored[b].name == b
    service.activate(b)
    assert [r["content"] for r in service.recall("Thursdays", spaces=[b]).to_dict()["results"]] == [
        "Ship on Thursdays"]


def test_delete_of_an_empty_space_needs_no_confirm_and_still_keeps_its_store(service: SpacesService,
                                                                            root: Path) -> None:
    a, b = two_spaces(service)
    result = service.delete_space(b)
    assert result["items"] == 0 and result["keptAt"] is not None
    assert (Path(result["keptAt"]) / "mnemon.db").is_file() and not (root / "data" / b).exists()
    assert [v.record.id for v in service.list_spaces()] == [a]


def test_a_delete_whose_catalog_write_fails_moves_the_store_back(service: SpacesService, root: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from mnemon_ls.errors import StorageFull

    a, b = two_spaces(service)
    service.remember("Ship on Thursdays", space_id=b)
    catalog = (root / "data" / ".dsh-memory-bodies.json").read_bytes()

    def full(*_args: Any, **_kwargs: Any) -> None:
        raise StorageFull(str(root / "data" / ".dsh-memory-bodies.json"), errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(type(service.registry), "write_locked", full)
    with pytest.raises(StorageFull):
        service.delete_space(b, confirm=True)
    monkeypatch.undo()
    assert (root / "data" / b / "mnemon.db").is_file()
    assert (root / "data" / ".dsh-memory-bodies.json").read_bytes() == catalog
    assert list((root / "data" / ".deleted").iterdir()) == []
    assert [v.record.id for v in service.list_spaces()] == [a, b]


# --------------------------------------------------------------------------- policies (65-69) and receipts (72)


def decisions(scores: list[Any], quality: RecallQuality | None = None, limit: int = 10,
              semantics: list[bool] | None = None):
    """The reference's cases 65-69 are strict-v1's (the default before strict-v2: tests/spaces/test_ranking.py)."""
    quality = quality or RecallQuality(policy="strict-v1")
    chosen = plan(limit, quality)
    sem = semantics or [True] * len(scores)
    return chosen, select(list(zip(scores, sem)), limit, quality, chosen)


def test_case_65_limit_two_scores_and_stats(root: Path, clock: FrozenClock) -> None:
    chosen, picked = decisions([0, 0.2, 0.25, 0.6], limit=2)
    assert chosen.candidate_limit == 6
    assert [(i, picked.decisions[i].tier) for i in picked.indexes] == [(3, "high"), (2, "medium")]
    retained = sum(1 for d in picked.decisions if picked.retains(d))
    assert retained == 2
    assert [d.reason for d in picked.decisions] == ["non-positive-score", "low-score", None, None]


def test_case_66_strict_caps_medium_and_unknown() -> None:
    scores = [0.9] + [0.4] * 6 + [None] * 3
    _, picked = decisions(scores)
    tiers = [picked.decisions[i].tier for i in picked.indexes]
    assert tiers == ["high"] + ["medium"] * 4 + ["unknown"] * 2
    assert sum(1 for d in picked.decisions if picked.retains(d)) == 10 and len(picked.indexes) == 7


def test_case_67_boundaries_and_unscaled_providers() -> None:
    scores = [0.6, 0.599, 0.25, 0.249, 0, None, 99, 0.1]
    chosen, picked = decisions(scores, semantics=[True] * 7 + [False])
    assert chosen.candidate_limit == 30
    assert [scores[i] for i in picked.indexes] == [0.6, 0.599, 0.25, None, 99]
    assert picked.decisions[7].tier == "unknown" and picked.decisions[7].reason == "unscaled-score"
    assert decide(float("nan"), True, RecallQuality()).valid is False


def test_case_68_balanced_and_exhaustive() -> None:
    _, balanced = decisions([0.1, 0.8, 0.4], RecallQuality(policy="balanced-v1"), limit=2)
    assert balanced.indexes == [1, 2]
    _, low_kept = decisions([0.1, 0.8, 0], RecallQuality(policy="balanced-v1"), limit=3)
    assert low_kept.indexes == [1, 0]
    _, everything = decisions([0.1, 0.8, 0, None], RecallQuality(policy="exhaustive-v1"), limit=4)
    assert everything.indexes == [0, 1, 2, 3]


def test_case_69_misbehaving_policy_falls_back_to_strict(service: SpacesService) -> None:
    class ZeroCandidates:
        id = "zero-candidates-v1"

        def candidate_limit(self, limit, quality):
            return 0

        def retains(self, decision):
            return True

        def select(self, decisions, limit, quality):
            return list(range(len(decisions)))

    class Greedy(ZeroCandidates):
        id = "greedy-v1"

        def candidate_limit(self, limit, quality):
            return limit

        def select(self, decisions, limit, quality):
            return [0, 0]

    register_policy(ZeroCandidates())
    register_policy(Greedy())
    try:
        with pytest.raises(InvalidInput):
            register_policy(Greedy())
        chosen = plan(2, RecallQuality(policy="zero-candidates-v1"))
        assert (chosen.policy.id, chosen.candidate_limit, chosen.fallback_from) == ("strict-v2", 6, "zero-candidates-v1")
        a = service.create_space("A", "a", active=True).record.id
        service.remember("greedy policies pick twice", space_id=a)
        result = service.recall("greedy policies", quality=RecallQuality(policy="greedy-v1")).to_dict()
        assert result["policy"] == {"id": "strict-v2", "fallbackFrom": "greedy-v1", "setting": "greedy-v1"}
        assert len(result["results"]) == 1
        zero = service.recall("greedy policies", limit=2, quality=RecallQuality(policy="zero-candidates-v1")).to_dict()
        assert (zero["candidateLimit"], zero["policy"]["fallbackFrom"]) == (6, "zero-candidates-v1")
    finally:
        unregister_policy("zero-candidates-v1")
        unregister_policy("greedy-v1")


@pytest.mark.parametrize("raw, status", [
    ({"id": "x", "success": True}, "unknown"), ({"status": "PENDING"}, "accepted"), ({"state": "candidate"}, "candidate"),
    ({"imported": 1, "errors": 1}, "partial"), ({"action": "skipped"}, "unknown"), ({"action": "invalidated"}, "committed"),
    ({"action": "added"}, "committed"), ({"success": False}, "failed"), ({"status": "linked"}, "committed"), ("id", "unknown"),
])
def test_case_72_receipt_mapping(raw: Any, status: str) -> None:
    assert receipt_status(raw) == status


def test_quality_settings_are_validated() -> None:
    assert RecallQuality.from_dict({"policy": "balanced-v1", "maxMediumResults": 2}).max_medium_results == 2
    for bad, field in (({"lowScoreThreshold": 0.7}, "recallQuality.lowScoreThreshold"),
                       ({"candidateMultiplier": 6}, "recallQuality.candidateMultiplier"),
                       ({"policy": "Bad Id"}, "recallQuality.policy"), ({"nope": 1}, "recallQuality.nope")):
        with pytest.raises(InvalidInput) as refused:
            RecallQuality.from_dict(bad)
        assert refused.value.field == field


def test_recall_applies_the_policy_per_space_with_stats(service: SpacesService) -> None:
    a = service.create_space("A", "a", active=True).record.id
    full = service.remember("alpha bravo charlie delta echo", space_id=a).id
    service.remember("alpha bravo charlie", space_id=a)          # 3/5 -> medium
    service.remember("alpha only", space_id=a)                   # 1/5 -> low, dropped
    result = service.recall("alpha bravo charlie delta echo", mode="keyword").to_dict()
    assert [(r["id"] == full, r["tier"]) for r in result["results"]] == [(True, "high"), (False, "medium")]
    stats = result["sources"][0]["stats"]
    assert (stats["fetched"], stats["retained"], stats["selected"], stats["droppedLowScore"]) == (3, 2, 2, 1)
    item = result["results"][0]
    assert set(item) >= {"spaceId", "spaceName", "id", "score", "tier", "category", "importance", "tags", "createdAt"}
    assert (item["spaceId"], item["spaceName"], item["category"], item["importance"]) == (a, "A", "general", 3)


def test_results_are_capped_at_twelve(service: SpacesService) -> None:
    a = service.create_space("A", "a", active=True).record.id
    for i in range(20):
        service.remember(f"quota note number {i}", space_id=a)
    result = service.recall("quota note", limit=50, quality=RecallQuality(policy="exhaustive-v1")).to_dict()
    assert len(result["results"]) == 12 and result["truncated"] == 8 and result["candidateLimit"] == 50


# --------------------------------------------------------------------------- branch scope


@pytest.fixture
def branchy(service: SpacesService) -> dict[str, str]:
    a = service.create_space("A", "a", active=True).record.id
    return {
        "main": service.remember("deploy flag retry policy for main", space_id=a, branch="main").id,
        "feature": service.remember("deploy flag retry policy for the feature", space_id=a, branch="feature/x").id,
        "both": service.remember("deploy flag retry policy shared", space_id=a, tags=["branch:main", "branch:dev"]).id,
        "none": service.remember("deploy flag retry policy everywhere", space_id=a).id,
    }


def ids(result) -> set[str]:
    return {r["id"] for r in result.results}


def test_branch_filter_drops_other_branches(service: SpacesService, branchy: dict[str, str]) -> None:
    on_main = service.recall("deploy flag retry policy", branch="main")
    assert ids(on_main) == {branchy["main"], branchy["both"], branchy["none"]}
    assert on_main.to_dict()["hidden"] == {"otherBranch": 1, "detachedHead": 0}
    on_dev = service.recall("deploy flag retry policy", branch="dev")
    assert ids(on_dev) == {branchy["both"], branchy["none"]}
    labelled = service.recall("deploy flag retry policy", branch="dev", branch_recall="label")
    labels = {r["id"]: r.get("branchLabel") for r in labelled.results}
    assert labels == {branchy["main"]: "other-branch", branchy["feature"]: "other-branch", branchy["both"]: None,
                      branchy["none"]: None}
    off = service.recall("deploy flag retry policy", branch="dev", branch_recall="off")
    assert len(off.results) == 4 and all("branchLabel" not in r for r in off.results)
    feature = [r for r in service.recall("deploy flag feature", branch="feature/x").results
               if r["id"] == branchy["feature"]][0]
    assert feature["branches"] == ["feature/x"] and "branch:feature/x" in feature["tags"]


def test_a_question_answered_on_another_branch_sends_this_branchs_partial_matches_low(
        service: SpacesService) -> None:
    """Issue 27 item 7: on ``main``, "which port does the search service call the ranking sidecar on?" is answered
    by a memory of a feature branch only; ``main``'s memories of the search service share two of the question's
    five groups, and an assistant is sent none of them (a person sees them, ``low``, with the notice)."""
    from mnemon_ls.spaces.querysense import ELSEWHERE_NOTICE

    a = service.create_space("A", "a", active=True).record.id
    service.remember("The search service calls the ranking sidecar on port 7971.", space_id=a, branch="feature/x")
    listens = service.remember("The search service listens on port 8080.", space_id=a, branch="main").id
    deploys = service.remember("Deploys of the search service happen on Tuesdays.", space_id=a).id
    question = "On which port does the search service call the ranking sidecar?"
    sent = service.recall(question, branch="main", audience="assistant").to_dict()
    assert sent["results"] == [] and sent["hint"] == "nothing matched with enough confidence"
    assert sent["withheld"] == {"lowConfidence": 2}  # the two partial matches, low: not sent, and counted
    assert sent["hidden"]["otherBranch"] == 1 and ELSEWHERE_NOTICE in sent["notices"]
    person = service.recall(question, branch="main", quality=RecallQuality(policy="exhaustive-v1")).to_dict()
    assert {r["id"]: r["tier"] for r in person["results"]} == {listens: "low", deploys: "low"}
    # on the feature branch the memory answers it, and on main a question main answers is unchanged
    assert service.recall(question, branch="feature/x").results[0]["content"].endswith("port 7971.")
    answered = service.recall("Which port does the search service listen on?", branch="main",
                              audience="assistant").to_dict()
    assert [r["id"] for r in answered["results"]][:1] == [listens] and ELSEWHERE_NOTICE not in answered["notices"]


def test_a_memory_of_another_branch_one_group_ahead_weakens_nothing(service: SpacesService) -> None:
    """The margin is two groups: a memory of another branch holding one more of the question's groups than
    ``main``'s best leaves ``main``'s matches as they were."""
    from mnemon_ls.spaces.querysense import ELSEWHERE_MARGIN, ELSEWHERE_NOTICE

    assert ELSEWHERE_MARGIN == 2
    a = service.create_space("A", "a", active=True).record.id
    service.remember("The search service calls the ranking sidecar on port 7971.", space_id=a, branch="feature/x")
    on_main = service.remember("The search service calls the ranking sidecar.", space_id=a, branch="main").id
    sent = service.recall("On which port does the search service call the ranking sidecar?", branch="main",
                          audience="assistant").to_dict()
    assert [r["id"] for r in sent["results"]] == [on_main] and ELSEWHERE_NOTICE not in sent["notices"]


def test_unknown_branch_follows_the_detached_head_policy(service: SpacesService, branchy: dict[str, str]) -> None:
    hidden = service.recall("deploy flag retry policy", branch=None)
    assert ids(hidden) == {branchy["none"]}
    assert hidden.to_dict()["hidden"] == {"otherBranch": 0, "detachedHead": 3}
    shown = service.recall("deploy flag retry policy", branch=None, detached_head_policy="show")
    assert len(shown.results) == 4
    assert {r.get("branchLabel") for r in shown.results} == {"branch-unknown", None}


# --------------------------------------------------------------------------- federation


class StaticProvider:
    """A tiny in-memory provider (a real implementation of the provider protocol, for a third-party space)."""

    provider_id = "holographic"
    capabilities = Capabilities(normalized_scores=True)

    def __init__(self, items: list[Item]) -> None:
        self.items = items

    def search(self, query, *, limit, mode="smart", category=None, source=None, intent=None, keep=None):
        return SearchOutcome(self.items[:limit], None, fetched=len(self.items))

    def count(self):
        return len(self.items)

    def close(self):
        pass


def test_federation_across_providers_uses_reciprocal_rank_fusion(service: SpacesService) -> None:
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("cache eviction policy is LRU", space_id=native)
    service.remember("cache eviction runs hourly", space_id=native)
    service.configure_provider("holographic", {}, enabled=True)
    [other] = service.registry.provider_plane.sync_namespaces("holographic", [{"externalId": "notes"}])
    service.activate(other.id)
    service._providers[other.id] = StaticProvider([
        Item("h1", "cache eviction note", score=0.95, created_at="2026-01-01T00:00:00Z"),
        Item("h2", "cache eviction other", score=0.9)])
    result = service.recall("cache eviction").to_dict()
    order = [(r["spaceId"], r["federatedScore"]) for r in result["results"]]
    assert order[0] == (native, round(1 / 61, 6)) and order[1] == (other.id, round(1 / 61, 6))
    assert order[2][1] == order[3][1] == round(1 / 62, 6)
    assert {s["spaceId"]: s["status"] for s in result["sources"]} == {native: "ready", other.id: "ready"}


def test_a_failing_space_is_reported_not_fatal(service: SpacesService, root: Path) -> None:
    good = service.create_space("Good", "good", active=True).record.id
    bad = service.create_space("Bad", "bad", active=True).record.id
    service.remember("the good space answers", space_id=good)
    service.close()
    (root / "data" / bad / "mnemon.db").write_bytes(b"garbage, not sqlite")
    for suffix in ("-wal", "-shm"):
        (root / "data" / bad / f"mnemon.db{suffix}").unlink(missing_ok=True)
    result = service.recall("good space").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [good]
    status = {s["spaceId"]: (s["status"], s.get("hint") or "") for s in result["sources"]}
    assert status[bad][0] == "unavailable" and "not a SQLite database" in status[bad][1]


# --------------------------------------------------------------------------- merge (73)


def test_merge_accounts_for_every_item_then_deactivates(service: SpacesService) -> None:
    target = service.create_space("Target", "t", active=True).record.id
    source = service.create_space("Source", "s", active=True).record.id
    shared = service.remember("both spaces know this", space_id=target).id
    service.remember("both spaces know this", space_id=source)
    a = service.remember("only the source knows A", space_id=source, entities=["Alpha"]).id
    b = service.remember("only the source knows B", space_id=source, entities=["Alpha"]).id
    service.link(source, a, b, edge_type="causal", weight=0.9)
    forgotten = service.remember("forgotten in the source", space_id=source).id
    service.forget(source, forgotten)
    result = service.merge([source], target)
    assert result == {"targetId": target, "status": "committed", "sources": [{
        "spaceId": source, "items": 3, "imported": 2, "updated": 0, "skipped": 1, "errors": 0,
        "status": "committed", "deactivated": True}]}
    assert service.get_space(source).record.active is False
    assert service.space_status(target)["status"]["total_insights"] == 3
    provider = service.provider(service.get_space(source).record)
    assert provider.count() == 3  # the source stays in place
    hits = service.recall("only the source knows", spaces=[target]).results
    assert len(hits) == 2
    [merged_a] = [h["id"] for h in hits if h["content"].endswith("A")]
    walked = service.related(target, merged_a, edge_type="causal")["items"]
    assert [i["content"] for i in walked] == ["only the source knows B"]
    assert shared in {h["id"] for h in service.recall("both spaces know", spaces=[target]).results}
    with pytest.raises(InvalidInput, match="^targetId: must differ from every source space"):  # bad input, not refused
        service.merge([target], target)


# --------------------------------------------------------------------------- cover


def test_cover_names_active_spaces_and_fits_the_budget(service: SpacesService) -> None:
    assert service.cover(500).text == ""
    a = service.create_space("Project", "Decisions and conventions of this repository", active=True).record.id
    service.create_space("Dormant", "inactive space")
    service.remember("one", space_id=a)
    service.remember("two", space_id=a)
    cover = service.cover(1000)
    assert cover.text == (
        "MNEMON MEMORY SPACES\nLong-term memory lives in these active spaces. Before assuming a past decision, "
        "preference or fact is unknown, recall it from them (mnemon/recall).\n"
        f"- Project (id {a}, 2 items): Decisions and conventions of this repository\n")
    assert cover.to_dict()["spaces"] == [{"id": a, "name": "Project", "items": 2}]
    for i in range(5):
        service.create_space(f"Space {i}", "x" * 200, active=True)
    tight = service.cover(600)
    assert len(tight.text) <= 600 and tight.hidden > 0 and tight.text.endswith("more active spaces not shown)\n")
    assert service.cover(50).text == ""


# --------------------------------------------------------------------------- bad input changes nothing


def test_bad_input_is_refused_and_changes_nothing(service: SpacesService, root: Path, disk: Disk) -> None:
    a = service.create_space("A", "a", active=True).record.id
    kept = service.remember("a remembered fact", space_id=a).id
    forgotten = service.remember("a forgotten fact", space_id=a).id
    service.forget(a, forgotten)
    service.close()
    before = disk.freeze(root)
    cases = [
        (lambda: service.recall(""), "query"),
        (lambda: service.recall("   "), "query"),
        (lambda: service.recall("q" * 2001), "query"),
        (lambda: service.recall("fact", limit=0), "limit"),
        (lambda: service.recall("fact", limit=51), "limit"),
        (lambda: service.recall("fact", limit=True), "limit"),
        (lambda: service.recall("fact", spaces=["nope"]), "spaces[0]"),
        (lambda: service.recall("fact", spaces=["a/b"]), "spaces[0]"),
        (lambda: service.recall("fact", spaces=[".."]), "spaces[0]"),
        (lambda: service.recall("fact", spaces=["has space"]), "spaces[0]"),
        (lambda: service.recall("fact", mode="fuzzy"), "mode"),
        (lambda: service.remember("x" * 8001, space_id=a), "content"),
        (lambda: service.remember("数" * 2667, space_id=a), "content"),
        (lambda: service.remember("ok", space_id=a, importance=0), "importance"),
        (lambda: service.remember("ok", space_id=a, importance=6), "importance"),
        (lambda: service.remember("ok", space_id=a, tags=["fine", 3]), "tags[1]"),
        (lambda: service.remember("ok", space_id=a, tags="not-a-list"), "tags"),
        (lambda: service.remember("ok", space_id=a, category="gossip"), "category"),
        (lambda: service.remember("ok", space_id="../etc"), "spaceId"),
        (lambda: service.remember("ok", space_id="ghost"), "spaceId"),
        (lambda: service.link(a, kept, forgotten), "targetId"),
        (lambda: service.link(a, kept, "missing-id"), "targetId"),
        (lambda: service.link(a, "bad/id", kept), "sourceId"),
        (lambda: service.link(a, kept, kept), "targetId"),
        (lambda: service.forget(a, "unknown-id"), "id"),
        (lambda: service.forget(a, forgotten), "id"),
        (lambda: service.forget(a, "has space"), "id"),
        (lambda: service.related(a, "../x"), "id"),
        (lambda: service.related(a, kept, depth=9), "depth"),
    ]
    for call, field in cases:
        with pytest.raises(InvalidInput) as refused:
            call()
        assert refused.value.field == field, (field, refused.value.to_dict())
        assert json.dumps(refused.value.to_dict())
    service.close()
    after = disk.state(root)
    assert after == before
    assert service.remember("x" * 8000, space_id=a).status == "committed"  # the limit itself is fine


def test_branch_scope_on_two_real_git_branches(tmp_path: Path, clock: FrozenClock) -> None:
    """Remember on one branch of a real repository, switch, recall: the branch comes from the git probe."""
    from mnemon_ls.gitstate import probe_branch

    from tests.gitrepo import create_branch, detach, make_repo, switch

    workspace = tmp_path / "ws"
    repo = make_repo(workspace)
    create_branch(repo, "feature/login")
    service = SpacesService(workspace / ".mnemon", clock=clock)
    service.create_space("Project", "p", active=True)
    switch(repo, "feature/login")
    here = probe_branch(workspace).branch
    assert here == "feature/login"
    scoped = service.remember("login tokens are stored in the keychain", branch=here).id
    shared = service.remember("login screens follow the design system").id
    assert {r["id"] for r in service.recall("login", branch=probe_branch(workspace).branch).results} == {scoped, shared}
    switch(repo, "main")
    assert {r["id"] for r in service.recall("login", branch=probe_branch(workspace).branch).results} == {shared}
    detach(repo)
    state = probe_branch(workspace)
    assert state.branch is None
    assert {r["id"] for r in service.recall("login", branch=state.branch).results} == {shared}
    assert len(service.recall("login", branch=state.branch, detached_head_policy="show").results) == 2
