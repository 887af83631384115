"""Storage failures over the language server: stable ``data.code`` naming the path, and the wake on a
full disk (issue 15 defects 2 and 6). Real links, a real full tmpfs, a real read-only remount."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.conftest import disk_state
from tests.helpers.smalldisk import SmallDisk, small_disk  # noqa: F401  (fixture)
from tests.lsp.conftest import REQUEST_TIMEOUT, Launcher

MUTATE = "mnemon/runtime/mutate"
INIT = {"mnemon": {"storageScope": "workspace", "runtimeUserScope": "storage"}}


async def test_linked_storage_root_is_refused_with_storage_unsafe(lsp: Launcher, tmp_path: Path):
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched\n")
    link = workspace / ".mnemon"
    link.symlink_to(outside, target_is_directory=True)
    client = await lsp.start("neovim", [workspace], INIT)
    for method, params in ((MUTATE, {"action": "add", "content": "lands outside?"}), ("mnemon/wake", {})):
        error = await client.call_error(method, params)
        assert error.code == -32035
        assert error.data == {"code": "storage-unsafe", "file": str(link), "errno": "ELOOP",
                              "reason": f"the storage root must not be a symbolic link (it points to {str(outside)!r})",
                              "rule": f"the storage root must not be a symbolic link (it points to {str(outside)!r})",
                              "root": str(link)}
        assert error.message.startswith(f"{link}: the storage root must not be a symbolic link")
    status = (await client.status())["workspaces"][0]
    assert status["problems"] == [error.message]
    assert status["entries"] == {"user": 0, "memory": 0}
    assert sorted(os.listdir(outside)) == ["keep.txt"]


async def test_wake_works_on_a_full_disk_and_writes_say_storage_full(lsp: Launcher, small_disk: SmallDisk):
    workspace = small_disk.path / "ws"
    workspace.mkdir()
    client = await lsp.start("visual-studio-code", [workspace], INIT)
    await client.call(MUTATE, {"action": "add", "content": "survives a full disk"})
    runtime = workspace / ".mnemon" / "runtime"
    # The server's watcher sees MEMORY.md go and rebuilds it on its own, whenever the load lets it. Removing
    # the file's last name would free its block on the full disk, and that rebuild could then succeed (it
    # did, before the wake, on a loaded machine). A second name keeps the block in use: the disk stays full
    # whatever the watcher does, and when.
    os.link(runtime / "MEMORY.md", small_disk.path / "MEMORY.md.kept")
    small_disk.fill()
    (runtime / "MEMORY.md").unlink()
    before = disk_state(runtime)
    wake = await client.call("mnemon/wake", {})
    assert "survives a full disk" in wake["text"]
    lock = runtime / ".memories.lock"
    full = (f"{lock}: no space left on the device (free some space and retry; reads keep working) "
            "(No space left on device)")
    assert wake["notices"] == [f"USER.md/MEMORY.md could not be rebuilt, the snapshot is read from memories.json: {full}"]
    error = await client.call_error(MUTATE, {"action": "add", "content": "no room"})
    assert (error.code, error.message) == (-32031, full)
    assert error.data == {"code": "storage-full", "file": str(lock), "errno": "ENOSPC",
                          "reason": "No space left on device"}
    # The watcher's own rebuild attempt may be mid-flight here, holding a lock staging file (fsio:
    # .memories.lock.<pid>.<hex>.publish) that the attempt itself removes. That is not data: compared
    # without it, and none is left once the server has ended (below).
    def data(state: dict) -> dict:
        return {name: value for name, value in state.items() if not name.endswith(".publish")}

    assert data(disk_state(runtime)) == data(before)
    small_disk.free()
    wake = await client.call("mnemon/wake", {})
    assert wake["notices"] == []
    assert (runtime / "MEMORY.md").read_bytes() == b"survives a full disk\n"
    await client.call(MUTATE, {"action": "add", "content": "after the disk is freed"})  # takes the same lock
    # Ended (its process waited for): no watcher's repair is running any more, so nothing may be left.
    await asyncio.wait_for(client.shutdown_session(), REQUEST_TIMEOUT)
    client.exited = True
    assert not [name for name in os.listdir(runtime) if name.endswith(".publish")]


async def test_read_only_file_system_says_storage_readonly(lsp: Launcher, small_disk: SmallDisk):
    workspace = small_disk.path / "ws"
    workspace.mkdir()
    client = await lsp.start("neovim@v0.7", [workspace], INIT)
    await client.call(MUTATE, {"action": "add", "content": "kept"})
    small_disk.read_only()
    assert "kept" in (await client.call("mnemon/wake", {}))["text"]
    error = await client.call_error(MUTATE, {"action": "add", "content": "x"})
    assert error.code == -32032
    assert (error.data["code"], error.data["errno"]) == ("storage-readonly", "EROFS")
    assert error.data["file"] == str(workspace / ".mnemon" / "runtime" / ".memories.lock")
