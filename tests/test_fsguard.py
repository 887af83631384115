"""Storage roots refuse symbolic links (DESIGN.md invariant 10; issue 15 defect 2).

A repository may commit ``.mnemon`` (or a directory or file inside it) as a symbolic link. Every test
here makes the real link, drives the real store API, host, CLI (subprocess) or both, and checks that
the operation is refused with ``storage-unsafe`` naming the link, and that nothing was written where
the link points (the "outside" directory keeps exactly the bytes it had). A root the user configured
(``MNEMON_DATA_DIR``, ``dataDir``) may itself be a link when it lies outside the workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls import fsio
from mnemon_ls.documents import DocumentStore
from mnemon_ls.errors import StorageUnsafe
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.roots import resolve_root
from mnemon_ls.roots_safety import storage_findings, storage_root_problems, trusted_anchor
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import load_settings
from mnemon_ls.spaces import SpacesService
from tests.conftest import disk_state
from tests.helpers.zygote import mnemon_command

WORKSPACE = {"storageScope": "workspace", "runtimeUserScope": "storage"}


def add(content: str) -> ops.MutationRequest:
    return ops.validate_request("add", "memory", content)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the workspace holding one file (what a link would redirect writes into)."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "keep.txt").write_text("untouched\n")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"MNEMON_DATA_DIR": str(tmp_path / "global"), "HOME": str(tmp_path / "home")}


def host_for(workspace: Path, tmp_path: Path, settings: dict = WORKSPACE) -> WorkspaceHost:
    return WorkspaceHost(workspace, load_settings(settings), env=env_for(tmp_path))


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | env_for(tmp_path)
    return subprocess.run([*mnemon_command(), *args], capture_output=True, text=True,
                          env=env, timeout=60)


def refused(caught: pytest.ExceptionInfo[StorageUnsafe], link: Path) -> None:
    error = caught.value
    assert error.code == "storage-unsafe"
    assert error.data["file"] == str(link)
    assert error.data["rule"].endswith(f"must not be a symbolic link (it points to {os.readlink(link)!r})")
    assert error.message.startswith(f"{link}: ")


# ------------------------------------------------------------------ the root itself


def test_workspace_root_that_is_a_link_is_refused_for_every_source(workspace, outside, tmp_path):
    link = workspace / ".mnemon"
    link.symlink_to(outside, target_is_directory=True)
    before = disk_state(outside)
    host = host_for(workspace, tmp_path)
    with pytest.raises(StorageUnsafe) as caught:
        host.runtime.mutate(add("lands outside?"))
    refused(caught, link)
    assert caught.value.data["rule"].startswith("the storage root must not be a symbolic link")
    with pytest.raises(StorageUnsafe) as caught:
        host.wake("main")
    refused(caught, link)
    with pytest.raises(StorageUnsafe) as caught:
        host.documents.create("T", "body")
    refused(caught, link)
    with pytest.raises(StorageUnsafe) as caught:
        host.spaces.create_space("P", "d", active=True)
    refused(caught, link)
    assert disk_state(outside) == before
    assert storage_root_problems(host.resolution)[0].data["file"] == str(link)


def test_configured_global_root_may_be_a_link_outside_the_workspace(workspace, tmp_path):
    disk = tmp_path / "other-disk"
    disk.mkdir()
    (tmp_path / "global").symlink_to(disk, target_is_directory=True)
    host = host_for(workspace, tmp_path, {"storageScope": "global", "runtimeUserScope": "storage"})
    assert trusted_anchor(host.root, "global", host.resolution.workspace) == host.root
    assert storage_root_problems(host.resolution) == []
    assert [f.to_dict() for f in storage_findings(host.resolution)] == [{
        "level": "ok", "subject": str(tmp_path / "global"),
        "message": f"the storage root is a symbolic link to {disk}; allowed because it was configured outside "
                   "any repository (links inside it are refused)", "advice": ""}]
    host.runtime.mutate(add("kept on the other disk"))
    assert b"kept on the other disk" in (disk / "runtime" / "memories.json").read_bytes()
    assert (disk / "runtime" / "MEMORY.md").read_bytes() == b"kept on the other disk\n"


def test_home_global_root_may_be_a_link_when_the_workspace_is_home(tmp_path):
    home, disk = tmp_path / "home", tmp_path / "other-disk"
    home.mkdir()
    disk.mkdir()
    (home / ".mnemon").symlink_to(disk, target_is_directory=True)
    host = WorkspaceHost(home, load_settings({"storageScope": "global", "runtimeUserScope": "storage"}),
                         env={"MNEMON_DATA_DIR": str(home / ".mnemon")})
    assert host.root == home / ".mnemon"
    host.runtime.mutate(add("the person's own profile"))
    assert (disk / "runtime" / "MEMORY.md").read_bytes() == b"the person's own profile\n"


def test_configured_root_inside_the_workspace_may_not_be_a_link(workspace, outside, tmp_path):
    link = workspace / "memory-data"
    link.symlink_to(outside, target_is_directory=True)
    before = disk_state(outside)
    host = host_for(workspace, tmp_path, {"storageScope": "custom", "dataDir": str(link)})
    with pytest.raises(StorageUnsafe) as caught:
        host.runtime.mutate(add("x"))
    refused(caught, link)
    assert disk_state(outside) == before


def test_workspaces_scope_refuses_a_link_below_the_data_directory(workspace, outside, tmp_path):
    base = tmp_path / "global"
    base.mkdir()
    (base / "workspaces").symlink_to(outside, target_is_directory=True)
    before = disk_state(outside)
    host = host_for(workspace, tmp_path, {"storageScope": "workspaces", "runtimeUserScope": "storage"})
    with pytest.raises(StorageUnsafe) as caught:
        host.runtime.mutate(add("x"))
    refused(caught, base / "workspaces")
    assert disk_state(outside) == before


# ------------------------------------------------------------------ directories inside the root (store APIs)


@pytest.mark.parametrize("area", ["runtime", "documents", "documents/active", "data", "state"])
def test_linked_directory_inside_the_root_is_refused_by_the_store_apis(tmp_path, outside, area):
    root = tmp_path / "root"
    (root / area).parent.mkdir(parents=True)
    (root / area).symlink_to(outside, target_is_directory=True)
    before = disk_state(outside)
    link = root / area
    with pytest.raises(StorageUnsafe) as caught:
        if area == "runtime":
            RuntimeStore(root).mutate(add("x"))
        elif area.startswith("documents"):
            DocumentStore(root).create("Title", "body")
        else:
            SpacesService(root).create_space("Project", "decisions", active=True)
    refused(caught, link)
    assert disk_state(outside) == before


def test_linked_space_directory_is_refused_for_remember_and_recall(tmp_path, outside):
    root = tmp_path / "root"
    service = SpacesService(root)
    space = service.create_space("Project", "decisions", active=True).record
    service.remember("we chose sqlite", space_id=space.id)
    service.close()
    real = root / "data" / space.id
    moved = outside / "moved"
    real.rename(moved)
    real.symlink_to(moved, target_is_directory=True)
    before = disk_state(outside)
    service = SpacesService(root)
    with pytest.raises(StorageUnsafe) as caught:
        service.remember("another decision", space_id=space.id)
    refused(caught, real)
    result = service.recall("sqlite").to_dict()
    assert result["results"] == []
    assert [(s["spaceId"], s["status"]) for s in result["sources"]] == [(space.id, "unavailable")]
    assert str(real) in result["sources"][0]["hint"]
    service.close()
    assert disk_state(outside) == before


# ------------------------------------------------------------------ store files that are links


def test_linked_memories_json_is_neither_read_nor_replaced(tmp_path, outside):
    root = tmp_path / "root"
    RuntimeStore(root).mutate(add("mine"))
    foreign = outside / "memories.json"
    (root / "runtime" / "memories.json").rename(foreign)
    link = root / "runtime" / "memories.json"
    link.symlink_to(foreign)
    before = disk_state(outside)
    store = RuntimeStore(root)
    with pytest.raises(StorageUnsafe) as caught:
        store.read()
    refused(caught, link)
    with pytest.raises(StorageUnsafe):
        store.mutate(add("would copy the foreign file into the root"))
    assert link.is_symlink()
    assert disk_state(outside) == before


@pytest.mark.parametrize("name", ["MEMORY.md", "USER.md"])
def test_linked_projection_is_not_written_through(tmp_path, outside, name):
    root = tmp_path / "root"
    RuntimeStore(root).mutate(add("entry"))
    target = outside / name
    target.write_text("someone else's file\n")
    link = root / "runtime" / name
    link.unlink()
    link.symlink_to(target)
    before = disk_state(outside)
    with pytest.raises(StorageUnsafe) as caught:
        RuntimeStore(root).projections.repair()
    refused(caught, link)
    assert disk_state(outside) == before


@pytest.mark.parametrize("name", ["MEMORY.md", ".memories.last-good.json"])
def test_mutation_refuses_a_linked_file_it_would_replace(tmp_path, outside, name):
    """A mutation checks the directories once per operation and each file it replaces itself (MEMORY.md is
    read O_NOFOLLOW, the last-good copy is never read: its lstat refuses it before any temp file exists)."""
    root = tmp_path / "root"
    store = RuntimeStore(root)
    store.mutate(add("entry"))
    target = outside / name
    target.write_bytes((root / "runtime" / name).read_bytes())
    link = root / "runtime" / name
    link.unlink()
    link.symlink_to(target)
    before = disk_state(outside)
    truth = (root / "runtime" / "memories.json").read_bytes()
    with pytest.raises(StorageUnsafe) as caught:
        store.mutate(add("would be written through the link"))
    refused(caught, link)
    assert disk_state(outside) == before
    assert (root / "runtime" / "memories.json").read_bytes() == truth
    assert not [n for n in os.listdir(root / "runtime") if n.endswith(".tmp")]


def test_directory_linked_between_two_operations_is_refused_by_the_same_store(tmp_path, outside):
    """Nothing of one operation's directory check is kept for the next: the same store object (as a server
    holds it) refuses ``runtime/`` once it has been replaced by a link, even to the very directory it was."""
    root = tmp_path / "root"
    store = RuntimeStore(root)
    store.mutate(add("first"))
    moved = outside / "runtime"
    (root / "runtime").rename(moved)
    (root / "runtime").symlink_to(moved, target_is_directory=True)
    before = disk_state(outside)
    with pytest.raises(StorageUnsafe) as caught:
        store.mutate(add("second"))
    refused(caught, root / "runtime")
    assert disk_state(outside) == before


def test_linked_projection_history_is_not_written_through(tmp_path, outside):
    """``.projections-history.json`` was opened O_WRONLY|O_CREAT without O_NOFOLLOW: a commit wrote its 1536
    bytes into whatever file a link there pointed to."""
    root = tmp_path / "root"
    RuntimeStore(root).mutate(add("one"))
    history = root / "runtime" / ".projections-history.json"
    history.unlink()
    history.symlink_to(outside / "keep.txt")
    before = disk_state(outside)
    receipt = RuntimeStore(root).mutate(add("two"))  # the history is advisory: the commit goes on without it
    assert receipt.changed
    assert (outside / "keep.txt").read_text() == "untouched\n"
    assert disk_state(outside) == before
    assert history.is_symlink()


def test_linked_documents_index_and_mnemon_db_are_refused(tmp_path, outside):
    root = tmp_path / "root"
    DocumentStore(root).create("Title", "body")
    index = root / "documents" / "index.json"
    (outside / "index.json").write_bytes(index.read_bytes())
    index.unlink()
    index.symlink_to(outside / "index.json")
    service = SpacesService(root)
    space = service.create_space("Project", "decisions", active=True).record
    service.close()
    db = root / "data" / space.id / "mnemon.db"
    (outside / "mnemon.db").write_bytes(db.read_bytes())
    db.unlink()
    db.symlink_to(outside / "mnemon.db")
    before = disk_state(outside)
    with pytest.raises(StorageUnsafe) as caught:
        DocumentStore(root).create("Other", "text")
    refused(caught, index)
    service = SpacesService(root)
    with pytest.raises(StorageUnsafe) as caught:
        service.remember("x", space_id=space.id)
    refused(caught, db)
    service.close()
    assert disk_state(outside) == before


def test_temp_and_lock_files_are_created_without_following_links(tmp_path, outside):
    root = tmp_path / "root"
    fsio.confine(root)
    (root / "runtime").mkdir(parents=True)
    lock = root / "runtime" / ".memories.lock"
    lock.symlink_to(outside / "lock")
    with pytest.raises(StorageUnsafe) as caught:
        with fsio.file_lock(lock, timeout=0.2):
            pass
    refused(caught, lock)
    appended = root / "runtime" / "log.jsonl"
    appended.symlink_to(outside / "keep.txt")
    with pytest.raises(StorageUnsafe):
        fsio.append_file_durably(appended, b"line\n")
    assert (outside / "keep.txt").read_text() == "untouched\n"
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


# ------------------------------------------------------------------ CLI and doctor


def test_cli_refuses_with_exit_4_and_doctor_explains(workspace, outside, tmp_path):
    (workspace / ".mnemon").mkdir()
    link = workspace / ".mnemon" / "runtime"
    link.symlink_to(outside, target_is_directory=True)
    before = disk_state(outside)
    added = cli(tmp_path, "runtime", "add", "--content", "x", "--workspace", str(workspace),
                "--scope", "workspace", "--json")
    assert added.returncode == 4
    error = json.loads(added.stdout)["error"]
    assert (error["code"], error["file"]) == ("storage-unsafe", str(link))
    assert added.stderr == f"mnemon-ls: error: {error['message']}\n"
    doctor = cli(tmp_path, "doctor", "--workspace", str(workspace), "--scope", "workspace", "--json")
    assert doctor.returncode == 1
    findings = json.loads(doctor.stdout)["findings"]
    assert [(f["level"], f["subject"]) for f in findings] == [("problem", str(link))]
    assert findings[0]["message"].startswith(
        f"a directory inside the storage root must not be a symbolic link (it points to {str(outside)!r})")
    text = cli(tmp_path, "doctor", "--workspace", str(workspace), "--scope", "workspace")
    assert f"[PROBLEM] {link}: a directory inside the storage root must not be a symbolic link" in text.stdout
    assert disk_state(outside) == before


def test_resolving_and_checking_write_nothing(workspace, outside, tmp_path):
    (workspace / ".mnemon").symlink_to(outside, target_is_directory=True)
    before = disk_state(tmp_path)
    resolution = resolve_root(workspace, load_settings(WORKSPACE), env_for(tmp_path))
    assert [p.data["file"] for p in storage_root_problems(resolution)] == [str(workspace / ".mnemon")]
    assert disk_state(tmp_path) == before
