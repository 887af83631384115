"""What a Runtime commit sends to the disk before it is acknowledged (issue 15, performance).

The guarantee is that an acknowledged write survives a power loss: ``memories.json`` (the truth) and the
directory entry that names it must be on the disk. The projections are derived and rebuilt from the
truth at every read, and the last-good copy is a recovery aid, so neither is fsynced. The counter wraps
the real ``os.fsync`` in this process (every call still reaches the kernel) and records which file each
descriptor was open on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemon_ls.runtime.model import parse_store, projection_bytes
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings


class FsyncCounter:
    """Wraps ``os.fsync``: calls the real one and records the path each descriptor refers to."""

    def __init__(self, real) -> None:
        self.real = real
        self.paths: list[str] = []

    def __call__(self, fd: int) -> None:
        self.paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        self.real(fd)


@pytest.fixture
def fsyncs(monkeypatch) -> FsyncCounter:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to name the fsynced files")
    counter = FsyncCounter(os.fsync)
    monkeypatch.setattr(os, "fsync", counter)
    return counter


def _store(root: Path) -> RuntimeStore:
    return RuntimeStore(root, RuntimeMemorySettings())


REQUESTS = {
    "add": validate_request("add", "memory", "a third entry"),
    "replace": validate_request("replace", "memory", "the first entry, changed", old_text="first entry"),
    "remove": validate_request("remove", "memory", old_text="second entry"),
    "add user": validate_request("add", "user", "prefers short answers"),
}


@pytest.mark.parametrize("name", list(REQUESTS))
def test_a_commit_fsyncs_only_memories_json_and_the_directory(tmp_path, fsyncs, name):
    root = tmp_path / "root"
    store = _store(root)
    store.mutate(validate_request("add", "memory", "the first entry"))
    store.mutate(validate_request("add", "memory", "the second entry"))
    runtime = root / "runtime"
    fsyncs.paths.clear()

    receipt = store.mutate(REQUESTS[name])

    assert receipt.changed
    assert len(fsyncs.paths) == 2, fsyncs.paths
    temp, directory = fsyncs.paths
    assert Path(temp).parent == runtime and Path(temp).name.startswith(".memories.json.")
    assert Path(directory) == runtime
    # Everything the commit promises is on disk and consistent, synced or not.
    entries = parse_store((runtime / "memories.json").read_bytes())
    assert (runtime / ".memories.last-good.json").read_bytes() == (runtime / "memories.json").read_bytes()
    for target, file in (("user", "USER.md"), ("memory", "MEMORY.md")):
        assert (runtime / file).read_bytes() == projection_bytes(entries, target)


def test_an_unsynced_projection_left_empty_is_rebuilt_from_the_truth(tmp_path):
    """What a power loss can leave of a projection that was renamed but never fsynced: an empty file.
    The next read-side repair rebuilds it from memories.json (which was fsynced) and keeps no 'edit'."""
    root = tmp_path / "root"
    store = _store(root)
    store.mutate(validate_request("add", "memory", "survives the power loss"))
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_bytes(b"")
    os.utime(memory_md, (1_000_000_000, 1_000_000_000))

    report = _store(root).projections.repair()

    assert report.repaired == ["MEMORY.md"] and report.preserved == {}
    assert memory_md.read_bytes() == b"survives the power loss\n"
