"""A save of a managed Document by someone who does not take the lock (a person's editor), landing after an
``update`` read the file under the lock and before it renamed its new version into place, was replaced
without a trace (an attack pass, h-attack49: a real second process saving by rename beside 300 updates lost
166 of 400 saves). The write now swaps the files atomically (``renameat2(RENAME_EXCHANGE)``,
:func:`mnemon_ls.fsio.write_files_atomically`) and keeps what it displaced under ``documents/edits/``, reported
in ``preserved``; the refresh that adopts an edit and rewrites its frontmatter does the same.

The save is made at a real point of the sequence (real files, a real store): inside the capacity check the
update runs under the lock after its read, and inside the rendering of the adopted record."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemon_ls import fsio
from mnemon_ls.documents import freshness
from mnemon_ls.documents.model import split_markdown

from tests.documents.test_support import make_store


def save_by_rename(path: Path, data: bytes) -> None:
    """What an editor's save does: write a temp file beside ``path``, rename it over."""
    tmp = path.with_name(".editor-save")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@pytest.mark.parametrize("swap", ["exchange", "no exchange"])
def test_a_save_between_the_read_and_the_rename_of_an_update_is_kept(tmp_path: Path, monkeypatch, swap: str) -> None:
    if swap == "no exchange":  # a system without renameat2: the file is read again just before the rename
        monkeypatch.setattr(fsio, "_renameat2", lambda: None)
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    saved = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign (typed by a person).")
    fit = store.capacity.fit

    def fit_then_a_person_saves(*args, **kwargs):
        save_by_rename(path, saved)  # under the update's lock, after its read: the person holds no lock
        return fit(*args, **kwargs)

    store.capacity.fit = fit_then_a_person_saves
    answer = store.update(doc_id, content="Tag, build, ship.")
    store.capacity.fit = fit

    assert split_markdown(path.read_text(encoding="utf-8"))[1] == "Tag, build, ship."
    edits = sorted((root / "documents" / "edits").iterdir())
    assert [p.read_bytes() for p in edits] == [saved]  # the person's save, byte for byte
    assert answer.preserved == {"documents/active/" + path.name: str(edits[0])}


def test_a_save_while_a_refresh_rewrites_the_adopted_file_is_kept(tmp_path: Path, monkeypatch) -> None:
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    first = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign.")
    save_by_rename(path, first)  # a hand edit the refresh adopts (and rewrites: its frontmatter is stale)
    second = first.replace(b"sign.", b"sign, announce.")
    render = freshness.render_markdown

    def render_then_a_person_saves_again(record, body):
        save_by_rename(path, second)  # after the refresh read the first save, before it renames its rewrite
        return render(record, body)

    monkeypatch.setattr(freshness, "render_markdown", render_then_a_person_saves_again)
    report = store.freshness.refresh()
    monkeypatch.undo()

    assert report.adopted == [doc_id]
    assert store.get(doc_id).content == "Tag, build, sign."
    edits = sorted((root / "documents" / "edits").iterdir())
    assert [p.read_bytes() for p in edits] == [second]
    assert list(report.preserved.values()) == [str(edits[0])]
