"""An editor that saves a managed Document *in place* (truncate, then write through the descriptor it holds:
vim with ``backupcopy=yes``, ``open(p, "w").write()``) racing an ``update`` lost its save (an attack pass: 16 of
400 trials). The update read the cut file under its lock, swapped its new version in
(``renameat2(RENAME_EXCHANGE)``) and found the displaced file equal to what it had read, so it removed it; the
editor then wrote its bytes into that removed file. The displaced file is now looked at only once nobody has it
open for writing (a read lease, :func:`mnemon_ls.fsio._settled_displaced`), and one still written past the wait
is kept under ``edits/`` itself (a hard link), so what the editor writes later lands there.

Real threads race a real store; nothing waits on time: one test writes the save exactly after the swap (it
watches the file's inode change), the other races N in-place saves against N updates and asserts that every save
is in the final document or in a copy under ``documents/edits/``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from mnemon_ls import fswatch
from mnemon_ls.errors import UnreadableStore

from tests.documents.test_support import make_store


def _kept(path: Path, edits: Path) -> set[bytes]:
    """The bytes of the managed file and of every saved copy."""
    found = {path.read_bytes()}
    if edits.is_dir():
        found |= {p.read_bytes() for p in edits.iterdir()}
    return found


def test_a_save_written_after_the_swap_through_a_truncated_file_is_kept(tmp_path: Path) -> None:
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    save = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign (typed in place by a person).")
    first_inode = os.stat(path).st_ino
    editor = open(path, "wb")  # the editor truncated the file and has not written it yet
    answers: list[object] = []
    updater = threading.Thread(target=lambda: answers.append(store.update(doc_id, content="Tag, build, ship.")))
    updater.start()
    try:
        while os.stat(path).st_ino == first_inode:  # until the update swapped its version in
            assert updater.is_alive() or answers, "the update failed"
            if not updater.is_alive():
                break
        editor.write(save)  # through the descriptor opened before: into the displaced file
    finally:
        editor.close()
    updater.join(60)
    assert answers, "the update did not finish"
    assert save in _kept(path, root / "documents" / "edits")
    assert path.read_bytes() != save and b"Tag, build, ship." in path.read_bytes()


def test_in_place_saves_racing_updates_are_never_lost(tmp_path: Path) -> None:
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    edits = root / "documents" / "edits"
    template = path.read_bytes()
    lost: list[int] = []
    refused = 0
    for trial in range(400):
        clock.tick()
        save = template.replace(b"Tag, build.", f"Tag, build, in-place save {trial}.".encode())
        start = threading.Barrier(2)

        def edit() -> None:
            start.wait()
            with open(path, "wb") as editor:  # truncate, then write in two parts: a cut file is visible between
                editor.write(save[: len(save) // 2])
                editor.flush()
                editor.write(save[len(save) // 2:])

        editor = threading.Thread(target=edit)
        editor.start()
        start.wait()
        try:
            store.update(doc_id, content=f"Tag, build, update {trial}.")
        except UnreadableStore:
            refused += 1  # it read the file as the editor wrote it (size 0, then bytes): refused, nothing written
        editor.join(60)
        if save not in _kept(path, edits):
            lost.append(trial)
    assert lost == [], f"{len(lost)} of 400 in-place saves lost ({refused} updates refused)"


def test_an_update_reads_the_file_once_an_in_place_save_is_written(tmp_path: Path, monkeypatch) -> None:
    """Under its lock an update reads the managed file only once nobody writes it (at most 1 s): a save cut
    between its truncation and the end of its write was read as it was, and its half was saved under ``edits/`` as
    if it were an edit (46 of 400 copies in the race above were such halves). The editor finishes its save from the
    moment the update first finds it still writing (``_writers_gone``, the look the update makes; no sleep)."""
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    save = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign (typed in place by a person).")
    editor = open(path, "wb")
    editor.write(save[:40])
    editor.flush()  # the editor truncated the file and wrote half of its save
    still_writing = threading.Event()
    looks = fswatch._writers_gone

    def look(fd: int) -> bool | None:
        gone = looks(fd)
        if gone is False:
            still_writing.set()
        return gone

    monkeypatch.setattr(fswatch, "_writers_gone", look)
    answers: list[object] = []
    updater = threading.Thread(target=lambda: answers.append(store.update(doc_id, content="Tag, build, ship.")))
    updater.start()
    try:
        assert still_writing.wait(60)
        editor.write(save[40:])
    finally:
        editor.close()
    updater.join(60)
    edits = sorted((root / "documents" / "edits").iterdir())
    assert [p.read_bytes() for p in edits] == [save]  # the whole save, and no half of it
    assert answers[0].preserved == {"documents/active/" + path.name: str(edits[0])}
