"""A projection repair rewrote ``USER.md`` / ``MEMORY.md`` with a plain rename: a person's save landing after the
repair read the file under its lock (an editor takes no lock) was replaced without a trace, by rename or in place
(truncate, then write through the descriptor: the bytes went into the replaced file). The repair now writes
through the watched path (:func:`mnemon_ls.fsio.write_files_atomically`, ``watched``) and keeps what it displaced
under ``runtime/edits/`` (``preserved["MEMORY.md (saved during the write)"]``); a file still being written is kept
there itself, so the editor's later write lands in the copy.

The save is made at a real point of the sequence: from the store's ``preserve``, which the repair calls under its
lock after its read and before its write (a hand edit restored, ``handEdits=restore``). No sleeps."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.store import RuntimeStore


def _store_with_a_hand_edit(tmp_path: Path) -> tuple[RuntimeStore, Path]:
    store = RuntimeStore(tmp_path / "root", hand_edits="restore")
    store.mutate(validate_request("add", "memory", "kept fact"))
    memory = store.projection_path("memory")
    memory.write_bytes(b"kept fact\n\xc2\xa7\nmy first hand-written line\n")
    back = time.time() - 5  # left alone long ago: the repair reads it at once (no settle wait)
    os.utime(memory, (back, back))
    return store, memory


def test_a_save_by_rename_during_a_repair_is_kept(tmp_path: Path) -> None:
    store, memory = _store_with_a_hand_edit(tmp_path)
    save = b"kept fact\n\xc2\xa7\nmy second hand-written line\n"
    preserve = store.preserve

    def preserve_then_a_person_saves(name: str, data: bytes) -> Path:
        if not saves:
            tmp = memory.with_name(".editor-save")
            tmp.write_bytes(save)
            os.replace(tmp, memory)  # after the repair's read, before its write: the person holds no lock
            saves.append(save)
        return preserve(name, data)

    saves: list[bytes] = []
    store.preserve = preserve_then_a_person_saves  # type: ignore[method-assign]
    report = store.projections.repair()
    del store.preserve

    assert saves == [save]
    assert memory.read_bytes() == b"kept fact\n"
    assert Path(report.preserved["MEMORY.md (saved during the write)"]).read_bytes() == save
    assert Path(report.preserved["MEMORY.md"]).read_bytes() == b"kept fact\n\xc2\xa7\nmy first hand-written line\n"


def test_an_in_place_save_written_after_a_repair_is_kept(tmp_path: Path) -> None:
    store, memory = _store_with_a_hand_edit(tmp_path)
    save = b"kept fact\n\xc2\xa7\nwritten in place after the repair\n"
    preserve = store.preserve
    editors = []

    def preserve_then_a_person_truncates(name: str, data: bytes) -> Path:
        if not editors:
            editors.append(open(memory, "wb"))  # the editor truncated the file; its write comes later
        return preserve(name, data)

    store.preserve = preserve_then_a_person_truncates  # type: ignore[method-assign]
    try:
        report = store.projections.repair()
    finally:
        del store.preserve
        for editor in editors:
            editor.write(save)  # through its descriptor: into the file the repair displaced
            editor.close()

    assert len(editors) == 1
    assert memory.read_bytes() == b"kept fact\n"
    assert Path(report.preserved["MEMORY.md (saved during the write)"]).read_bytes() == save
