"""``RuntimeStore.written_elsewhere`` keeps its answer while neither ``memories.json`` nor the last-good copy
changed (a long-lived server's wake asks on every call), and never keeps it past a change of either: a write by
another program makes it True, a last-good copy brought level with it makes it False again."""

from __future__ import annotations

import os
from pathlib import Path

from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.store import RuntimeStore


def test_the_answer_follows_both_files(tmp_path: Path) -> None:
    store = RuntimeStore(tmp_path)
    store.mutate(validate_request("add", "memory", "the build uses tox"))
    store.read()
    assert store.written_elsewhere() is False
    assert store.written_elsewhere() is False  # kept: nothing changed
    foreign = store.memories_path.read_bytes().replace(b"the build uses tox", b"the build uses nox")
    store.memories_path.write_bytes(foreign)  # another program
    store.read()
    assert store.written_elsewhere() is True
    assert store.written_elsewhere() is True
    level = store.last_good_path.with_name("level.tmp")
    level.write_bytes(foreign)
    os.replace(level, store.last_good_path)  # the last-good copy brought level with it: a new inode
    assert store.written_elsewhere() is False
    store.last_good_path.write_bytes(foreign + b" ")  # rewritten in place: its size and times change
    assert store.written_elsewhere() is True
