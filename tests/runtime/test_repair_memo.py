"""The repair a long-lived host runs before every wake keeps its "nothing to do" answer while the stat signature
(:mod:`mnemon_ls.statsig`) of the files it read is the same, and never longer: a hand edit of a projection, a
write of ``memories.json`` by another process, a killed writer's temp file and a runtime directory swapped for a
symbolic link are each seen by the very next repair. ``RACY_NS`` is set to 0 here so that the memo is used on
files written moments ago (the default keeps nothing for a file changed less than a second ago)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemon_ls import statsig
from mnemon_ls.errors import StorageUnsafe
from mnemon_ls.roots import RootResolution
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.source import RuntimeSource
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import load_settings


@pytest.fixture
def source(root: Path, clock, monkeypatch: pytest.MonkeyPatch) -> RuntimeSource:
    monkeypatch.setattr(statsig, "RACY_NS", 0)
    made = RuntimeSource(RootResolution(root, root, "custom", None), load_settings({}), clock=clock)
    made.mutate(validate_request("add", "memory", "first fact"))
    made.repair()
    return made


def _memo_used(source: RuntimeSource) -> bool:
    """Whether the next repair answers from the memo (the store is not read: a read would raise here)."""
    store = source.memory_store
    calls = []
    original = RuntimeStore.read

    def counting(self: RuntimeStore):
        calls.append(self)
        return original(self)

    RuntimeStore.read = counting  # type: ignore[method-assign]
    try:
        source.repair()
    finally:
        RuntimeStore.read = original  # type: ignore[method-assign]
    return store not in calls


def test_the_memo_is_used_while_nothing_changed(source: RuntimeSource) -> None:
    assert _memo_used(source)
    assert "first fact" in source.wake("main")[0].text


def test_a_hand_edit_of_memory_md_is_imported_by_the_next_repair(source: RuntimeSource) -> None:
    assert _memo_used(source)
    memory = source.memory_store.projection_path("memory")
    memory.write_bytes(memory.read_bytes().rstrip(b"\n") + "\n§\nsecond fact typed by hand\n".encode())
    reports = source.repair()
    assert any("MEMORY.md" in report.repaired for _store, report in reports)
    assert [e.content for e in source.read().memory] == ["first fact", "second fact typed by hand"]


def test_a_projection_deleted_or_replaced_in_place_is_rebuilt(source: RuntimeSource) -> None:
    memory = source.memory_store.projection_path("memory")
    expected = memory.read_bytes()
    assert _memo_used(source)
    memory.unlink()
    source.repair()
    assert memory.read_bytes() == expected
    replacement = memory.with_name("replacement")
    replacement.write_bytes(expected.replace(b"first", b"FIRST"))  # same size, another inode
    os.replace(replacement, memory)
    source.repair()
    assert [e.content for e in source.read().memory] == ["FIRST fact"]  # imported as a hand edit


def test_a_write_by_another_store_object_is_seen(source: RuntimeSource, root: Path, clock) -> None:
    other = RuntimeSource(RootResolution(root, root, "custom", None), load_settings({}), clock=clock)
    other.mutate(validate_request("add", "memory", "from another process"))
    memory = source.memory_store.projection_path("memory")
    memory.write_bytes(memory.read_bytes() + b"\n")  # a format-only change: repaired, not imported
    reports = source.repair()
    assert any(report.repaired for _store, report in reports)
    assert [e.content for e in source.read().memory] == ["first fact", "from another process"]


def test_a_killed_writers_temp_file_is_swept_by_the_next_repair(source: RuntimeSource) -> None:
    assert _memo_used(source)
    runtime = source.memory_store.runtime_dir
    orphan = runtime / ".MEMORY.md.123.456.0123abcd.tmp"
    orphan.write_bytes(b"half written")
    source.repair()
    assert not orphan.exists()


def test_a_runtime_directory_swapped_for_a_link_is_refused_after_the_memo(source: RuntimeSource) -> None:
    assert _memo_used(source)
    runtime = source.memory_store.runtime_dir
    moved = runtime.with_name("elsewhere")
    runtime.rename(moved)
    runtime.symlink_to(moved)  # the same files (same inodes and times) behind a link
    with pytest.raises(StorageUnsafe):
        source.repair()


def test_a_file_changed_within_racy_ns_keeps_no_signature(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = tmp_path / "fresh"
    fresh.write_bytes(b"x")
    monkeypatch.setattr(statsig, "RACY_NS", 3600 * 10**9)
    assert statsig.signature([fresh]) is None
    monkeypatch.setattr(statsig, "RACY_NS", 0)
    first = statsig.signature([fresh, tmp_path / "missing"])
    assert first is not None and first[1] is None
    fresh.write_bytes(b"xy")
    assert statsig.signature([fresh, tmp_path / "missing"]) != first
