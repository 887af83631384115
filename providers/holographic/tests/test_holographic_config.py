"""Configuring the Holographic provider (real CLI subprocesses, the real engine where one is opened): each
field is checked against the provider's own schema when it is configured, not first at enable or test (an
attack pass got ``defaultTrust=abc`` saved), with an error naming the provider's field and the rule and
nothing written; an unknown field lists the provider's fields (not the core's); ``--set field=`` clears a
field back to its default; ``--secret`` takes only credential fields (Holographic has none)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces import SpacesService
from provider_cli import cli


def test_a_bad_value_is_refused_at_configure_naming_the_field_and_the_rule(tmp_path: Path) -> None:
    done = cli(tmp_path, "provider", "configure", "holographic", "--set", "defaultTrust=abc")
    assert done.returncode == 2, done.stderr
    assert done.stderr == 'mnemon-ls: error: services.defaultTrust: must be a number between 0 and 1 (got "abc")\n'
    assert not (tmp_path / "data").exists()
    unknown = cli(tmp_path, "provider", "configure", "holographic", "--set", "endpoint=http://127.0.0.1:9/")
    assert unknown.returncode == 2
    assert unknown.stderr == ("mnemon-ls: error: services.endpoint: is not a Holographic service field (dataPath, "
                              "enginePath, defaultTrust, minTrust)\n")
    plain = cli(tmp_path, "provider", "configure", "holographic", "--secret", "dataPath", stdin="/tmp/x.db\n")
    assert plain.returncode == 2
    assert plain.stderr == ("mnemon-ls: error: services.dataPath: is not a credential field of Holographic "
                            "(--secret takes only: none); give a plain field with --set dataPath=VALUE\n")
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("fields, field, rule", [
    ({"minTrust": "1.5"}, "minTrust", 'must be a number between 0 and 1 (got "1.5")'),
    ({"minTrust": -0.1}, "minTrust", 'must be a number between 0 and 1 (got "-0.1")'),
    ({"defaultTrust": "nan"}, "defaultTrust", 'must be a number between 0 and 1 (got "nan")'),
    ({"defaultTrust": True}, "defaultTrust", 'must be a number between 0 and 1 (got "True")'),
    ({"apiKey": "x"}, "apiKey", "is not a Holographic service field (dataPath, enginePath, defaultTrust, minTrust)"),
    ({"enginePath": "relative/dir"}, "enginePath", "must be an absolute path or start with ~/ (empty: the "
                                                   "provider's default) (got \"relative/dir\")"),
    ({"dataPath": "~"}, "dataPath", "must name a file, not a directory (empty: the provider's default) "
                                    '(got "~")'),
])
def test_every_field_rule_holds_at_configure_and_at_enable_of_an_enabled_provider(
        tmp_path: Path, fields: dict, field: str, rule: str) -> None:
    root = tmp_path / "root"
    service = SpacesService(root)
    for call in (lambda: service.thirdparty.configure("holographic", fields),
                 lambda: service.thirdparty.enable("holographic", fields)):
        with pytest.raises(InvalidInput) as refused:
            call()
        assert (refused.value.field, refused.value.rule) == (f"services.{field}", rule)
    assert not (root / "state").exists()


def test_an_empty_value_clears_a_field_and_numbers_are_stored_as_numbers(tmp_path: Path) -> None:
    assert cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=0.2", "--set",
               "defaultTrust=0.7").returncode == 0
    providers = tmp_path / "data" / "state" / "memory-providers.json"
    assert json.loads(providers.read_text())["services"]["holographic"] == {"minTrust": 0.2, "defaultTrust": 0.7}
    cleared = cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=")
    assert cleared.returncode == 0, cleared.stderr
    assert "fields: defaultTrust" in cleared.stdout and "minTrust" not in cleared.stdout
    assert json.loads(providers.read_text())["services"]["holographic"] == {"defaultTrust": 0.7}


def test_disable_then_enable_gives_a_renamed_bank_its_name_back(tmp_path: Path, hermes_db: Path) -> None:
    service = SpacesService(tmp_path / "root")
    service.thirdparty.enable("holographic", {"dataPath": str(hermes_db)})
    [project] = [v.record for v in service.list_spaces() if v.record.external_id == "project"]
    service.update_space(project.id, name="Atlas", description="how Project Atlas ships")
    service.thirdparty.disable("holographic")
    assert service.list_spaces() == []
    service.thirdparty.enable("holographic")
    names = {v.record.external_id: (v.record.id, v.record.name, v.record.description) for v in service.list_spaces()}
    assert names["project"] == (project.id, "Atlas", "how Project Atlas ships")
    assert names["user_pref"][1] == "user_pref"
    service.close()


def test_the_language_server_checks_the_same_field_rules_and_refuses_what_it_would_ignore(
        tmp_path: Path, private_home: Path) -> None:
    from lspclient import Server

    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    server = Server(dict(os.environ, HOME=str(private_home)), folder)
    try:
        server.initialize(folder)
        bad = server.call("mnemon/providers/configure", {"providerId": "holographic",
                                                         "services": {"defaultTrust": "abc"}})["error"]
        assert (bad["data"]["code"], bad["data"]["field"]) == ("invalid-input", "services.defaultTrust")
        assert bad["message"] == 'services.defaultTrust: must be a number between 0 and 1 (got "abc")'
        ignored = server.call("mnemon/providers/enable", {"providerId": "holographic", "clearSecrets": ["apiKey"]})
        assert ignored["error"]["data"]["field"] == "clearSecrets", ignored
        assert not (private_home / ".mnemon").exists() or not list((private_home / ".mnemon").rglob("memory-providers.json"))
        done = server.call("mnemon/providers/configure", {"providerId": "holographic",
                                                          "services": {"minTrust": "0.25", "defaultTrust": None}})
        assert done["result"]["configuredFields"] == ["minTrust"], done
    finally:
        server.close()


def test_secret_of_a_field_the_provider_does_not_have_lists_its_fields(tmp_path: Path) -> None:
    done = cli(tmp_path, "provider", "configure", "holographic", "--secret", "apiKey", stdin="sk-x\n")
    assert done.returncode == 2
    assert done.stderr == ("mnemon-ls: error: services.apiKey: is not a Holographic service field (dataPath, "
                           "enginePath, defaultTrust, minTrust)\n")
    assert not (tmp_path / "data").exists()


def test_min_trust_at_or_above_default_trust_is_refused_at_configure_and_enable(tmp_path: Path) -> None:
    done = cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=0.9", "--set", "defaultTrust=0.5")
    assert done.returncode == 2
    assert done.stderr.startswith("mnemon-ls: error: services.minTrust: must be below defaultTrust (0.5) (got 0.9)")
    assert not (tmp_path / "data").exists()
    root = tmp_path / "root"
    service = SpacesService(root)
    service.thirdparty.configure("holographic", {"defaultTrust": "0.6"})
    before = (root / "state" / "memory-providers.json").read_bytes()
    for call in (lambda: service.thirdparty.configure("holographic", {"minTrust": "0.6"}),  # against the stored one
                 lambda: service.thirdparty.enable("holographic", {"defaultTrust": "0.2"}),  # against minTrust's default
                 lambda: service.thirdparty.configure("holographic", {"defaultTrust": "", "minTrust": "0.5"})):
        with pytest.raises(InvalidInput) as refused:
            call()
        assert refused.value.data["field"] == "services.minTrust" and "must be below defaultTrust" in refused.value.rule
    assert (root / "state" / "memory-providers.json").read_bytes() == before
    assert service.thirdparty.configure("holographic", {"minTrust": "0.4"})["configured"]


def test_cli_configure_of_a_mapped_data_path_needs_force_and_prints_where_items_stay(tmp_path: Path,
                                                                                    hermes_db: Path) -> None:
    assert cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}").returncode == 0
    elsewhere = tmp_path / "new" / "store.db"
    refused = cli(tmp_path, "provider", "configure", "holographic", "--set", f"dataPath={elsewhere}")
    assert refused.returncode == 3 and "--force" in refused.stderr, refused.stderr
    assert f"space project now reads {elsewhere}; its 2 items stay in {hermes_db}" in refused.stderr
    moved = cli(tmp_path, "provider", "configure", "holographic", "--set", f"dataPath={elsewhere}", "--force")
    assert moved.returncode == 0, moved.stderr
    assert f"warning: space user_pref now reads {elsewhere}; its 1 item stays in {hermes_db}" in moved.stdout.splitlines()


@pytest.mark.parametrize("bad, kind", [(True, "true/false"), ("0.1", "text"), (False, "true/false")])
def test_a_hand_edited_trust_of_the_wrong_json_type_is_damage_never_read_as_a_number(
        tmp_path: Path, hermes_db: Path, bad: object, kind: str) -> None:
    assert cli(tmp_path, "provider", "configure", "holographic", "--set", f"dataPath={hermes_db}", "--set",
               "minTrust=0.2").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    doc = json.loads(path.read_text())
    doc["services"]["holographic"]["minTrust"] = bad  # a hand edit: true was read as 1, "0.1" as 0.1
    path.write_text(json.dumps(doc, indent=2) + "\n")
    damaged = path.read_bytes()
    reason = (f"services.holographic.minTrust: must be a JSON number, not {kind} (Holographic's rule: must be a "
              f"number between 0 and 1) (got {json.dumps(bad)})")
    doctor = cli(tmp_path, "doctor")
    [line] = [x for x in doctor.stdout.splitlines() if "memory-providers.json" in x and "damaged" in x]
    assert f"a damaged memory-providers.json ({reason}) was rebuilt" in line, doctor.stdout
    [kept] = (tmp_path / "data" / "state" / "quarantine").iterdir()
    assert kept.read_bytes() == damaged
    # the other fields survive the repair; the wrong-typed one is not salvaged as anything
    assert json.loads(path.read_text())["services"]["holographic"] == {"dataPath": str(hermes_db)}
    service = SpacesService(tmp_path / "data")
    assert service.thirdparty.enable("holographic")["enabled"]
    engine_view = service.thirdparty.test("holographic")
    assert engine_view["ok"], engine_view
    service.close()


def test_recall_notes_name_a_wrong_typed_connection_field_of_a_space(tmp_path: Path, hermes_db: Path,
                                                                      private_home: Path) -> None:
    assert cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    doc = json.loads(path.read_text())
    doc["bodies"][0]["connection"]["minTrust"] = True  # a memory-scope field has its declared type too
    path.write_text(json.dumps(doc, indent=2) + "\n")
    done = cli(tmp_path, "recall", "Atlas")
    assert done.returncode == 0, done.stderr
    assert ("bodies[0].connection.minTrust: must be a JSON number, not true/false (Holographic's rule: must be a "
            "number between 0 and 1) (got true)") in done.stdout + done.stderr


def test_enable_gives_a_bank_whose_name_looks_like_a_space_a_numbered_name(tmp_path: Path, hermes_db: Path) -> None:
    made = cli(tmp_path, "space", "create", "--name", "pr\u043eject", "--description", "Cyrillic o", "--json")
    assert made.returncode == 0, made.stderr
    native = json.loads(made.stdout)["id"]
    done = cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}")
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("renamed: namespace project")]
    assert "is space 'project (2)'" in line and f"space pr\u043eject ({native}) keeps 'project'" in line, line
    listed = json.loads(cli(tmp_path, "space", "list", "--json").stdout)
    names = {s["name"] for s in (listed["spaces"] if isinstance(listed, dict) else listed)}
    assert names == {"pr\u043eject", "project (2)", "user_pref"}
