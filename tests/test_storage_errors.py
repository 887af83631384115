"""I/O failures get stable codes naming the path, and reads keep working on a full disk (issue 15 defect 6).

Real failures only: a tmpfs filled until the kernel answers ``ENOSPC`` and then remounted read-only
(``EROFS``) (:mod:`tests.helpers.smalldisk`), and a directory where ``memories.json`` should be
(``EISDIR``). ``EACCES`` cannot be produced as root (``chmod`` does not stop root), so
``storage-denied`` is covered by the mapping table only; ``EROFS`` stands in for "cannot write here".
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.errors import (EXIT_STORAGE, StorageDenied, StorageFull, StorageReadOnly, StorageUnreadable,
                              StorageUnsafe, storage_error)
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import load_settings
from tests.helpers.smalldisk import SmallDisk, small_disk  # noqa: F401  (fixture)
from tests.helpers.zygote import mnemon_command

WORKSPACE = {"storageScope": "workspace", "runtimeUserScope": "storage"}


def add(content: str) -> ops.MutationRequest:
    return ops.validate_request("add", "memory", content)


def env_for(tmp_path: Path) -> dict[str, str]:
    # Semantic recall off as in the rest of the suite (tests/conftest.py): its worker would hold the disk busy.
    return {"MNEMON_DATA_DIR": str(tmp_path / "global"), "HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}


def host_for(workspace: Path, tmp_path: Path) -> WorkspaceHost:
    return WorkspaceHost(workspace, load_settings(WORKSPACE), env=env_for(tmp_path))


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mnemon_command(), *args], capture_output=True, text=True,
                          env=dict(os.environ) | env_for(tmp_path), timeout=60)


def seed(workspace: Path, tmp_path: Path) -> tuple[str, str]:
    """Runtime entry, one document, one active space with one item; every index built once.
    Returns ``(document id, space id)``."""
    host = host_for(workspace, tmp_path)
    host.runtime.mutate(add("hello world"))
    document = host.documents.create("Rollback plan", "body text about thresholds").document.record.id
    space = host.spaces.create_space("Project", "decisions", active=True).record.id
    host.spaces.remember("we chose sqlite for the side index", space_id=space)
    assert host.documents.search.find("thresholds").results
    assert host.recall("sqlite").to_dict()["results"]
    host.close()
    return document, space


def truth_files(root: Path, space: str) -> dict[str, bytes]:
    names = ["runtime/memories.json", "documents/index.json", f"data/{space}/mnemon.db", "state/.dsh-memory-bodies.last-good.json"]
    return {name: (root / name).read_bytes() for name in names if (root / name).exists()}


# ------------------------------------------------------------------ the mapping


@pytest.mark.parametrize("code, cls", [
    (errno.ENOSPC, StorageFull), (errno.EDQUOT, StorageFull), (errno.EROFS, StorageReadOnly),
    (errno.EACCES, StorageDenied), (errno.EPERM, StorageDenied), (errno.EISDIR, StorageUnreadable),
    (errno.ENOTDIR, StorageUnreadable), (errno.EIO, StorageUnreadable), (errno.ELOOP, StorageUnsafe),
])
def test_os_errors_map_to_stable_codes_naming_the_path(code, cls):
    error = storage_error(OSError(code, os.strerror(code), "/r/runtime/memories.json"))
    assert type(error) is cls
    assert isinstance(error, OSError) and error.errno == code
    assert error.data["file"] == "/r/runtime/memories.json"
    assert error.exit_code == EXIT_STORAGE
    assert error.message.startswith("/r/runtime/memories.json: ")


def test_missing_files_and_other_errors_are_not_storage_errors():
    assert storage_error(FileNotFoundError(errno.ENOENT, "gone", "/x")) is None
    assert storage_error(ValueError("x")) is None
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode, full.sqlite_errorname = 13, "SQLITE_FULL"
    assert storage_error(full, "/r/data/x/mnemon.db").to_dict()["code"] == "storage-full"


# ------------------------------------------------------------------ a really full disk


def test_full_disk_wake_and_reads_keep_working_and_writes_say_storage_full(small_disk: SmallDisk, tmp_path):
    workspace = small_disk.path / "ws"
    workspace.mkdir()
    document, space = seed(workspace, tmp_path)
    root = workspace / ".mnemon"
    (root / "runtime" / "MEMORY.md").unlink()  # the wake has to rebuild it: a write
    truth = truth_files(root, space)
    small_disk.fill()

    host = host_for(workspace, tmp_path)
    snapshot, repairs = host.wake("main")
    assert repairs == []
    assert "hello world" in snapshot.text
    lock = root / "runtime" / ".memories.lock"
    notice = (f"USER.md/MEMORY.md could not be rebuilt, the snapshot is read from memories.json: {lock}: "
              "no space left on the device (free some space and retry; reads keep working) (No space left on device)")
    assert snapshot.notices == (notice,)
    assert f"Notice: {notice}" in snapshot.text
    assert "- Rollback plan" in snapshot.text and "Project (id default, 1 item): decisions" in snapshot.text

    found = host.documents.search.find("thresholds")
    assert [hit.record.id for hit in found.results] == [document]
    assert host.documents.get(document).content == "body text about thresholds"
    recalled = host.recall("sqlite").to_dict()
    assert [r["content"] for r in recalled["results"]] == ["we chose sqlite for the side index"]

    with pytest.raises(StorageFull) as caught:
        host.runtime.mutate(add("no room"))
    assert caught.value.to_dict() == {
        "code": "storage-full", "file": str(lock), "errno": "ENOSPC", "reason": "No space left on device",
        "message": f"{lock}: no space left on the device (free some space and retry; reads keep working) "
                   "(No space left on device)"}
    with pytest.raises(StorageFull) as caught:
        host.spaces.remember("no room either", space_id=space)
    assert caught.value.data["file"] == str(root / "data" / space / "mnemon.db")
    with pytest.raises(StorageFull):
        host.documents.create("Another", "text")
    host.close()  # pending access times are soft state: lost on a full disk, never an error
    assert truth_files(root, space) == truth

    small_disk.free()
    host = host_for(workspace, tmp_path)
    snapshot, repairs = host.wake("main")
    assert snapshot.notices == ()
    assert [report.repaired for _, report in repairs] == [["MEMORY.md"]]
    host.runtime.mutate(add("room again"))
    host.spaces.remember("and a new item", space_id=space)
    assert len(host.recall("new item").to_dict()["results"]) == 1
    host.close()


def test_full_disk_through_the_cli(small_disk: SmallDisk, tmp_path):
    workspace = small_disk.path / "ws"
    workspace.mkdir()
    seed(workspace, tmp_path)
    (workspace / ".mnemon" / "runtime" / "MEMORY.md").unlink()
    small_disk.fill()
    common = ("--workspace", str(workspace), "--scope", "workspace", "--json")
    wake = cli(tmp_path, "wake", *common)
    assert wake.returncode == 0, wake.stderr
    assert "hello world" in json.loads(wake.stdout)["text"]
    added = cli(tmp_path, "runtime", "add", "--content", "x", *common)
    assert added.returncode == EXIT_STORAGE
    assert json.loads(added.stdout)["error"]["code"] == "storage-full"
    recalled = cli(tmp_path, "recall", "sqlite", *common)
    assert recalled.returncode == 0, recalled.stderr
    assert [r["content"] for r in json.loads(recalled.stdout)["results"]] == ["we chose sqlite for the side index"]
    doctor = cli(tmp_path, "doctor", *common)
    findings = json.loads(doctor.stdout)["findings"]
    assert findings[0] == {
        "level": "warning", "subject": str(workspace / ".mnemon"),
        "message": "the file system holding this storage root is full: reads and the wake keep working, "
                   "every write fails (storage-full)",
        "advice": "free some space on that file system"}


def test_read_only_file_system(small_disk: SmallDisk, tmp_path):
    workspace = small_disk.path / "ws"
    workspace.mkdir()
    document, space = seed(workspace, tmp_path)
    root = workspace / ".mnemon"
    (root / "runtime" / "MEMORY.md").unlink()
    small_disk.read_only()
    host = host_for(workspace, tmp_path)
    snapshot, _ = host.wake("main")
    assert "hello world" in snapshot.text
    assert len(snapshot.notices) == 1 and "the file system is read-only" in snapshot.notices[0]
    with pytest.raises(StorageReadOnly) as caught:
        host.runtime.mutate(add("x"))
    assert caught.value.to_dict()["code"] == "storage-readonly"
    assert caught.value.data["errno"] == "EROFS"
    assert [r["content"] for r in host.recall("sqlite").to_dict()["results"]] == ["we chose sqlite for the side index"]
    assert [hit.record.id for hit in host.documents.search.find("thresholds").results] == [document]
    with pytest.raises(StorageReadOnly):
        host.spaces.remember("x", space_id=space)
    host.close()


# ------------------------------------------------------------------ a directory where a file belongs


def test_directory_where_memories_json_belongs_is_storage_unreadable(tmp_path):
    root = tmp_path / "root"
    (root / "runtime" / "memories.json").mkdir(parents=True)
    with pytest.raises(StorageUnreadable) as caught:
        RuntimeStore(root).read()
    assert caught.value.data == {"file": str(root / "runtime" / "memories.json"), "errno": "EISDIR",
                                 "reason": "Is a directory"}
    workspace = tmp_path / "ws"
    (workspace / ".mnemon" / "runtime" / "memories.json").mkdir(parents=True)
    done = cli(tmp_path, "wake", "--workspace", str(workspace), "--scope", "workspace", "--json")
    assert done.returncode == EXIT_STORAGE
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["file"]) == ("storage-unreadable", str(workspace / ".mnemon/runtime/memories.json"))
    assert done.stderr == f"mnemon-ls: error: {error['message']}\n"


def test_creating_a_space_on_a_full_disk_says_storage_full(small_disk: SmallDisk, tmp_path):
    """It answered unreadable-store ("cannot be read as a Mnemon store: database or disk is full"): the new
    store's mnemon.db is made on a disk with no room, which is the disk's problem (issue 23 item 7)."""
    workspace = small_disk.path / "ws"
    workspace.mkdir()
    seed(workspace, tmp_path)
    root = workspace / ".mnemon"
    before = sorted(p.name for p in (root / "data").iterdir())
    small_disk.fill()
    result = cli(tmp_path, "space", "create", "--name", "Team", "--description", "shared decisions",
                 "--workspace", str(workspace), "--scope", "workspace", "--json")
    assert result.returncode == EXIT_STORAGE, result.stderr
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["errno"]) == ("storage-full", "ENOSPC") and error["file"].endswith("mnemon.db")
    assert "no space left on the device" in result.stderr
    small_disk.free()
    assert sorted(p.name for p in (root / "data").iterdir()) == before  # no half-made store left behind
    listed = cli(tmp_path, "space", "list", "--workspace", str(workspace), "--scope", "workspace", "--json")
    assert [space["name"] for space in json.loads(listed.stdout)] == ["Project"]
