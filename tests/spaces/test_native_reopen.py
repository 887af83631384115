"""A process that has a native space open while another process replaces its ``mnemon.db``
(``mnemon-ls pack import --replace``) reads and writes the new file afterwards: nothing is written into the
replaced (deleted) file, where it would be lost."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import UnreadableStore
from mnemon_ls.spaces.providers.native import NativeProvider
from tests.helpers import procs
from tests.helpers.packs import host_on, items_of, seed
from tests.cli.test_cli import MNEMON_LS


def test_a_running_host_writes_into_the_store_a_pack_replace_swapped_in(tmp_path: Path) -> None:
    seed(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    exporter = host_on(tmp_path / "a")
    try:
        pack = tmp_path / "a.zip"
        pack.write_bytes(packs.export_pack(exporter, "full").data)
    finally:
        exporter.close()
    running = host_on(tmp_path / "b")  # the language server of root b, its store open
    try:
        before = running.spaces.recall("side index").to_dict()["results"]
        assert [r["content"] for r in before] == ["We chose SQLite FTS5 for the side index (b)"]
        done = subprocess.run([MNEMON_LS, "pack", "import", str(pack), "--replace", "--data-dir", str(tmp_path / "b"),
                               "--runtime-user-scope", "storage"], cwd=tmp_path, capture_output=True, text=True,
                              env=procs.child_env(HOME=str(tmp_path)), timeout=procs.WAIT_SECONDS)
        assert done.returncode == 0, done.stderr
        receipt = running.spaces.remember("Written by the running server after the swap", space_id="default")
        assert receipt.to_dict()["status"] == "committed"
        on_disk = [content for content, _tags in items_of(tmp_path / "b" / "data" / "default" / "mnemon.db")]
        assert "Written by the running server after the swap" in on_disk
        assert "We chose SQLite FTS5 for the side index" in on_disk and not any("(b)" in c for c in on_disk)
        after = running.spaces.recall("side index").to_dict()["results"]
        assert [r["content"] for r in after] == ["We chose SQLite FTS5 for the side index"]
    finally:
        running.close()


def test_a_removed_store_is_not_written_through_the_old_connection(tmp_path: Path) -> None:
    path = tmp_path / "data" / "s1" / "mnemon.db"
    maker = NativeProvider(path)
    maker.remember("first", category="fact", importance=3, tags=[], entities=[], source="user")
    maker.close()
    provider = NativeProvider(path, create=False)  # as the service opens a registered space
    assert provider.count() == 1
    moved = tmp_path / "moved.db"
    path.rename(moved)
    for suffix in ("-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            Path(f"{path}{suffix}").rename(f"{moved}{suffix}")
    try:
        with pytest.raises(UnreadableStore) as gone:  # never an acknowledged write into the moved file
            provider.remember("second", category="fact", importance=3, tags=[], entities=[], source="user")
        assert gone.value.data["reason"] == "missing"
    finally:
        provider.close()
    assert [c for c, _ in items_of(moved)] == ["first"]
