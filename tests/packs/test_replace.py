"""``pack import --replace`` as a new user meets it: a shared (global) USER.md is never replaced by surprise
(merged unless ``--replace-user-profile``), every count of the receipt is what happened, and the components
replaced are saved first as a pack in ``<root>/state/pack-backups`` that one command restores."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import InvalidInput, PackRefused
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime import ops
from mnemon_ls.settings import load_settings
from tests.helpers import procs
from tests.helpers.packs import contents, host_on, seed
from tests.helpers.zygote import mnemon_command


def _split(root: Path, global_root: Path) -> WorkspaceHost:
    """A host on ``root`` whose USER.md is the one of ``global_root`` (runtimeUserScope global)."""
    return WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": str(root),
                                              "runtimeUserScope": "global"}), env={"MNEMON_DATA_DIR": str(global_root)})


def _add(host: WorkspaceHost, target: str, *contents_: str) -> None:
    for content in contents_:
        host.runtime.mutate(ops.validate_request("add", target, content))


def _user_entries(global_root: Path) -> list[str]:
    doc = json.loads((global_root / "runtime" / "memories.json").read_bytes())
    return sorted(e["content"] for e in doc["entries"] if e["target"] == "user")


def _profile_pack(tmp_path: Path) -> bytes:
    """A runtime pack carrying the user profile ["Likes tea", "Uses vim"] and MEMORY.md ["Fact A"]."""
    source = host_on(tmp_path / "source")
    try:
        _add(source, "user", "Likes tea", "Uses vim")
        _add(source, "memory", "Fact A")
        return packs.export_pack(source, "runtime", include_user_profile=True).data
    finally:
        source.close()


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([*mnemon_command(), *args], cwd=cwd, capture_output=True, text=True,
                            timeout=procs.WAIT_SECONDS, env=env or procs.child_env(HOME=str(cwd / "home"),
                                                                                   MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr
    return result


# ------------------------------------------------------------------------------------------ user profile


def test_replace_merges_a_shared_user_profile_unless_opted_in(tmp_path: Path) -> None:
    data = _profile_pack(tmp_path)
    for opt_in in (False, True):
        root, global_root = tmp_path / f"b{opt_in}", tmp_path / f"g{opt_in}"
        host = _split(root, global_root)
        try:
            _add(host, "user", "Likes coffee", "Likes tea")  # the shared profile every workspace reads
            _add(host, "memory", "Fact A", "Fact B")
            receipt = host.import_pack(data, "replace", replace_user_profile=opt_in)
        finally:
            host.close()
        profile = receipt["runtime"]["userProfile"]
        path = str(global_root / "runtime" / "USER.md")
        if not opt_in:  # merged: the pack's new entry added, the one already there skipped, none removed
            assert _user_entries(global_root) == ["Likes coffee", "Likes tea", "Uses vim"]
            assert profile == {"carried": 2, "added": 1, "skipped": 1, "removed": 0, "handling": "merged",
                               "shared": True, "path": path, "optInNeeded": True}
            assert receipt["backup"]["userProfile"] is False
        else:  # replaced: exactly the pack's profile
            assert _user_entries(global_root) == ["Likes tea", "Uses vim"]
            assert profile == {"carried": 2, "added": 1, "skipped": 1, "removed": 1, "handling": "replaced",
                               "shared": True, "path": path, "optInNeeded": False}
            assert receipt["backup"]["userProfile"] is True
        # MEMORY.md is this root's: replaced either way
        assert receipt["runtime"]["targets"]["memory"] == {"added": 0, "skipped": 1, "removed": 1}
        memory = json.loads((root / "runtime" / "memories.json").read_bytes())["entries"]
        assert [e["content"] for e in memory if e["target"] == "memory"] == ["Fact A"]


def test_a_workspace_scoped_user_profile_is_replaced_with_the_root(tmp_path: Path) -> None:
    """runtimeUserScope storage: USER.md belongs to the root being replaced, so plain --replace replaces it."""
    data = _profile_pack(tmp_path)
    host = host_on(tmp_path / "b")
    try:
        _add(host, "user", "Likes coffee")
        receipt = host.import_pack(data, "replace")
        users = [e.content for e in host.runtime.read().user]
    finally:
        host.close()
    assert sorted(users) == ["Likes tea", "Uses vim"]
    assert receipt["runtime"]["userProfile"] == {
        "carried": 2, "added": 2, "skipped": 0, "removed": 1, "handling": "replaced", "shared": False,
        "path": str(tmp_path / "b" / "runtime" / "USER.md"), "optInNeeded": False}


def test_replace_user_profile_is_refused_where_it_does_not_apply_and_changes_nothing(tmp_path: Path) -> None:
    data = _profile_pack(tmp_path)
    seed(tmp_path / "a")
    source = host_on(tmp_path / "a")
    try:
        without_profile = packs.export_pack(source, "full").data
    finally:
        source.close()
    root, global_root = tmp_path / "b", tmp_path / "g"
    host = _split(root, global_root)
    try:
        _add(host, "user", "Likes coffee")
        before = procs.tree_snapshot(root), procs.tree_snapshot(global_root)
        for pack, kwargs, rule in (
                (data, {"mode": "merge"}, "applies to replace mode only"),
                (without_profile, {"mode": "replace"}, "carries no user profile"),
                (data, {"mode": "replace", "components": ["documents"]}, None),
                (data, {"mode": "replace", "replace_user_profile": "yes"}, "must be true or false")):
            kwargs.setdefault("replace_user_profile", True)
            with pytest.raises(InvalidInput) as info:
                host.import_pack(pack, **kwargs)
            field = "components" if rule is None else "replaceUserProfile"  # the runtime pack has no documents
            assert info.value.data["field"] == field, info.value.message
            if rule:
                assert rule in info.value.message
        assert (procs.tree_snapshot(root), procs.tree_snapshot(global_root)) == before
    finally:
        host.close()


def test_cli_replace_names_the_opt_in_and_the_shared_profile(tmp_path: Path) -> None:
    pack = tmp_path / "p.zip"
    pack.write_bytes(_profile_pack(tmp_path))
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=procs.WAIT_SECONDS)  # its own root
    env = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off")
    assert _cli(project, "runtime", "add", "--target", "user", "--content", "Likes coffee", env=env).returncode == 0
    global_md = tmp_path / "home" / ".mnemon" / "runtime" / "USER.md"

    merged = _cli(project, "pack", "import", str(pack), "--replace", env=env)
    assert merged.returncode == 0, merged.stderr
    assert (f"  USER.md: the pack carried 2 user-profile entries, 2 added, 0 already here, none removed: your user "
            f"profile ({global_md}, shared by every workspace) was merged, not replaced; add --replace-user-profile "
            "to replace it") in merged.stdout.splitlines(), merged.stdout
    assert _user_entries(global_md.parent.parent) == ["Likes coffee", "Likes tea", "Uses vim"]

    replaced = _cli(project, "pack", "import", str(pack), "--replace", "--replace-user-profile", env=env)
    assert replaced.returncode == 0, replaced.stderr
    assert (f"  USER.md: replaced the shared user profile ({global_md}, shared by every workspace) with the pack's "
            "2 user-profile entries: 1 removed, 0 added, 2 already here") in replaced.stdout.splitlines(), replaced.stdout
    assert _user_entries(global_md.parent.parent) == ["Likes tea", "Uses vim"]


# ------------------------------------------------------------------------------------------ counts


def _doc_ids(host: WorkspaceHost) -> dict[str, str]:
    return {e.record.title: e.record.id for e in host.documents.list().documents}


def test_every_count_of_the_receipt_is_what_happened(tmp_path: Path) -> None:
    """Case by case, merge and replace: Runtime entries per target, documents, spaces."""
    a, b = tmp_path / "a", tmp_path / "b"
    seed(a)  # USER.md 1, MEMORY.md 2, documents "ADR 7" (active) + "Old plan" (archived), space default
    first = host_on(a)
    try:
        first_pack = packs.export_pack(first, "full", include_user_profile=True).data
    finally:
        first.close()
    host = host_on(b)
    try:
        host.import_pack(first_pack)  # b now holds all of a
        ids = _doc_ids(host)
        host.documents.update(ids["ADR 7"], content="Changed in b.")  # same id, other content
        host.documents.create("Only in b", "local\n")
        _add(host, "memory", "Only in b")
        host.spaces.create_space("Local", "b's own", active=False)
    finally:
        host.close()
    source = host_on(a)
    try:
        _add(source, "memory", "New in a")
        source.documents.create("New in a", "fresh\n")
        data = packs.export_pack(source, "full", include_user_profile=True).data
    finally:
        source.close()

    dry = host_on(b)
    try:
        merge = dry.import_pack(data, dry_run=True)
        replace = dry.import_pack(data, "replace", dry_run=True)
    finally:
        dry.close()
    runtime = merge["runtime"]
    assert (runtime["added"], runtime["skipped"], runtime["removed"], runtime["targets"]) == (1, 3, 0, {
        "user": {"added": 0, "skipped": 1, "removed": 0}, "memory": {"added": 1, "skipped": 2, "removed": 0}})
    documents = merge["documents"]
    # Old plan already here, ADR 7 changed here -> under a new id, New in a added
    assert (documents["added"], documents["skipped"], len(documents["renamed"]), documents["removed"]) == (1, 1, 1, 0)
    assert documents["renamed"][0]["from"] == ids["ADR 7"]
    spaces = merge["spaces"]
    assert (spaces["added"], spaces["skipped"], spaces["renamed"], spaces["removed"]) == (0, 1, [], 0)

    runtime = replace["runtime"]
    assert (runtime["added"], runtime["skipped"], runtime["removed"], runtime["targets"]) == (1, 3, 1, {
        "user": {"added": 0, "skipped": 1, "removed": 0}, "memory": {"added": 1, "skipped": 2, "removed": 1}})
    # Old plan stays; b's ADR 7 and "Only in b" go; the pack's ADR 7 and "New in a" come
    assert replace["documents"] == {"added": 2, "skipped": 1, "renamed": [], "removed": 2, "pendingHandEdits": []}
    spaces = replace["spaces"]
    assert (spaces["added"], spaces["skipped"], spaces["renamed"], spaces["removed"]) == (0, 1, [], 1)

    pack = tmp_path / "p.zip"
    pack.write_bytes(data)
    out = _cli(tmp_path, "pack", "import", str(pack), "--replace", "--scope", "custom", "--data-dir", str(b),
               "--runtime-user-scope", "storage")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert ("  Runtime entries: 1 added, 3 already here, 1 removed (USER.md: 0 added, 1 already here, 0 removed; "
            "MEMORY.md: 1 added, 2 already here, 1 removed)") in lines, out.stdout
    assert "  documents: 2 added, 1 already here, 2 removed" in lines, out.stdout
    assert "  Memory Spaces: 0 added, 1 already here, 1 removed" in lines, out.stdout
    after = host_on(b)
    try:
        assert sorted(_doc_ids(after)) == ["ADR 7", "New in a", "Old plan"]
        assert [s.record.name for s in after.spaces.list_spaces()] == ["Project"]
    finally:
        after.close()


# ------------------------------------------------------------------------------------------ backups


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_replace_saves_what_it_replaces_and_the_restore_command_puts_it_back(tmp_path: Path) -> None:
    seed(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    source = host_on(tmp_path / "a")
    try:
        data = packs.export_pack(source, "full", include_user_profile=True).data
    finally:
        source.close()
    root = tmp_path / "b"
    before = contents(root)
    merged = host_on(root)
    try:
        assert merged.import_pack(packs.export_pack(merged, "documents").data)["backup"] is None  # merge: none
    finally:
        merged.close()
    host = host_on(root)
    try:
        receipt = host.import_pack(data, "replace")
    finally:
        host.close()
    assert contents(root) == contents(tmp_path / "a")
    backup = Path(receipt["backup"]["path"])
    assert backup.parent == root / "state" / "pack-backups"
    assert (_mode(backup.parent), _mode(backup)) == (0o700, 0o600)
    assert receipt["backup"]["components"] == ["runtime", "documents", "memory-spaces"]
    assert receipt["backup"]["userProfile"] is True and receipt["backup"]["written"] is True
    assert packs.inspect_pack(backup.read_bytes())["userProfile"] == 1

    argv = shlex.split(receipt["backup"]["restore"])
    assert argv[:6] == ["mnemon-ls", "pack", "import", str(backup), "--replace", "--component"]
    restored = _cli(tmp_path, *argv[1:])
    assert restored.returncode == 0, restored.stderr
    assert contents(root) == before  # b as it was before the replace, user profile included


def _documents_pack(root: Path, tag: str = "") -> bytes:
    """The documents pack of a freshly :func:`seed`-ed ``root``."""
    seed(root, tag=tag)
    source = host_on(root)
    try:
        return packs.export_pack(source, "documents").data
    finally:
        source.close()


def test_the_newest_five_backups_are_kept(tmp_path: Path) -> None:
    data, data_c = _documents_pack(tmp_path / "a"), _documents_pack(tmp_path / "c", " (c)")
    host = host_on(tmp_path / "b")
    try:  # a, c, a, c...: each replace replaces something new, so each keeps a backup
        written = [host.import_pack(data if i % 2 == 0 else data_c, "replace")["backup"]["path"] for i in range(7)]
    finally:
        host.close()
    folder = tmp_path / "b" / "state" / "pack-backups"
    assert len(set(written)) == 7
    assert sorted(str(p) for p in folder.iterdir()) == sorted(written[-5:])


def test_a_replace_that_replaces_nothing_new_keeps_the_backup_it_has(tmp_path: Path) -> None:
    """The same replace six times: the first backup holds what it replaced; the five after it would each
    hold the same state again, so they reuse the newest backup and never rotate the first one out."""
    data = _documents_pack(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    host = host_on(tmp_path / "b")
    try:
        receipts = [host.import_pack(data, "replace")["backup"] for _ in range(7)]
    finally:
        host.close()
    first, second = Path(receipts[0]["path"]), Path(receipts[1]["path"])
    assert [r["reused"] for r in receipts] == [False, False, True, True, True, True, True]
    assert {r["path"] for r in receipts[1:]} == {str(second)}
    assert sorted((tmp_path / "b" / "state" / "pack-backups").iterdir()) == sorted([first, second])
    assert first.read_bytes() != second.read_bytes()


def test_a_backup_that_cannot_be_made_refuses_the_replace_and_changes_nothing(tmp_path: Path) -> None:
    seed(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    source = host_on(tmp_path / "a")
    try:
        data = packs.export_pack(source, "full").data
    finally:
        source.close()
    root = tmp_path / "b"
    (root / "state" / "pack-backups").write_text("a file where the backups folder belongs")
    before = procs.tree_snapshot(root)
    host = host_on(root)
    try:
        with pytest.raises(PackRefused) as info:
            host.import_pack(data, "replace")
    finally:
        host.close()
    assert info.value.data["reason"] == "backup-failed"
    assert "could not be made" in info.value.message and "nothing was imported" in info.value.message
    assert procs.tree_snapshot(root) == before
    assert not [p for p in os.listdir(root) if p.startswith(".dsh-pack")]


def test_the_restore_command_names_a_data_dir_from_the_environment(tmp_path: Path) -> None:
    """With ``MNEMON_DATA_DIR`` set, the restore command carries it: run from a shell without it (a new
    terminal) it restores the same root, not the memory under ``~/.mnemon``."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=procs.WAIT_SECONDS)
    data = tmp_path / "data"
    env = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off", MNEMON_DATA_DIR=str(data))
    assert _cli(project, "runtime", "add", "--target", "memory", "--content", "kept fact", env=env).returncode == 0
    pack = tmp_path / "empty-runtime.zip"
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True, timeout=procs.WAIT_SECONDS)
    assert _cli(other, "runtime", "add", "--target", "memory", "--content", "other fact", env=env).returncode == 0
    assert _cli(other, "pack", "export", "--pack-scope", "runtime", "-o", str(pack), env=env).returncode == 0
    root = next(p for p in (data / "workspaces").iterdir() if "kept fact" in (p / "runtime" / "memories.json").read_text())
    done = _cli(project, "pack", "import", str(pack), "--replace", "--json", env=env)
    assert done.returncode == 0, done.stderr
    restore = json.loads(done.stdout)["backup"]["restore"]
    assert restore.startswith(f"MNEMON_DATA_DIR={data} mnemon-ls pack import "), restore
    assert "kept fact" not in (root / "runtime" / "memories.json").read_text()
    plain = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off")
    plain.pop("MNEMON_DATA_DIR", None)
    shell = subprocess.run(["bash", "-c", restore.replace("mnemon-ls ", f"{sys.executable} -m mnemon_ls ", 1)],
                           cwd=project, env=plain, capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    assert shell.returncode == 0, shell.stderr
    memories = [e["content"] for e in json.loads((root / "runtime" / "memories.json").read_text())["entries"]]
    assert memories == ["kept fact"] and not (tmp_path / "home" / ".mnemon").exists()


@pytest.mark.parametrize("case", [str, str.upper])
def test_replace_gives_a_pack_space_holding_a_third_party_space_id_a_new_id(tmp_path: Path, case) -> None:
    """The attack pass: a replace import of a pack whose space id is a third-party space's (or differs only
    in case) left two spaces with one id. The provider space stays; the pack's comes in under a new id, as
    in a merge."""
    from mnemon_ls.spaces import SpacesService
    from tests.helpers.packs import repack, unpack

    seed(tmp_path / "a")
    source = host_on(tmp_path / "a")
    try:
        files = unpack(packs.export_pack(source, "memory-spaces").data)
    finally:
        source.close()
    root = tmp_path / "b"
    service = SpacesService(root)
    service.configure_provider("honcho", {}, enabled=True)
    [theirs] = service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "peer-1"}])
    service.close()
    pack_id = case(theirs.id)
    catalog = json.loads(files["payload/data/.dsh-memory-bodies.json"])
    [body] = catalog["bodies"]
    old_id, body["id"] = body["id"], pack_id
    files["payload/data/.dsh-memory-bodies.json"] = json.dumps(catalog).encode()
    files[f"payload/data/{pack_id}/mnemon.db"] = files.pop(f"payload/data/{old_id}/mnemon.db")
    host = host_on(root)
    try:
        receipt = host.import_pack(repack(files), "replace", ["memory-spaces"])
        ids = [v.record.id for v in host.spaces.list_spaces()]
    finally:
        host.close()
    [renamed] = receipt["spaces"]["renamed"]
    assert renamed["from"] == pack_id and renamed["to"] != pack_id
    assert sorted(ids) == sorted([theirs.id, renamed["to"]]) and len({i.casefold() for i in ids}) == 2
