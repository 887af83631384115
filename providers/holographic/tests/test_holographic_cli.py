"""The Holographic provider's bad inputs through ``mnemon-ls provider ...`` subprocesses (the real engine):
an engine that is missing or a store that does not open is a clear error with an exit code, and the
provider file keeps its bytes."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import facts
from provider_cli import cli, tree_state


def test_a_missing_engine_or_a_store_that_does_not_open_changes_nothing(tmp_path: Path) -> None:
    configured = cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=0.2")
    assert configured.returncode == 0, configured.stderr
    providers = tmp_path / "data" / "state" / "memory-providers.json"
    before = providers.read_bytes()
    missing = cli(tmp_path, "provider", "enable", "holographic", "--set", f"enginePath={tmp_path / 'no-hermes'}")
    assert missing.returncode == 1, missing.stderr  # provider-unavailable: "anything else"
    assert missing.stderr.startswith("mnemon-ls: error: provider holographic") and "hermes-agent" in missing.stderr
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a SQLite database" * 200)
    broken = cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={garbage}")
    assert broken.returncode == missing.returncode and str(garbage) in broken.stderr, broken.stderr
    # the stored configuration is intact (no store at the default dataPath yet: the read-only test fails, exit 1)
    untouched = cli(tmp_path, "provider", "test", "holographic")
    assert untouched.returncode == 1 and "no Holographic store there yet" in untouched.stdout, untouched.stdout
    assert providers.read_bytes() == before
    assert garbage.read_bytes() == b"not a SQLite database" * 200
    listed = cli(tmp_path, "provider", "list")
    assert "holographic  configured" in listed.stdout, listed.stdout



def test_a_path_field_inside_a_storage_root_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    assert cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=0.2").returncode == 0
    root = tmp_path / "data"
    # the native store: ROOT/data/default/mnemon.db
    assert cli(tmp_path, "space", "create", "--name", "Main", "--description", "main").returncode == 0
    assert cli(tmp_path, "remember", "--space", "default", "The build uses make").returncode == 0
    assert (root / "data" / "default" / "mnemon.db").is_file()
    inside = [root / "data" / "default" / "mnemon.db", root, root / "new" / "x.db",
              root / "workspaces" / ("0" * 64) / "h.db"]
    before = tree_state(tmp_path)
    for target in inside:
        for field in ("dataPath", "enginePath"):
            for action in ("configure", "enable"):
                done = cli(tmp_path, "provider", action, "holographic", "--set", f"{field}={target}")
                assert done.returncode != 0, (action, field, target, done.stdout)
                assert f"services.{field}" in done.stderr and "storage root" in done.stderr, done.stderr
                assert str(target) not in done.stderr
                assert tree_state(tmp_path) == before
    # a file edited by hand: enable and test refuse it before the engine opens anything
    providers = root / "state" / "memory-providers.json"
    doc = json.loads(providers.read_text())
    doc["services"]["holographic"]["dataPath"] = str(root / "data" / "default" / "mnemon.db")
    providers.write_text(json.dumps(doc))
    before = tree_state(tmp_path)
    for action in ("test", "enable"):
        done = cli(tmp_path, "provider", action, "holographic")
        assert done.returncode != 0 and "services.dataPath" in done.stderr and "storage root" in done.stderr, \
            (action, done.stdout, done.stderr)
        assert tree_state(tmp_path) == before


def test_provider_test_creates_no_store_and_enable_creates_a_private_one(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "deep" / "h.db"
    assert cli(tmp_path, "provider", "configure", "holographic", "--set", f"dataPath={target}").returncode == 0
    before = tree_state(tmp_path)
    tested = cli(tmp_path, "provider", "test", "holographic")
    assert tested.returncode == 1 and tested.stdout.startswith("FAILED") and "writes nothing" in tested.stdout, \
        tested.stdout + tested.stderr
    assert tested.stdout.splitlines()[1] == "recall: not run (the engine is not healthy)"
    as_json = cli(tmp_path, "provider", "test", "holographic", "--json")
    assert as_json.returncode == 1, as_json.stderr  # a failed test fails in --json mode too
    report = json.loads(as_json.stdout)
    assert report["ok"] is False and report["health"]["ok"] is False and report["recall"] is None
    assert not (tmp_path / "elsewhere").exists() and tree_state(tmp_path) == before
    enabled = cli(tmp_path, "provider", "enable", "holographic")
    assert enabled.returncode == 0, enabled.stderr
    assert (tmp_path / "elsewhere").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "elsewhere" / "deep").stat().st_mode & 0o777 == 0o700
    assert target.stat().st_mode & 0o777 == 0o600
    for extra in target.parent.iterdir():
        assert extra.stat().st_mode & 0o077 == 0, extra


def test_a_repeated_set_key_is_refused_and_disable_of_a_configured_provider_changes_nothing(tmp_path: Path) -> None:
    assert cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=0.2").returncode == 0
    before = tree_state(tmp_path)
    for action in ("configure", "enable"):
        done = cli(tmp_path, "provider", action, "holographic", "--set", f"dataPath={tmp_path / 'a.db'}",
                   "--set", f"dataPath={tmp_path / 'b.db'}")
        assert done.returncode != 0 and "set[1]" in done.stderr and "once" in done.stderr, done.stderr
        assert tree_state(tmp_path) == before
    disabled = cli(tmp_path, "provider", "disable", "holographic")
    assert disabled.returncode == 0, disabled.stderr
    assert "was not enabled; nothing changed" in disabled.stdout and "removed" not in disabled.stdout
    assert tree_state(tmp_path) == before


def _spaces(tmp_path: Path) -> dict[str, tuple[str, bool]]:
    listed = cli(tmp_path, "space", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    rows = doc["spaces"] if isinstance(doc, dict) else doc
    return {(r.get("record") or r)["name"]: ((r.get("record") or r)["id"], (r.get("record") or r)["active"])
            for r in rows}


def test_disable_then_enable_brings_the_spaces_back_as_active_as_they_were(tmp_path: Path, hermes_db: Path) -> None:
    enabled = cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}")
    assert enabled.returncode == 0, enabled.stderr
    before = _spaces(tmp_path)
    assert cli(tmp_path, "space", "activate", before["project"][0]).returncode == 0
    assert cli(tmp_path, "provider", "disable", "holographic").returncode == 0
    assert _spaces(tmp_path) == {}
    assert cli(tmp_path, "provider", "enable", "holographic").returncode == 0
    assert _spaces(tmp_path) == {"project": (before["project"][0], True), "user_pref": (before["user_pref"][0], False)}


def test_export_says_how_many_provider_spaces_it_left_out(tmp_path: Path, hermes_db: Path) -> None:
    assert cli(tmp_path, "space", "create", "--name", "Mine", "--description", "native").returncode == 0
    assert cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}").returncode == 0
    pack = tmp_path / "p.zip"
    text = cli(tmp_path, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack))
    assert text.returncode == 0, text.stderr
    assert "  memory-spaces: 1 space holding 0 items," in text.stdout
    assert ("  memory-spaces: 2 provider spaces (third-party) left out: packs never carry third-party connections"
            in text.stdout), text.stdout
    receipt = json.loads(cli(tmp_path, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack),
                             "--json").stdout)
    assert receipt["providerSpaces"] == {"leftOut": 2}


def test_provider_test_is_read_only_on_an_existing_store_and_recalls_a_probe(tmp_path: Path, hermes_db: Path) -> None:
    assert cli(tmp_path, "provider", "configure", "holographic", "--set", f"dataPath={hermes_db}").returncode == 0
    before = tree_state(tmp_path, mtimes=True)
    tested = cli(tmp_path, "provider", "test", "holographic")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    first, second = tested.stdout.splitlines()
    assert first.startswith("ok: hermes-agent") and "3 facts in 2 banks" in first and "project (2)" in first
    assert second.startswith("recall 'mnemon-ls provider test probe': recall answered (0 items)"), second
    report = json.loads(cli(tmp_path, "provider", "test", "holographic", "--json").stdout)
    assert report["ok"] is True and report["recall"]["ok"] is True and report["recall"]["namespace"] == "project"
    # nothing written anywhere: not the Hermes database (bytes and mtime), not the root
    assert tree_state(tmp_path, mtimes=True) == before



def test_a_provider_file_of_a_newer_version_is_never_rewritten_or_moved(tmp_path: Path, hermes_db: Path) -> None:
    import os

    path = tmp_path / "data" / "state" / "memory-providers.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 99, "services": {"holographic": {"dataPath": str(hermes_db)}},
                                "enabled": {"holographic": True}, "bodies": [], "newer": {"shape": 1}}) + "\n")
    os.chmod(path, 0o600)
    before = tree_state(tmp_path / "data", mtimes=True)
    for args in (("provider", "list"), ("provider", "test", "holographic"), ("provider", "disable", "holographic"),
                 ("provider", "configure", "holographic", "--set", "minTrust=0.2"),
                 ("provider", "enable", "holographic", "--set", f"dataPath={hermes_db}")):
        done = cli(tmp_path, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert done.stderr.startswith(f"mnemon-ls: error: {path} was written by a newer version of mnemon-ls "
                                      "(format version 99; this version reads 1..4)"), done.stderr
        assert tree_state(tmp_path / "data", mtimes=True) == before, args
    # native spaces keep working beside it, and leave it as it is
    assert cli(tmp_path, "space", "create", "--name", "Main", "--description", "main").returncode == 0
    assert cli(tmp_path, "remember", "--space", "default", "The build uses make").returncode == 0
    assert path.read_bytes() == before["state/memory-providers.json"][1]
    assert path.stat().st_mtime_ns == before["state/memory-providers.json"][2]
    assert not (tmp_path / "data" / "state" / "quarantine").exists()


def _native_contents(db: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        rows = [r[0] for r in conn.execute("SELECT content FROM insights WHERE deleted_at IS NULL ORDER BY content")]
    conn.close()
    return rows


def test_spaces_made_while_disabled_keep_their_names_and_ids_when_the_provider_comes_back(
        tmp_path: Path, hermes_db: Path) -> None:
    """A native space made while the provider was disabled may take the name of one of its banks, or its
    space's id as a name, or (a store directory) its id in another case. Enabling again applies the naming
    rule of ``space create``: the native spaces keep theirs, the provider's spaces are renamed/re-numbered,
    the answer says so, and a write by that id or name reaches the native store, not the Hermes bank."""
    import json

    assert cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}").returncode == 0
    first = _spaces(tmp_path)
    project_id, pref_id = first["project"][0], first["user_pref"][0]
    assert cli(tmp_path, "provider", "disable", "holographic").returncode == 0
    for name, description in (("Project", "native decisions"), (project_id, "named like the bank's space id")):
        made = cli(tmp_path, "space", "create", "--name", name, "--description", description, "--active")
        assert made.returncode == 0, made.stderr
    root = tmp_path / "data"
    # a store the Mnemon CLI made, whose directory is the user_pref space's id in capitals
    from mnemon_ls.spaces.providers.native import NativeProvider

    store = NativeProvider(root / "data" / pref_id.upper() / "mnemon.db", space_id=pref_id.upper(), create=True)
    store.count()
    store.close()
    natives = {name: space for name, space in _spaces(tmp_path).items()}
    assert set(natives) == {"Project", project_id, pref_id.upper()}
    hermes_before = facts(hermes_db)

    enabled = cli(tmp_path, "provider", "enable", "holographic", "--json")
    assert enabled.returncode == 0, enabled.stderr
    answer = json.loads(enabled.stdout)
    after = _spaces(tmp_path)
    for name, (space_id, _active) in natives.items():
        assert after[name][0] == space_id  # the native spaces keep their names and ids
    # writes by the taken id or name go to the native stores, never into the Hermes bank
    for reference, content in ((project_id, "written by the id-like name"), ("project", "written by the name"),
                               (pref_id, "written by the id in lower case")):
        done = cli(tmp_path, "remember", "--space", reference, content)
        assert done.returncode == 0, done.stderr
    assert facts(hermes_db) == hermes_before
    assert _native_contents(root / "data" / natives[project_id][0] / "mnemon.db") == ["written by the id-like name"]
    assert _native_contents(root / "data" / natives["Project"][0] / "mnemon.db") == ["written by the name"]
    assert _native_contents(root / "data" / pref_id.upper() / "mnemon.db") == ["written by the id in lower case"]
    renamed = {r["externalId"]: r for r in answer["renamed"]}
    assert set(renamed) == {"project", "user_pref"}
    assert renamed["project"]["name"] == "project (2)" and renamed["project"]["wantedName"] == "project"
    assert renamed["project"]["wantedId"] == project_id and renamed["project"]["spaceId"] != project_id
    assert {t["spaceId"] for t in renamed["project"]["takenBy"]} == {natives["Project"][0], natives[project_id][0]}
    assert renamed["user_pref"]["wantedId"] == pref_id and "wantedName" not in renamed["user_pref"]
    assert renamed["user_pref"]["takenBy"] == [{"what": "id", "spaceId": pref_id.upper(),
                                                "label": pref_id.upper()}]
    assert after["project (2)"][0] == renamed["project"]["spaceId"]
    assert after["user_pref"][0] == renamed["user_pref"]["spaceId"]
    pairs = [(name.casefold(), space_id.casefold()) for name, (space_id, _) in after.items()]
    assert len({i for _, i in pairs}) == len({n for n, _ in pairs}) == len(pairs) == 5
    assert not any(n == i for k, (n, _) in enumerate(pairs) for j, (_, i) in enumerate(pairs) if j != k)
    text = cli(tmp_path, "provider", "enable", "holographic")
    assert text.returncode == 0 and "renamed" not in text.stdout  # nothing new to rename: the mapping stays


def test_the_enable_text_says_what_was_renamed(tmp_path: Path, hermes_db: Path) -> None:
    assert cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={hermes_db}").returncode == 0
    assert cli(tmp_path, "provider", "disable", "holographic").returncode == 0
    assert cli(tmp_path, "space", "create", "--name", "PROJECT", "--description", "mine").returncode == 0
    text = cli(tmp_path, "provider", "enable", "holographic")
    assert text.returncode == 0, text.stderr
    [line] = [line for line in text.stdout.splitlines() if line.startswith("renamed:")]
    space_id = _spaces(tmp_path)["project (2)"][0]
    assert line == (f"renamed: namespace project is space 'project (2)' ({space_id}), not name 'project': "
                    "space PROJECT (default) keeps 'project'")
