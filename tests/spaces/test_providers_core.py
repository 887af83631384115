"""The provider plane without any provider package: entry point lookup, configuration rules, the
timeout that isolates a slow provider, and recall over a space whose provider is not installed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderNotConfigured, ProviderTimedOut
from mnemon_ls.spaces import SpacesService, plugins
from mnemon_ls.spaces.thirdparty import call_with_timeout


def test_a_provider_that_is_not_installed_names_no_package_that_does_not_exist() -> None:
    with pytest.raises(ProviderNotConfigured) as missing:
        plugins.load("honcho")
    assert missing.value.data == {"provider": "honcho", "reason": "not-installed"}
    assert "no mnemon-ls package provides it" in missing.value.message
    assert "mnemon-ls-provider-honcho" not in missing.value.message


@pytest.mark.parametrize("url", ["https://user:pw@honcho.example.test/v1", "https://honcho.example.test/v1?api_key=sk-1",
                                 "https://honcho.example.test/?x=1&token=abc", "ftp://honcho.example.test/",
                                 "https://honcho.example.test/v1#api_key=sk-1", "https://honcho.example.test/v1#frag",
                                 "https://honcho.example.test/v1?API%2DKey=sk-1"])
def test_an_endpoint_holding_a_credential_is_refused_and_nothing_is_written(tmp_path: Path, url: str) -> None:
    service = SpacesService(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.configure_provider("honcho", {"endpoint": url})
    assert refused.value.data["field"] == "services.endpoint"
    assert "pw" not in refused.value.message and "sk-1" not in refused.value.message
    assert not (tmp_path / "state" / "memory-providers.json").exists()


def test_installed_check_comes_before_any_write(tmp_path: Path) -> None:
    service = SpacesService(tmp_path)
    for call in (lambda: service.thirdparty.enable("honcho"), lambda: service.thirdparty.configure("honcho", {}),
                 lambda: service.thirdparty.test("honcho")):
        with pytest.raises(ProviderNotConfigured) as refused:
            call()
        assert refused.value.data["reason"] == "not-installed"
    assert not (tmp_path / "state").exists()
    [view] = [v for v in service.thirdparty.list() if v["providerId"] == "honcho"]
    assert (view["installed"], view["usable"], view["capabilities"], view["kind"]) == (False, False, None, "remote")


def test_call_with_timeout_gives_up_and_the_late_answer_is_dropped() -> None:
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(ProviderTimedOut) as slow:
        call_with_timeout(lambda: release.wait(30), 0.2, provider="honcho", space_id="honcho-1")
    assert time.monotonic() - started < 10
    assert slow.value.data == {"provider": "honcho", "spaceId": "honcho-1", "timeoutMs": 200}
    release.set()
    assert call_with_timeout(lambda: 42, 5, provider="honcho") == 42
    with pytest.raises(KeyError):
        call_with_timeout(lambda: {}["missing"], 5, provider="honcho")


def test_a_space_of_a_provider_that_is_not_installed_is_unsupported_in_recall(tmp_path: Path) -> None:
    service = SpacesService(tmp_path)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("the native space still answers", space_id=native)
    service.configure_provider("honcho", {}, enabled=True)
    [other] = service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "peer-1"}])
    service.activate(other.id)
    result = service.recall("native space answers").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native]
    status = {s["spaceId"]: s for s in result["sources"]}
    assert status[other.id]["status"] == "unsupported" and "not installed" in status[other.id]["hint"]
    assert result["failed"] == [other.id]  # docs/providers.md: a provider that cannot answer is named (`failed`)
    assert any(n.startswith(f"space {other.name} ({other.id}) failed: ") for n in result["notices"])
    assert service.get_space(other.id).to_dict()["available"] is False
    # an empty answer says when spaces it asked could not answer, not just "nothing matched"
    assert service.recall("zebra crossing").to_dict()["hint"] == \
        "nothing matched in the spaces that answered; 1 of 2 failed (the notes say why)"
    assert service.recall("zebra crossing", spaces=[other.id]).to_dict()["hint"] == \
        "no space could answer: the one asked failed (the notes say why)"
    service.deactivate(native)
    assert service.recall("native space answers").to_dict()["hint"] == \
        "no space could answer: the one asked failed (the notes say why)"
    service.close()


@pytest.mark.parametrize("value, rule", [
    ("https://user:pw@example.com/x", "credential"),
    ("/tmp/x?api_key=abc", "credential"),
    ("a\x01b", "control characters"),
])
def test_plain_fields_refuse_credentials_and_control_characters(value: str, rule: str) -> None:
    """An attack pass stored dataPath=https://user:pw@... in plain text in memory-providers.json."""
    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.spaces.provider_fields import validate_service_fields

    with pytest.raises(InvalidInput) as info:
        validate_service_fields({"dataPath": value}, "holographic")
    assert info.value.field == "services.dataPath" and rule in info.value.rule
    assert value not in info.value.message


