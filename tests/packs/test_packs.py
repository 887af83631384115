"""Mnemon Packs (reference section 9): export/import round trip, determinism, merge and replace rules, CLI."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import DocumentCapacityError, InvalidInput, PackRefused, RuntimeCapacityError
from mnemon_ls.runtime import ops
from tests.helpers import procs
from tests.helpers.packs import contents, host_on, items_of, seed, unpack
from tests.cli.test_cli import MNEMON_LS

NOW = datetime(2026, 9, 1, 8, 0, 0, 123000, tzinfo=timezone.utc)


def export(root: Path, scope: str = "full") -> bytes:
    """The pack of ``root`` with everything it holds (the user profile too: these tests compare round trips)."""
    host = host_on(root)
    try:
        return packs.export_pack(host, scope, include_user_profile=True, now=NOW).data
    finally:
        host.close()


def do_import(root: Path, data: bytes, **options) -> dict:
    host = host_on(root)
    try:
        return host.import_pack(data, **options)
    finally:
        host.close()


def test_export_then_import_into_a_fresh_root_gives_the_same_entries_documents_and_items(tmp_path):
    seed(tmp_path / "a")
    data = export(tmp_path / "a")
    receipt = do_import(tmp_path / "b", data)
    assert receipt["status"] == "committed" and receipt["mode"] == "merge"
    assert (receipt["runtime"]["added"], receipt["documents"]["added"], receipt["spaces"]["added"]) == (3, 2, 1)
    before, after = contents(tmp_path / "a"), contents(tmp_path / "b")
    assert after == before
    assert len(after["entries"]) == 3 and len(after["documents"]) == 2 and len(after["spaces"][0][3]) == 2
    # the imported root works like any other: recall finds the item, the wake shows the entries
    host = host_on(tmp_path / "b")
    try:
        snapshot, _ = host.wake(branch="main")
        assert "Deploys go through staging" in snapshot.text
        found = host.documents.search.find("SQLite FTS5")
        assert [r.record.title for r in found.results] == ["ADR 7"]
    finally:
        host.close()
    # nothing transient is left in the root
    assert not [p.name for p in (tmp_path / "b").iterdir() if p.name.startswith(".dsh-pack")]


def test_export_is_deterministic_dated_1980_in_a_stable_order_and_carries_no_credentials(tmp_path):
    seed(tmp_path / "a")
    host = host_on(tmp_path / "a")
    try:
        host.spaces.registry.provider_plane.configure_service("mem0", {"endpoint": "http://localhost:1", "apiKey": "sk-secretvalue123"})
    finally:
        host.close()
    assert b"sk-secretvalue123" in (tmp_path / "a" / "state" / "memory-providers.json").read_bytes()
    first, second = export(tmp_path / "a"), export(tmp_path / "a")
    assert first == second
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        infos = archive.infolist()
    names = [i.filename for i in infos]
    assert names[:2] == ["manifest.json", "checksums.json"] and names[2:] == sorted(names[2:])
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {i.compress_type for i in infos} == {zipfile.ZIP_DEFLATED}
    assert not any("memory-providers" in n or n.startswith("payload/state") for n in names)
    assert b"sk-secretvalue123" not in b"".join(unpack(first).values())
    manifest = json.loads(unpack(first)["manifest.json"])
    assert manifest["exportedAt"] == "2026-09-01T08:00:00.123Z"
    assert packs.export_pack(host_on(tmp_path / "a"), now=NOW).file_name == "mnemon-backup-2026-09-01_08-00-00-123.zip"


@pytest.mark.parametrize("scope, components, prefix", [
    ("runtime", ["runtime"], "payload/runtime/"),
    ("documents", ["documents"], "payload/documents/"),
    ("memory-spaces", ["memory-spaces"], "payload/data/"),
])
def test_a_scoped_export_carries_exactly_its_component(tmp_path, scope, components, prefix):
    seed(tmp_path / "a")
    files = unpack(export(tmp_path / "a", scope))
    manifest = json.loads(files["manifest.json"])
    assert (manifest["scope"], manifest["components"]) == (scope, components)
    assert all(name.startswith(prefix) for name in files if name.startswith("payload/"))
    do_import(tmp_path / "b", export(tmp_path / "a", scope))
    got = contents(tmp_path / "b")
    assert bool(got["entries"]) == (scope == "runtime")
    assert bool(got["documents"]) == (scope == "documents")
    assert bool(got["spaces"]) == (scope == "memory-spaces")


# ------------------------------------------------------------------------------------ merge rules


def test_merge_runtime_unions_by_target_and_content(tmp_path):
    seed(tmp_path / "a")
    host = host_on(tmp_path / "b")
    try:
        host.runtime.mutate(ops.validate_request("add", "memory", "Run tests with pytest -n 2"))  # also in the pack
        host.runtime.mutate(ops.validate_request("add", "user", "Run tests with pytest -n 2"))  # other target
        host.runtime.mutate(ops.validate_request("add", "memory", "Only here"))
    finally:
        host.close()
    receipt = do_import(tmp_path / "b", export(tmp_path / "a", "runtime"))
    runtime = receipt["runtime"]
    profile = runtime.pop("userProfile")
    assert runtime == {"added": 2, "skipped": 1, "removed": 0, "handEdits": [], "pendingHandEdits": [], "targets": {
        "user": {"added": 1, "skipped": 0, "removed": 0}, "memory": {"added": 1, "skipped": 1, "removed": 0}}}
    assert profile == {"carried": 1, "added": 1, "skipped": 0, "removed": 0, "handling": "merged", "shared": False,
                       "path": str(tmp_path / "b" / "runtime" / "USER.md"), "optInNeeded": False}
    entries = [(t, c) for t, c, *_ in contents(tmp_path / "b")["entries"]]
    assert sorted(entries) == sorted([
        ("memory", "Run tests with pytest -n 2"), ("user", "Run tests with pytest -n 2"), ("memory", "Only here"),
        ("memory", "Deploys go through staging"), ("user", "Prefers short answers")])
    memory_md = (tmp_path / "b" / "runtime" / "MEMORY.md").read_text()
    assert "Only here" in memory_md and "Deploys go through staging" in memory_md


def test_merge_runtime_overflow_refuses_the_import_and_changes_nothing(tmp_path):
    seed(tmp_path / "a")
    root = tmp_path / "b"
    host = host_on(root, runtimeMemory={"memoryLimitBytes": 60})
    try:
        host.runtime.mutate(ops.validate_request("add", "memory", "x" * 40))
        before = procs.tree_snapshot(root)
        with pytest.raises(RuntimeCapacityError) as info:
            host.import_pack(export(tmp_path / "a"))
    finally:
        host.close()
    assert info.value.data["target"] == "memory" and info.value.data["limit"] == 60
    assert procs.tree_snapshot(root) == before


def test_merge_documents_skips_same_hash_and_renames_a_changed_document(tmp_path):
    seed(tmp_path / "a")
    data = export(tmp_path / "a", "documents")
    do_import(tmp_path / "b", data)
    host = host_on(tmp_path / "b")
    try:
        active = next(d for d in host.documents.list().documents if d.record.status == "active")
        host.documents.update(active.record.id, content="Changed here.")
        changed_id = active.record.id
    finally:
        host.close()
    receipt = do_import(tmp_path / "b", data)
    # one document already here, the changed one under a new id: two outcomes for two documents
    assert receipt["documents"]["skipped"] == 1 and receipt["documents"]["added"] == 0
    [renamed] = receipt["documents"]["renamed"]
    assert renamed["from"] == changed_id and renamed["to"] != changed_id
    host = host_on(tmp_path / "b")
    try:
        record = host.documents.get(renamed["to"]).record
        view = host.documents.get(renamed["to"])
        assert record.filename == f"adr-7-{renamed['to'][:8]}.md"
        text = (tmp_path / "b" / record.relative_path).read_text()
        assert f'id: "{renamed["to"]}"' in text and changed_id not in text
        assert view.content.startswith("We use SQLite FTS5.")
        assert host.documents.get(changed_id).content == "Changed here."
        assert len(host.documents.list().documents) == 3
    finally:
        host.close()


def test_merge_documents_past_the_active_limit_is_refused(tmp_path):
    seed(tmp_path / "a")
    root = tmp_path / "b"
    host = host_on(root, documents={"activeLimitBytes": 700})
    try:
        host.documents.create("Local", "y" * 300)
        before = procs.tree_snapshot(root)
        with pytest.raises(DocumentCapacityError):
            host.import_pack(export(tmp_path / "a"))
    finally:
        host.close()
    assert procs.tree_snapshot(root) == before


def test_merge_spaces_skips_identical_stores_and_imports_a_differing_one_under_a_new_id(tmp_path):
    seed(tmp_path / "a")
    data = export(tmp_path / "a", "memory-spaces")
    do_import(tmp_path / "b", data)
    assert do_import(tmp_path / "b", data)["spaces"] == {"added": 0, "skipped": 1, "renamed": [], "removed": 0,
                                                             "nameChanged": [], "arrivedInactive": [], "activeSpaces": 1}
    seed(tmp_path / "c", tag=" (c)")  # its own 'default' space, other items
    receipt = do_import(tmp_path / "c", data)
    [renamed] = receipt["spaces"]["renamed"]
    assert renamed["from"] == "default" and renamed["to"] != "default"
    got = dict((sid, items) for sid, _, _, items in contents(tmp_path / "c")["spaces"])
    assert got[renamed["to"]] == items_of(tmp_path / "a" / "data" / "default" / "mnemon.db")
    assert got["default"] == items_of(tmp_path / "c" / "data" / "default" / "mnemon.db")
    assert any("(c)" in c for c, _ in got["default"])
    assert not (tmp_path / "c" / "active").exists()  # the default store 'default' is still there


def test_replace_swaps_in_exactly_the_pack_and_repairs_the_active_store(tmp_path):
    seed(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    (tmp_path / "b" / "active").write_text("gone\n")
    receipt = do_import(tmp_path / "b", export(tmp_path / "a"), mode="replace")
    # nothing of b's is in a's pack: all of b's goes, all of the pack comes
    assert [receipt["runtime"][k] for k in ("added", "skipped", "removed")] == [3, 0, 3]
    assert receipt["documents"] == {"added": 2, "skipped": 0, "renamed": [], "removed": 2, "pendingHandEdits": []}
    assert [receipt["spaces"][k] for k in ("added", "skipped", "removed")] == [1, 0, 1]
    assert contents(tmp_path / "b") == contents(tmp_path / "a")
    assert (tmp_path / "b" / "active").read_text().strip() == "default"


def test_replace_with_a_pack_without_spaces_never_empties_an_initialized_store_set(tmp_path):
    (tmp_path / "a").mkdir()
    empty = export(tmp_path / "a", "memory-spaces")
    seed(tmp_path / "b")
    before = procs.tree_snapshot(tmp_path / "b")
    with pytest.raises(PackRefused) as info:
        do_import(tmp_path / "b", empty, mode="replace")
    assert info.value.data["reason"] == "would-empty"
    assert procs.tree_snapshot(tmp_path / "b") == before


def test_components_select_a_subset_and_must_be_in_the_pack(tmp_path):
    seed(tmp_path / "a")
    receipt = do_import(tmp_path / "b", export(tmp_path / "a"), components=["documents"])
    assert receipt["components"] == ["documents"] and "runtime" not in receipt
    got = contents(tmp_path / "b")
    assert got["entries"] == [] and len(got["documents"]) == 2 and got["spaces"] == []
    with pytest.raises(InvalidInput) as info:
        do_import(tmp_path / "c", export(tmp_path / "a", "runtime"), components=["documents"])
    assert info.value.field == "components"


def test_import_redacts_secrets_under_the_default_setting(tmp_path):
    from tests.redact_samples import GITHUB

    GITHUB_TOKEN = GITHUB["ghp"]

    seed(tmp_path / "a")
    host = host_on(tmp_path / "a", secrets="allow")
    try:
        host.runtime.mutate(ops.validate_request("add", "memory", f"token {GITHUB_TOKEN} here"))
        host.documents.create("Creds", f"The token is {GITHUB_TOKEN}.")
        host.spaces.remember(f"CI uses {GITHUB_TOKEN}", space_id="default")
        data = packs.export_pack(host).data
    finally:
        host.close()
    do_import(tmp_path / "b", data)
    for path in (tmp_path / "b").rglob("*"):
        if path.is_file():
            assert GITHUB_TOKEN.encode() not in path.read_bytes(), path
    got = contents(tmp_path / "b")
    assert any("token" in c and "here" in c for _, c, *_ in got["entries"])
    rejecting = host_on(tmp_path / "c", secrets="reject")
    try:
        with pytest.raises(InvalidInput) as info:  # the Scrubber's refusal, naming the entry
            rejecting.import_pack(data)
    finally:
        rejecting.close()
    assert info.value.field.startswith("payload/runtime/memories.json:entries[")
    assert procs.tree_snapshot(tmp_path / "c") in ({}, {".": ("dir", 0o700)})


def test_export_refuses_a_store_whose_wal_another_reader_pins(tmp_path):
    seed(tmp_path / "a")
    db_path = tmp_path / "a" / "data" / "default" / "mnemon.db"
    reader = sqlite3.connect(str(db_path), isolation_level=None)
    writer = sqlite3.connect(str(db_path), isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM insights").fetchone()
        writer.execute("UPDATE insights SET importance = importance")
        with pytest.raises(PackRefused) as info:
            export(tmp_path / "a")
        assert info.value.data["reason"] == "wal-not-checkpointed"
    finally:
        reader.execute("COMMIT")
        reader.close()
        writer.close()
    assert export(tmp_path / "a")  # checkpointed once the reader is gone


# -------------------------------------------------------------------------------------------- CLI


def test_cli_pack_export_inspect_import(tmp_path):
    import subprocess

    seed(tmp_path / "a")
    env = procs.child_env(HOME=str(tmp_path), MNEMON_DATA_DIR=str(tmp_path / "none"))

    def run(*args: str) -> subprocess.CompletedProcess:
        args = (*args, "--runtime-user-scope", "storage") if args[1] != "inspect" else args
        return subprocess.run([MNEMON_LS, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=procs.WAIT_SECONDS)

    out = tmp_path / "p.zip"
    result = run("pack", "export", "--data-dir", str(tmp_path / "a"), "-o", str(out), "--include-user-profile", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["path"] == str(out) and out.stat().st_mode & 0o777 == 0o600
    result = run("pack", "inspect", str(out), "--data-dir", str(tmp_path / "b"))
    assert result.returncode == 0 and "a valid full pack" in result.stdout and "space default" in result.stdout
    assert not (tmp_path / "b").exists()  # inspect writes nothing
    result = run("pack", "import", str(out), "--data-dir", str(tmp_path / "b"))
    assert result.returncode == 0, result.stderr
    assert "Runtime entries: 3 added" in result.stdout and "documents: 2 added" in result.stdout
    result = run("pack", "import", str(out), "--data-dir", str(tmp_path / "b"), "--replace", "--component", "runtime",
                 "--json")
    runtime = json.loads(result.stdout)["runtime"]  # the same entries again: all already here, none removed
    assert {k: runtime[k] for k in ("added", "skipped", "removed", "targets")} == {
        "added": 0, "skipped": 3, "removed": 0, "targets": {"user": {"added": 0, "skipped": 1, "removed": 0},
                                                           "memory": {"added": 0, "skipped": 2, "removed": 0}}}
    assert (runtime["userProfile"]["handling"], runtime["userProfile"]["shared"]) == ("replaced", False)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    result = run("pack", "import", str(bad), "--data-dir", str(tmp_path / "b"), "--json")
    assert result.returncode == 2 and json.loads(result.stdout)["error"]["code"] == "pack-invalid"
    assert f"error: FILE: {bad} is not a ZIP archive" in result.stderr  # the positional as the usage line shows it
    assert contents(tmp_path / "b") == contents(tmp_path / "a")


def test_split_user_scope_exports_what_the_workspace_sees_and_imports_user_entries_into_the_global_root(tmp_path):
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.settings import load_settings

    def split(root: Path, global_root: Path) -> WorkspaceHost:
        return WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": str(root),
                                                  "runtimeUserScope": "global"}),
                             env={"MNEMON_DATA_DIR": str(global_root)})

    source = split(tmp_path / "a", tmp_path / "ga")
    try:
        source.runtime.mutate(ops.validate_request("add", "user", "Prefers short answers"))
        source.runtime.mutate(ops.validate_request("add", "memory", "Run tests with pytest"))
        data = packs.export_pack(source, "runtime", include_user_profile=True).data
    finally:
        source.close()
    doc = json.loads(unpack(data)["payload/runtime/memories.json"])
    assert sorted((e["target"], e["content"]) for e in doc["entries"]) == [
        ("memory", "Run tests with pytest"), ("user", "Prefers short answers")]
    target = split(tmp_path / "b", tmp_path / "gb")
    try:
        receipt = target.import_pack(data)
        state = target.runtime.read()
    finally:
        target.close()
    assert receipt["runtime"]["added"] == 2
    assert [e.content for e in state.user] == ["Prefers short answers"]
    assert [e.content for e in state.memory] == ["Run tests with pytest"]
    global_entries = json.loads((tmp_path / "gb" / "runtime" / "memories.json").read_text())["entries"]
    local_entries = json.loads((tmp_path / "b" / "runtime" / "memories.json").read_text())["entries"]
    assert [e["target"] for e in global_entries] == ["user"] and [e["target"] for e in local_entries] == ["memory"]
    assert not (tmp_path / "b" / "runtime" / "USER.md").exists()
    assert (tmp_path / "gb" / "runtime" / "USER.md").read_text() == "Prefers short answers\n"
    for root in (tmp_path / "b", tmp_path / "gb"):
        assert not [p.name for p in root.iterdir() if p.name.startswith(".dsh-pack")]


def test_replace_keeps_the_stores_of_deleted_spaces(tmp_path):
    # a deleted space's store is kept in data/.deleted/ (space delete); a replace swaps in a new data/ and
    # must carry that copy over, as a documents replace keeps quarantine/
    seed(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    host = host_on(tmp_path / "b")
    try:
        old = host.spaces.create_space("Old", "to be deleted").record.id
        host.spaces.remember("Kept after delete", space_id=old)
        kept = Path(host.spaces.delete_space(old, confirm=True)["keptAt"])
    finally:
        host.close()
    entry = kept.parent / f"{kept.name}.json"
    before = {p.relative_to(kept.parent): p.read_bytes() for p in kept.parent.rglob("*") if p.is_file()}
    do_import(tmp_path / "b", export(tmp_path / "a"), mode="replace")
    assert contents(tmp_path / "b") == contents(tmp_path / "a")
    after = {p.relative_to(kept.parent): p.read_bytes() for p in kept.parent.rglob("*") if p.is_file()}
    assert after == before and entry.is_file()
    assert [content for content, _ in items_of(kept / "mnemon.db")] == ["Kept after delete"]
