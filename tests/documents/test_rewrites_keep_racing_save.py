"""Documents' own rewrites replaced or removed a managed file with no look at what a person saved after the read
(an editor takes no lock): archive removed the source file it had read, the repair of an interrupted move removed
the other copy, the redaction rewrite and an orphan's adoption renamed over the file. Each now goes through the
watched path (:func:`mnemon_ls.fsio.replace_watching`, :func:`mnemon_ls.fsio.remove_watching`) and keeps a save
made since under ``documents/edits/``.

The save is made at a real point of the sequence, from the store's step seam after the archive committed (under
its lock, after its read, before the source is removed). No sleeps."""

from __future__ import annotations

import os
from pathlib import Path

from tests.documents.test_support import make_store


def save_by_rename(path: Path, data: bytes) -> None:
    tmp = path.with_name(".editor-save")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_save_to_the_source_of_an_archive_after_its_read_is_kept(tmp_path: Path) -> None:
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    save = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign (typed by a person).")

    def a_person_saves(step: str) -> None:
        if step == "archive:committed":
            save_by_rename(path, save)  # the archive read the file and committed; the source is removed next

    store._step_hook = a_person_saves
    answer = store.moves.archive(doc_id, 1, summary="done")
    store._step_hook = None

    assert not path.exists()
    edits = sorted((root / "documents" / "edits").iterdir())
    assert [p.read_bytes() for p in edits] == [save]
    assert answer.preserved == {"documents/active/" + path.name + " (saved during the write)": str(edits[0])}


def test_an_in_place_save_to_the_source_of_an_archive_is_kept(tmp_path: Path) -> None:
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    save = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign (typed in place).")
    editors = []

    def a_person_truncates(step: str) -> None:
        if step == "archive:committed":
            editors.append(open(path, "wb"))  # truncated; the editor writes after the archive removed the file

    store._step_hook = a_person_truncates
    try:
        answer = store.moves.archive(doc_id, 1, summary="done")
    finally:
        store._step_hook = None
        for editor in editors:
            editor.write(save)
            editor.close()

    assert len(editors) == 1 and not path.exists()
    kept = answer.preserved["documents/active/" + path.name + " (saved during the write)"]
    assert Path(kept).read_bytes() == save


def test_a_save_while_redaction_rewrites_a_document_is_kept(tmp_path: Path, monkeypatch) -> None:
    from mnemon_ls.documents import redaction

    from tests.redact_samples import AWS_ID

    store, root, _workspace, clock = make_store(tmp_path, secrets="allow")
    created = store.create("Deploy notes", f"Use key {AWS_ID} for the deploy.")
    path = Path(created.document.path)
    clock.tick()
    save = path.read_bytes().replace(f"Use key {AWS_ID} for the deploy.".encode(), b"The key is in the vault now.")
    render = redaction.render_markdown
    saves = []

    def render_then_a_person_saves(record, body):
        if not saves:  # after the redaction read the file under its lock, before it renames its rewrite over it
            save_by_rename(path, save)
            saves.append(save)
        return render(record, body)

    monkeypatch.setattr(redaction, "render_markdown", render_then_a_person_saves)
    result = redaction.apply(store)
    monkeypatch.undo()

    assert saves == [save] and result["documents"] == 1
    assert AWS_ID.encode() not in path.read_bytes()
    edits = sorted((root / "documents" / "edits").iterdir())
    assert [p.read_bytes() for p in edits] == [save]


def test_the_person_and_the_assistant_are_told_where_a_save_during_an_archive_is_kept(tmp_path: Path) -> None:
    """The archive's ``preserved`` reached the JSON only: the command line's text and the assistant's said
    "Document archived" and nothing of the save kept under ``documents/edits/``."""
    from mnemon_ls.ops import documents as document_ops, humantext, modeltext

    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    save = path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign (typed by a person).")
    store._step_hook = lambda step: save_by_rename(path, save) if step == "archive:committed" else None
    data = store.moves.archive(doc_id, 1, summary="done").to_dict()
    store._step_hook = None
    [kept] = (root / "documents" / "edits").iterdir()
    line = f"kept documents/active/{path.name} (saved during the write) at {kept}"
    assert line in document_ops._mutation_text(data, None, None).splitlines()
    assert line in modeltext.document_result(data).splitlines()
    assert humantext.document_updated(data).endswith(f"; {line}")
