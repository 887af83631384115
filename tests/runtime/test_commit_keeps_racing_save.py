"""A save of MEMORY.md by someone outside the Runtime lock (a person's editor saving by rename), landing after a
mutation's commit read the projection under the lock and before it renamed the rebuilt one in, was replaced
without a trace (an attack pass, h-attack49: a real second process saving beside 200 adds lost 12 of 300 saves).
The projections are now swapped in atomically (:func:`mnemon_ls.fsio.write_files_atomically`, ``watched``) and
what a swap displaced, when not the bytes read, is saved under ``runtime/edits/`` and reported in the receipt's
``preserved``. The save is made at a real point of the commit (real files, a real store): while it serializes
``memories.json``, after its read of the projections."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemon_ls import fsio
from mnemon_ls.runtime import store as store_module
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.store import RuntimeStore


@pytest.mark.parametrize("swap", ["exchange", "no exchange"])
def test_a_save_of_memory_md_during_a_commit_is_kept(tmp_path: Path, monkeypatch, swap: str) -> None:
    if swap == "no exchange":  # a system without renameat2: the file is read again just before the rename
        monkeypatch.setattr(fsio, "_renameat2", lambda: None)
    store = RuntimeStore(tmp_path)
    store.mutate(validate_request("add", "memory", "builds run on Linux"))
    projection = tmp_path / "runtime" / "MEMORY.md"
    saved = projection.read_bytes() + "§\na person's note\n".encode("utf-8")
    serialize = store_module.serialized_with_revision

    def serialize_while_a_person_saves(entries):
        tmp = projection.with_name(".editor-save")
        tmp.write_bytes(saved)
        os.replace(tmp, projection)  # the person holds no lock
        return serialize(entries)

    monkeypatch.setattr(store_module, "serialized_with_revision", serialize_while_a_person_saves)
    receipt = store.mutate(validate_request("add", "memory", "tests run on CI"))
    monkeypatch.undo()

    edits = sorted((tmp_path / "runtime" / "edits").iterdir())
    assert [p.read_bytes() for p in edits] == [saved]  # the person's save, byte for byte
    assert receipt.preserved == {"MEMORY.md": str(edits[0])}
    assert projection.read_text(encoding="utf-8") == "builds run on Linux\n§\ntests run on CI\n"