def test_engine_plugin_imports_its_engine_only_when_opened() -> None:
    plugin = plugins.EnginePlugin(provider_id="sample", label="Sample", kind="local",
                                  capabilities=plugins.Capabilities(), service_fields=("dataPath",), memory_fields=(),
                                  secret_fields=frozenset(), engine="collections:OrderedDict.fromkeys")
    assert plugin.open({"dataPath": "/x"}, root=Path("/r")) == {"dataPath": None}
    with pytest.raises(AttributeError):
        plugins.EnginePlugin(**{**{f: getattr(plugin, f) for f in plugin.__slots__}, "engine": "collections:Nope"}).opener()


def test_provider_packages_declare_engine_plugins_that_import_no_engine() -> None:
    import subprocess
    import sys

    for provider_id, engine_module in (("holographic", "mnemon_ls_provider_holographic.engine"),
                                       ("mem0", "mnemon_ls_provider_mem0.engine")):
        if provider_id not in plugins.installed():
            continue
        done = subprocess.run([sys.executable, "-c", "import sys; from mnemon_ls.spaces import plugins; "
                               f"p = plugins.load({provider_id!r}); print(type(p).__name__, {engine_module!r} in "
                               "sys.modules, 'mem0' in sys.modules, 'qdrant_client' in sys.modules)"],
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.split() == ["EnginePlugin", "False", "False", "False"], done.stderr


def test_a_call_that_timed_out_is_tracked_until_its_thread_ends() -> None:
    """The process entry point ends the process itself while such a call runs (thirdparty.end_process)."""
    from mnemon_ls.spaces.thirdparty import abandoned_calls, end_process

    release = threading.Event()
    with pytest.raises(ProviderTimedOut):
        call_with_timeout(lambda: release.wait(30), 0.05, provider="slow-test")
    assert abandoned_calls() == ["provider-slow-test"]
    release.set()
    for thread in [t for t in threading.enumerate() if t.name == "provider-slow-test"]:
        thread.join(10)
    assert abandoned_calls() == []
    assert end_process(3) == 3  # nothing left running: the interpreter ends as usual


def test_a_space_keeps_its_user_given_name_across_disable_and_enable(tmp_path: Path) -> None:
    """Disabling removes the mappings; re-enabling rediscovered the namespace under a default name."""
    import json

    service = SpacesService(tmp_path)
    service.configure_provider("honcho", {}, enabled=True)
    renamed, plain = service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "peer-1"}, {"externalId": "peer-2"}])
    service.update_space(renamed.id, name="Team decisions", description="what the team agreed")
    service.configure_provider("honcho", {}, enabled=False)
    doc = json.loads((tmp_path / "state" / "memory-providers.json").read_text())
    assert doc["bodies"] == [] and service.list_spaces() == []  # no mapping is left
    assert doc["disabledSpaces"] == [{"providerId": "honcho", "externalId": "peer-1", "name": "Team decisions",
                                      "description": "what the team agreed", "metadataSource": "manual",
                                      "active": False}]
    service.configure_provider("honcho", {}, enabled=True)
    again = {r.external_id: r for r in service.registry.provider_plane.sync_namespaces(
        "honcho", [{"externalId": "peer-1", "name": "peer one"}, {"externalId": "peer-2"}])}
    assert (again["peer-1"].id, again["peer-1"].name, again["peer-1"].description, again["peer-1"].metadata_source) \
        == (renamed.id, "Team decisions", "what the team agreed", "manual")
    assert (again["peer-2"].name, again["peer-2"].metadata_source) == (plain.name, "provider")
    assert "disabledSpaces" not in json.loads((tmp_path / "state" / "memory-providers.json").read_text())
    service.close()


