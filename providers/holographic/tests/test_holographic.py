"""mnemon-ls spaces on the real Holographic engine of hermes-agent (no mocks): configuration errors,
discovery of existing banks, remember/recall (English and Chinese)/forget, capability gating, and a
provider that hangs mid-recall while the other spaces still answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import facts
from mnemon_ls.errors import InvalidInput, ProviderNotConfigured, ProviderUnavailable, SpaceRefused
from mnemon_ls.spaces import SpacesService
from mnemon_ls.spaces.policy import RecallQuality
from mnemon_ls_provider_holographic.engine import load_engine, recall_score


def _service(root: Path, **kw) -> SpacesService:
    return SpacesService(root, **kw)


def test_installed_but_not_configured_is_a_clear_error_and_writes_nothing(tmp_path: Path, hermes_db: Path) -> None:
    service = _service(tmp_path / "root")
    [view] = [v for v in service.thirdparty.list() if v["providerId"] == "holographic"]
    assert (view["installed"], view["configured"], view["enabled"], view["usable"]) == (True, False, False, False)
    assert view["capabilities"]["link"] is False and view["capabilities"]["delete"] == "hard"
    for call in (lambda: service.thirdparty.test("holographic"), lambda: service.thirdparty.discover("holographic"),
                 lambda: service.create_space("Notes", "notes", provider="holographic")):
        with pytest.raises(ProviderNotConfigured) as refused:
            call()
        assert refused.value.data["reason"] == "not-configured" and "`mnemon-ls provider enable holographic` for this workspace" in refused.value.message
    assert not (tmp_path / "root" / "state").exists()


def test_engine_that_fails_to_open_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    service = _service(root)
    service.thirdparty.configure("holographic", {"minTrust": 0.2})
    before = (root / "state" / "memory-providers.json").read_bytes()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a SQLite database at all" * 100)
    with pytest.raises(ProviderUnavailable) as failed:
        service.thirdparty.enable("holographic", {"dataPath": str(garbage)})
    assert failed.value.data["reason"] == "engine-failed" and str(garbage) in failed.value.message
    with pytest.raises(ProviderUnavailable) as missing:
        service.thirdparty.enable("holographic", {"enginePath": str(tmp_path / "no-hermes-here")})
    assert missing.value.data["reason"] == "engine-missing" and "pip install --no-deps hermes-agent" in missing.value.message
    with pytest.raises(InvalidInput) as bad:
        service.thirdparty.enable("holographic", {"minTrust": "2"})
    assert bad.value.data["field"] == "services.minTrust"
    assert (root / "state" / "memory-providers.json").read_bytes() == before
    assert garbage.read_bytes() == b"this is not a SQLite database at all" * 100


def test_enable_discovers_the_existing_banks_and_disable_keeps_the_facts(tmp_path: Path, hermes_db: Path) -> None:
    root = tmp_path / "root"
    service = _service(root)
    enabled = service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    assert enabled["health"]["ok"] and enabled["health"]["items"] == 3 and enabled["enabled"]
    views = {v.record.name: v.to_dict() for v in service.list_spaces()}
    assert set(views) == {"project", "user_pref"}
    project = views["project"]
    assert project["providerId"] == "holographic" and project["kind"] == "third-party" and project["available"]
    assert project["location"] == {"externalId": "project", "connectionFields": ["bankId"]}
    assert project["capabilities"]["link"] is False and project["capabilities"]["related"] is True
    tested = service.thirdparty.test("holographic")
    assert {(n["externalId"], n["items"]) for n in tested["namespaces"]} == {("project", 2), ("user_pref", 1)}
    before = facts(hermes_db)
    service.thirdparty.disable("holographic")
    assert service.list_spaces() == [] and facts(hermes_db) == before
    stored = (root / "state" / "memory-providers.json").read_text()
    assert '"holographic"' in stored and str(hermes_db) in stored  # the configuration stays
    service.close()


def test_remember_recall_forget_in_english_and_chinese(tmp_path: Path, hermes_db: Path) -> None:
    service = _service(tmp_path / "root")
    service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    space = service.create_space("Team Notes", "What the team decided", active=True, provider="holographic").to_dict()
    assert space["location"]["externalId"] == "team_notes" and space["active"]
    english = service.remember("Rollbacks need approval from the release captain", space_id=space["id"],
                               tags=["release"]).to_dict()
    chinese = service.remember("回滚阈值是百分之五，超过就自动回滚", space_id=space["id"]).to_dict()
    assert english["status"] == chinese["status"] == "committed"
    # a Hermes Agent reading the same file sees the facts in the bank
    assert (int(english["id"]), "Rollbacks need approval from the release captain", "team_notes") in facts(hermes_db)
    again = service.remember("Rollbacks need approval from the release captain", space_id=space["id"]).to_dict()
    assert again["status"] == "skipped" and again["duplicateOf"] == english["id"]
    found = service.recall("release captain approval", spaces=[space["id"]]).to_dict()
    assert [r["id"] for r in found["results"]] == [english["id"]]
    assert found["results"][0]["tags"] == ["release"] and found["results"][0]["tier"] in ("medium", "high")
    found = service.recall("回滚阈值", spaces=[space["id"]]).to_dict()
    assert [r["id"] for r in found["results"]] == [chinese["id"]]
    assert found["results"][0]["providerId"] == "holographic"
    gone = service.forget(space["id"], chinese["id"]).to_dict()
    assert gone["status"] == "committed" and "hard delete" in gone["message"]
    assert all(row[0] != int(chinese["id"]) for row in facts(hermes_db))
    assert service.recall("回滚阈值", spaces=[space["id"]]).to_dict()["results"] == []
    with pytest.raises(InvalidInput) as twice:
        service.forget(space["id"], chinese["id"])
    assert twice.value.data["field"] == "id"
    service.close()


def test_capabilities_gate_link_and_merge_and_related_uses_entities(tmp_path: Path, hermes_db: Path) -> None:
    service = _service(tmp_path / "root")
    service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    [project] = [v.record for v in service.list_spaces() if v.record.name == "project"]
    service.activate(project.id)
    native = service.create_space("Native", "native", active=True).record.id
    with pytest.raises(SpaceRefused) as link:
        service.link(project.id, "2", "3")
    assert link.value.data["reason"] == "link"
    with pytest.raises(SpaceRefused):
        service.merge([project.id], native)
    related = service.related(project.id, "2")
    assert [i["id"] for i in related["items"]] == ["3"]  # both facts name the entity "Project Atlas"
    assert related["items"][0]["matchedVia"] == "entity"
    service.close()


HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("UPDATE facts SET tags = tags WHERE 0")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def test_a_provider_that_hangs_mid_recall_is_isolated(tmp_path: Path, hermes_db: Path) -> None:
    service = _service(tmp_path / "root", provider_timeout=0.5)
    service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    [project] = [v.record for v in service.list_spaces() if v.record.name == "project"]
    service.activate(project.id)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("Blue Green switching is documented in the runbook", space_id=native)
    assert {r["spaceId"] for r in service.recall("Blue Green switching").to_dict()["results"]} == {native, project.id}
    service.close()  # the next recall opens the engine again, while another process holds the database
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(hermes_db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = service.recall("Blue Green switching").to_dict()
        assert [r["spaceId"] for r in result["results"]] == [native]
        status = {s["spaceId"]: s for s in result["sources"]}
        assert status[native]["status"] == "ready"
        assert status[project.id]["status"] == "unavailable" and status[project.id]["error"] == "provider-timeout"
        assert "500 ms" in status[project.id]["hint"]
        assert result["failed"] == [project.id]
        assert any(project.id in note and "failed" in note for note in result["notices"])
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    service.close()


def test_reconfiguring_an_enabled_provider_reopens_it_for_the_same_service(tmp_path: Path, hermes_db: Path) -> None:
    service = _service(tmp_path / "root")
    service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    [project] = [v.record for v in service.list_spaces() if v.record.name == "project"]
    service.activate(project.id)
    assert service.recall("Redis sessions").to_dict()["results"][0]["id"] == "3"
    # above every stored fact's trust (0.5); new facts (defaultTrust) stay recallable
    service.thirdparty.configure("holographic", {"minTrust": 0.9, "defaultTrust": 0.95})
    assert service.recall("Redis sessions").to_dict()["results"] == []
    service.thirdparty.configure("holographic", {"minTrust": 0.1})
    assert [r["id"] for r in service.recall("Redis sessions").to_dict()["results"]] == ["3"]
    service.close()


def test_trust_decides_the_tier_around_the_default_trust_in_english_and_chinese(tmp_path: Path) -> None:
    """A literal word hit at the default trust keeps the tier of its relevance (strict-v1 keeps it, where the
    engine's relevance x trust put the second of two hits under the low floor); Hermes' own feedback on the
    same file then moves the tier: ``unhelpful`` (0.5 -> 0.4) halves the score, ``helpful`` raises it."""
    db = tmp_path / "hermes" / "memory_store.db"
    service = _service(tmp_path / "root")
    service.thirdparty.enable("holographic", {"dataPath": str(db)})
    space = service.create_space("Ops", "operations", active=True, provider="holographic").record.id
    remember = lambda text: service.remember(text, space_id=space).to_dict()["id"]  # noqa: E731
    short = remember("Kubernetes runs the staging cluster")
    long = remember("The quarterly maintenance window covers the database, the load balancers, the message "
                    "queue and the Kubernetes control plane upgrades")
    zh_a = remember("发布流水线在每周二运行")
    zh_b = remember("每周二的发布需要值班工程师批准，周五不发布")

    def recall(query: str, policy: str = "strict-v1") -> dict[str, tuple[float, str]]:
        found = service.recall(query, spaces=[space], quality=RecallQuality(policy=policy)).to_dict()["results"]
        return {r["id"]: (r["score"], r["tier"]) for r in found}

    hermes = load_engine().store.MemoryStore(db_path=str(db))  # a Hermes Agent on the same file
    relevance = {str(r["fact_id"]): r["score"] / r["trust_score"]
                 for r in load_engine().retrieval.FactRetriever(hermes).search("Kubernetes", category="ops")}
    english = recall("Kubernetes")
    assert list(english) == [short, long]  # both hold the word; the second used to score 0.19 and be dropped
    assert english[long] == (pytest.approx(relevance[long]), "medium")  # default trust: the score is the relevance
    assert english[short][0] == pytest.approx(relevance[short])
    assert recall("发布") == {zh_a: (1.0, "high"), zh_b: (1.0, "high")}  # every query bigram held

    assert hermes.record_feedback(int(long), helpful=False)["new_trust"] == pytest.approx(0.4)
    assert hermes.record_feedback(int(zh_b), helpful=False)["new_trust"] == pytest.approx(0.4)
    assert hermes.record_feedback(int(short), helpful=True)["new_trust"] == pytest.approx(0.55)
    english = recall("Kubernetes")
    assert list(english) == [short]  # the unhelpful fact fell to the low tier, which strict-v1 drops
    assert english[short] == (pytest.approx(relevance[short] + (1 - relevance[short]) * 0.1), "high")
    balanced = recall("Kubernetes", "balanced-v1")
    assert list(balanced) == [short, long] and balanced[long] == (pytest.approx(relevance[long] / 2), "low")
    assert recall("发布") == {zh_a: (1.0, "high"), zh_b: (pytest.approx(0.5), "medium")}
    assert list(recall("发布")) == [zh_a, zh_b]
    hermes.close()
    service.close()


def test_recall_score_edges() -> None:
    """The mapping at its edges: full trust is 1, minTrust is 0, a default trust of 1 or a minTrust at or
    above the default leave nothing to scale."""
    assert recall_score(0.4, 1.0, default_trust=0.5, min_trust=0.3) == 1.0
    assert recall_score(0.4, 0.3, default_trust=0.5, min_trust=0.3) == 0.0
    assert recall_score(0.4, 0.75, default_trust=0.5, min_trust=0.3) == pytest.approx(0.7)
    assert recall_score(0.4, 0.2, default_trust=0.5, min_trust=0.0) == pytest.approx(0.16)
    assert recall_score(0.4, 1.0, default_trust=1.0, min_trust=0.3) == 0.4
    assert recall_score(0.4, 0.4, default_trust=0.5, min_trust=0.5) == 0.0
    assert recall_score(1.7, 0.5, default_trust=0.5, min_trust=0.3) == 1.0


def test_moving_the_data_path_of_a_mapped_provider_needs_force_and_warns(tmp_path: Path, hermes_db: Path) -> None:
    """Changing dataPath of an enabled provider whose banks are mapped would point each space at another
    (here empty) store: refused, nothing written; with force the receipt says where the items stay."""
    from mnemon_ls.errors import ConfirmationRequired

    root = tmp_path / "root"
    service = _service(root)
    service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    before = (root / "state" / "memory-providers.json").read_bytes()
    elsewhere = tmp_path / "other" / "memory_store.db"
    with pytest.raises(ConfirmationRequired) as refused:
        service.thirdparty.configure("holographic", {"dataPath": str(elsewhere)})
    assert refused.value.data["field"] == "services.dataPath"
    assert (root / "state" / "memory-providers.json").read_bytes() == before
    moved = service.thirdparty.configure("holographic", {"dataPath": str(elsewhere)}, force=True)
    assert sorted(moved["warnings"]) == [f"space project now reads {elsewhere}; its 2 items stay in {hermes_db}",
                                         f"space user_pref now reads {elsewhere}; its 1 item stays in {hermes_db}"]
    assert str(elsewhere) in (root / "state" / "memory-providers.json").read_text()
    # a change of a field that is not a path needs no force and warns of nothing
    assert "warnings" not in service.thirdparty.configure("holographic", {"minTrust": 0.2})
    service.close()
