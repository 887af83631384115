"""The space directory on real files (reference dsh-mnemon.md 6.1-6.3, cases 57, 58, 62-64, 74): formats,
discovery, id rules, damaged registries quarantined and rebuilt, the third-party plane and its credentials."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces import SpacesService
from mnemon_ls.spaces.registry import SpaceRegistry

from tests.conftest import FrozenClock

SECRET = "sk-live-VERY-SECRET-0123456789"


def make_store(root: Path, name: str) -> Path:
    path = root / "data" / name / "mnemon.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE insights (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at TEXT NOT NULL, "
                   "updated_at TEXT NOT NULL, deleted_at TEXT)")
    db.close()
    return path


def test_empty_data_dir_lists_nothing_and_writes_nothing(root: Path, clock: FrozenClock) -> None:
    (root / "data").mkdir()
    service = SpacesService(root, clock=clock)
    assert service.list_spaces() == []
    assert sorted(p.name for p in root.rglob("*")) == ["data"]


def test_existing_store_is_discovered_in_place(root: Path, clock: FrozenClock) -> None:
    db = make_store(root, "project")
    (root / "data" / "not a store").mkdir()
    (root / "data" / "empty").mkdir()
    before = db.read_bytes()
    service = SpacesService(root, clock=clock, effective_store="project")
    spaces = [v.to_dict() for v in service.list_spaces()]
    assert [(s["id"], s["name"], s["active"], s["description"]) for s in spaces] == [
        ("project", "project", True, "Existing Mnemon Store discovered on disk.")]
    assert db.read_bytes() == before
    registry = json.loads((root / "data" / ".dsh-memory-bodies.json").read_text())
    assert registry == {"version": 1, "bodies": [{
        "id": "project", "name": "project", "description": "Existing Mnemon Store discovered on disk.",
        "active": True, "createdAt": "2026-09-15T08:00:00.000Z", "updatedAt": "2026-09-15T08:00:00.000Z"}]}
    text = (root / "data" / ".dsh-memory-bodies.json").read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "version": 1,')
    assert oct((root / "data" / ".dsh-memory-bodies.json").stat().st_mode & 0o777) == "0o600"


def test_discovery_activates_the_effective_store_only_after_the_first(root: Path, clock: FrozenClock) -> None:
    for name in ("alpha", "beta", "gamma"):
        make_store(root, name)
    (root / "active").write_text("gamma\n")
    spaces = SpacesService(root, clock=clock).list_spaces()
    assert [(v.record.id, v.record.active) for v in spaces] == [("alpha", True), ("beta", False), ("gamma", True)]


def test_first_native_space_is_default_then_uuids(root: Path, clock: FrozenClock) -> None:
    service = SpacesService(root, clock=clock)
    first = service.create_space("Project", "Decisions and conventions of this repository")
    second = service.create_space("Personal", "Preferences of the user")
    assert first.record.id == "default" and first.record.active is False
    assert len(second.record.id) == 36 and second.record.id.count("-") == 4
    assert (root / "data" / "default" / "mnemon.db").is_file()
    with sqlite3.connect(root / "data" / "default" / "mnemon.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    db.close()
    with pytest.raises(InvalidInput) as bad:
        service.create_space("", "x")
    assert bad.value.field == "name"
    with pytest.raises(InvalidInput) as long_name:
        service.create_space("n" * 101, "x")
    assert long_name.value.field == "name"


def test_existing_store_dirs_make_the_first_create_a_uuid(root: Path, clock: FrozenClock) -> None:
    make_store(root, "work")
    created = SpacesService(root, clock=clock).create_space("New", "A new space")
    assert created.record.id != "default"


def test_updated_at_is_strictly_monotonic(root: Path, clock: FrozenClock) -> None:
    service = SpacesService(root, clock=clock)
    space = service.create_space("A", "first")
    one = service.update_space(space.record.id, description="second").record.updated_at
    two = service.activate(space.record.id).record.updated_at
    three = service.deactivate(space.record.id).record.updated_at
    assert (space.record.created_at, one, two, three) == (
        "2026-09-15T08:00:00.000Z", "2026-09-15T08:00:00.001Z", "2026-09-15T08:00:00.002Z", "2026-09-15T08:00:00.003Z")


@pytest.mark.parametrize("damage", [
    b'{"version": 1, "bodies": [{"id": "keep", "name": "Kept", "description": "d", "active": true, '
    b'"createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}, {"id": "trunc',
    b'{"version": 0, "bodies": [{"id": "keep", "name": "Kept", "description": "d", "active": true, '
    b'"createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}]}',
    b'{"version": 1, "bodies": [{"id": "keep", "name": "Kept", "description": "d", "active": true, '
    b'"createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}, {"id": "../bad"}]}',
], ids=["truncated", "wrong-version", "bad-body"])
def test_damaged_registry_is_quarantined_and_rebuilt(root: Path, clock: FrozenClock, damage: bytes) -> None:
    make_store(root, "keep")
    make_store(root, "other")
    registry_path = root / "data" / ".dsh-memory-bodies.json"
    registry_path.write_bytes(damage)
    service = SpacesService(root, clock=clock)
    spaces = {v.record.id: v.record for v in service.list_spaces()}
    assert spaces["keep"].name == "Kept" and spaces["keep"].active is True  # salvaged, not reset
    assert spaces["other"].description == "Existing Mnemon Store discovered on disk."
    [problem] = service.notices()
    quarantined = Path(problem["quarantined"])
    assert quarantined.parent == root / "data" / ".quarantine"
    assert quarantined.read_bytes() == damage
    assert problem["recovered"] == 1 and "damaged" in problem["message"]
    assert json.loads(registry_path.read_text())["version"] == 1
    assert "rebuilt" in service.cover(2000).notices[0]


def test_last_good_copy_restores_spaces_the_damage_hid(root: Path, clock: FrozenClock) -> None:
    make_store(root, "named")
    service = SpacesService(root, clock=clock)
    service.list_spaces()
    service.update_space("named", name="Carefully named", description="Kept through damage")
    (root / "data" / ".dsh-memory-bodies.json").write_bytes(b"\x00\x01garbage")
    fresh = SpacesService(root, clock=clock)
    [record] = [v.record for v in fresh.list_spaces()]
    assert (record.name, record.description) == ("Carefully named", "Kept through damage")


def test_a_damaged_entry_of_a_space_takes_what_it_lost_from_the_last_good_copy(root: Path, clock: FrozenClock) -> None:
    """A catalog entry that keeps its id but lost a field (a hand edit gave the name a number) was salvaged
    with the defaults: the space came back named after its id, "Existing Mnemon Store discovered on disk."
    and inactive, and the rewrite replaced the last-good copy, so its name, routing description and active
    flag were gone for good. The fields the damage broke come from the last-good copy; those it kept stay."""
    make_store(root, "named")
    service = SpacesService(root, clock=clock)
    service.list_spaces()
    service.update_space("named", name="Carefully named", description="Kept through damage")
    service.activate("named")
    path = root / "data" / ".dsh-memory-bodies.json"
    doc = json.loads(path.read_text())
    doc["bodies"][0]["name"] = 5
    doc["bodies"][0]["description"] = "Edited by hand just before"
    path.write_text(json.dumps(doc))
    fresh = SpacesService(root, clock=clock)
    [record] = [v.record for v in fresh.list_spaces()]
    assert (record.name, record.description, record.active) == ("Carefully named", "Edited by hand just before", True)
    [problem] = fresh.notices()
    assert json.loads(Path(problem["quarantined"]).read_text())["bodies"][0]["name"] == 5


def test_providers_file_is_0600_and_never_echoes_credentials(root: Path, clock: FrozenClock,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    service = SpacesService(root, clock=clock)
    view = service.configure_provider("honcho", {"endpoint": "https://api.example.test/v1", "apiKey": SECRET},
                                      enabled=True)
    assert view == {"providerId": "honcho", "label": "Honcho", "enabled": True, "configured": True, "configuredFields": ["endpoint"],
                    "configuredSecrets": ["apiKey"], "spaces": 0}
    path = root / "state" / "memory-providers.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    stored = json.loads(path.read_text())
    assert stored["version"] == 4 and stored["services"]["honcho"]["apiKey"] == SECRET
    service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "project-x", "connection": {"project": "x"}}])
    texts = [json.dumps(service.provider_services()), json.dumps([v.to_dict() for v in service.list_spaces()])]
    for bad in ({"endpoint": f"https://user:{SECRET}@host/"}, {"apiKey": 12, "token": SECRET}, {"secret": SECRET}):
        with pytest.raises(InvalidInput) as refused:
            service.configure_provider("honcho", bad)
        texts.append(json.dumps(refused.value.to_dict()))
        texts.append(str(refused.value))
    third = [v.record for v in service.list_spaces() if not v.record.native][0]
    service.activate(third.id)
    result = service.recall("anything")
    texts.append(json.dumps(result.to_dict()))
    assert result.to_dict()["sources"][0]["status"] == "unsupported"
    texts.extend(r.getMessage() for r in caplog.records)
    assert not any(SECRET in text for text in texts)
    # keeping the secret when only other fields change; clearing it on request
    service.configure_provider("honcho", {"mode": "cloud"})
    assert json.loads(path.read_text())["services"]["honcho"]["apiKey"] == SECRET
    service.configure_provider("honcho", clear_secrets=["apiKey"])
    assert "apiKey" not in json.loads(path.read_text())["services"]["honcho"]


def test_disabling_a_provider_drops_its_projections_and_keeps_the_service(root: Path, clock: FrozenClock) -> None:
    registry = SpaceRegistry(root, clock=clock)
    registry.provider_plane.configure_service("hindsight", {"endpoint": "http://127.0.0.1:8888"}, enabled=True)
    made = registry.provider_plane.sync_namespaces("hindsight", [{"externalId": "bank-a", "connection": {"bankId": "a"}},
                                                  {"externalId": "bank-b", "name": "Team bank"}])
    assert [(r.id[:10], r.name) for r in made] == [("hindsight-", "a"), ("hindsight-", "Team bank")]
    registry.provider_plane.configure_service("hindsight", enabled=False)
    stored = json.loads((root / "state" / "memory-providers.json").read_text())
    assert stored["bodies"] == [] and stored["services"]["hindsight"] == {"endpoint": "http://127.0.0.1:8888"}
    registry.provider_plane.configure_service("hindsight", enabled=True)
    again = registry.provider_plane.sync_namespaces("hindsight", [{"externalId": "bank-a", "connection": {"bankId": "a"}}])
    assert again[0].id == made[0].id
    assert [r.id for r in registry.read().provider_bodies] == [made[0].id]


def test_rediscovery_removes_vanished_and_keeps_user_names(root: Path, clock: FrozenClock) -> None:
    registry = SpaceRegistry(root, clock=clock)
    registry.provider_plane.configure_service("honcho", {}, enabled=True)
    first = registry.provider_plane.sync_namespaces("honcho", [{"externalId": "ws/one", "name": "One"},
                                                {"externalId": "ws/two", "name": "Two"}])
    registry.update(first[0].id, name="My renamed one")
    registry.update(first[0].id, active=True)
    second = registry.provider_plane.sync_namespaces("honcho", [{"externalId": "ws/one", "name": "One (provider)"}])
    assert [(r.id, r.name, r.active, r.created_at, r.metadata_source) for r in second] == [
        (first[0].id, "My renamed one", True, first[0].created_at, "manual")]
    with pytest.raises(InvalidInput) as repeated:
        registry.provider_plane.sync_namespaces("honcho", [{"externalId": "x"}, {"externalId": "x"}])
    assert repeated.value.field == "discovered[1].externalId"


def test_metadata_batch_with_one_invalid_item_applies_nothing(root: Path, clock: FrozenClock) -> None:
    service = SpacesService(root, clock=clock)
    a = service.create_space("A", "first space").record.id
    b = service.create_space("B", "second space").record.id
    before = (root / "data" / ".dsh-memory-bodies.json").read_bytes()
    for batch, field in (
        ([{"id": a, "title": "Alpha", "description": "The alpha space"}, {"id": b, "title": "", "description": "x"}],
         "items[1].title"),
        ([{"id": a, "title": "Alpha", "description": "The alpha space"}, {"id": "ghost", "title": "G",
                                                                           "description": "no such space"}],
         "items[1].id"),
        ([{"id": a, "title": "Alpha", "description": "d1"}, {"id": a, "title": "Again", "description": "d2"}],
         "items[1].id"),
    ):
        with pytest.raises(InvalidInput) as refused:
            service.registry.update_metadata_batch(batch)
        assert refused.value.field == field
        assert (root / "data" / ".dsh-memory-bodies.json").read_bytes() == before
    done = service.registry.update_metadata_batch([{"id": a, "title": "Alpha", "description": "The alpha space"}])
    assert (done[0].name, done[0].description) == ("Alpha", "The alpha space")


@pytest.mark.parametrize("uri, ok", [
    ("viking://user/memories", True), ("viking://user/alice/memories/", True),
    ("viking://resources/x", False), ("viking://user/alice/notes", False), ("https://x/memories", False),
    ("viking://user/alice/memories/team", True), ("viking://user/alice/memories/team/2026", True),
    ("viking://user/alice/memories/../x", False), ("viking://user/alice/memories/./x", False),
    ("viking://user/alice/memories/a b", False),
])
def test_openviking_target_must_be_a_user_memories_root(root: Path, clock: FrozenClock, uri: str, ok: bool) -> None:
    registry = SpaceRegistry(root, clock=clock)
    registry.provider_plane.configure_service("openviking", {"endpoint": "http://127.0.0.1:1933"}, enabled=True)
    if ok:
        [made] = registry.provider_plane.sync_namespaces("openviking", [{"externalId": uri, "connection": {"targetUri": uri}}])
        assert made.connection["targetUri"] == uri.rstrip("/")
    else:
        with pytest.raises(InvalidInput) as refused:
            registry.provider_plane.sync_namespaces("openviking", [{"externalId": uri, "connection": {"targetUri": uri}}])
        assert refused.value.field == "discovered[0].connection.targetUri"
        assert not (root / "state" / "memory-providers.json").read_text().count("bodies\": [{")


def test_provider_registry_v3_migrates_service_fields(root: Path, clock: FrozenClock) -> None:
    (root / "state").mkdir()
    (root / "state" / "memory-providers.json").write_text(json.dumps({
        "version": 3, "services": {}, "enabled": {"mem0": True},
        "bodies": [{"id": "mem0-abc", "name": "M", "description": "d", "active": True, "providerId": "mem0",
                    "connection": {"endpoint": "https://m.example/", "userId": "u1"},
                    "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}]}))
    state = SpaceRegistry(root, clock=clock).read()
    assert dict(state.services) == {"mem0": {"endpoint": "https://m.example/"}}
    assert state.provider_bodies[0].connection == {"userId": "u1"}


def test_damaged_providers_file_is_quarantined_with_its_services(root: Path, clock: FrozenClock) -> None:
    (root / "state").mkdir()
    damaged = ('{"version": 4, "services": {"mem0": {"apiKey": "' + SECRET + '"}}, "enabled": {"mem0": true}, '
               '"bodies": [{"id": "mem0-1", "name": "M", "description": "d", "active": true, "providerId": "mem0", '
               '"connection": {}, "createdAt": "x", "updatedAt": "x"}, {"id": "mem0-2", "na')
    (root / "state" / "memory-providers.json").write_text(damaged)
    service = SpacesService(root, clock=clock)
    assert [v.record.id for v in service.list_spaces()] == ["mem0-1"]
    [problem] = service.notices()
    assert Path(problem["quarantined"]).parent == root / "state" / "quarantine"
    assert oct(Path(problem["quarantined"]).stat().st_mode & 0o777) == "0o600"
    assert SECRET not in json.dumps(problem)
    assert json.loads((root / "state" / "memory-providers.json").read_text())["services"]["mem0"]["apiKey"] == SECRET


def test_registry_dirs_and_files_modes(root: Path, clock: FrozenClock) -> None:
    SpacesService(root, clock=clock).create_space("A", "a")
    assert oct(os.stat(root / "data").st_mode & 0o777) == "0o700"
    assert oct(os.stat(root / "data" / "default").st_mode & 0o777) == "0o700"
    assert oct(os.stat(root / "state" / ".dsh-memory-bodies.last-good.json").st_mode & 0o777) == "0o600"