def test_enable_gives_a_namespace_a_free_name_and_id_and_the_spaces_made_meanwhile_keep_theirs(tmp_path: Path) -> None:
    """While a provider is disabled its names and ids are free: spaces made then keep them when it is enabled
    again, and its own spaces get the next free name (``"<name> (2)"``) and a re-hashed id, said in
    ``renamed``. A namespace new to the registry never takes the name of one already mapped."""
    import json

    from mnemon_ls.spaces.naming import name_key

    service = SpacesService(tmp_path)
    service.configure_provider("honcho", {}, enabled=True)
    peer1, peer2 = service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "peer-1"},
                                                               {"externalId": "peer-2", "name": "Team"}])
    service.update_space(peer1.id, name="Decisions", description="what the team agreed")
    service.activate(peer1.id)
    service.configure_provider("honcho", {}, enabled=False)
    native_decisions = service.create_space("ｄｅｃｉｓｉｏｎｓ", "mine, made while honcho was off").record
    native_team = service.create_space(peer2.id.upper(), "named like a honcho space id").record
    service.configure_provider("honcho", {}, enabled=True)
    renamed: list = []
    spaces = {r.external_id: r for r in service.registry.provider_plane.sync_namespaces(
        "honcho", [{"externalId": "peer-1"}, {"externalId": "peer-2", "name": "team"},
                   {"externalId": "peer-3", "name": "Team"}], renamed=renamed)}
    assert (native_decisions.name, service.get_space("decisions").record.id) == ("decisions", native_decisions.id)
    assert service.get_space(peer2.id).record.id == native_team.id  # the id a person typed names their space
    assert (spaces["peer-1"].name, spaces["peer-1"].active, spaces["peer-1"].id) == ("Decisions (2)", True, peer1.id)
    assert spaces["peer-2"].name == "team" and spaces["peer-2"].id != peer2.id
    assert spaces["peer-3"].name == "Team (2)"  # "team" is peer-2's: a new namespace takes the next name
    assert [(r["externalId"], r.get("wantedName"), r.get("wantedId"), [t["spaceId"] for t in r["takenBy"]])
            for r in renamed] == [("peer-1", "Decisions", None, [native_decisions.id]),
                                  ("peer-2", None, peer2.id, [native_team.id]),
                                  ("peer-3", "Team", None, [spaces["peer-2"].id])]
    keys = [k for v in service.list_spaces() for k in {name_key(v.record.id), name_key(v.record.name)}]
    assert len(keys) == len(set(keys)) == 10  # five spaces, no id or name shared
    stored = json.loads((tmp_path / "state" / "memory-providers.json").read_text())
    assert sorted(b["name"] for b in stored["bodies"]) == ["Decisions (2)", "Team (2)", "team"]
    again: list = []
    service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "peer-1"}, {"externalId": "peer-2", "name": "team"},
                                                {"externalId": "peer-3", "name": "Team"}], renamed=again)
    assert again == []  # the names stay, and a re-sync has nothing new to say
    service.close()


def test_an_installed_provider_with_a_new_id_keeps_its_configuration(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A provider package may bring an id outside the reference's list (``postgres``): its service fields and
    enabled flag are read back, not dropped (the file was deleted on the next write)."""
    from importlib import metadata

    from mnemon_ls.spaces.registry import SpaceRegistry

    entry = metadata.EntryPoint(name="acme", value="mnemon_ls.spaces.plugins:EnginePlugin", group="mnemon_ls.providers")
    monkeypatch.setattr(plugins, "_entry_points", {"acme": entry})
    registry = SpaceRegistry(tmp_path)
    registry.provider_plane.configure_service("acme", {"endpoint": "https://acme.example"}, enabled=True)
    fresh = SpaceRegistry(tmp_path).read()
    assert fresh.services == {"acme": {"endpoint": "https://acme.example"}} and fresh.enabled == {"acme": True}
    assert (tmp_path / "state" / "memory-providers.json").is_file()
