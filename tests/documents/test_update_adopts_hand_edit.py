"""A no-op ``update`` of a document whose managed file was edited by hand to the very text sent (real files, a
real store): it answered the new body with the old ``contentHash`` and revision until the next refresh adopted
the edit, so a client checking the body against the hash saw a mismatch. The update now adopts the edit under
the lock, as a refresh does, and answers the adopted record, with the action ``adopted`` (it said ``unchanged``
while the revision it answered was a new one)."""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.documents import DocumentStore
from mnemon_ls.documents.model import sha256_hex, split_markdown

from tests.documents.test_support import make_store


def test_an_update_with_the_hand_edited_text_answers_the_adopted_record(tmp_path: Path) -> None:
    store, root, workspace, clock = make_store(tmp_path)
    created = store.create("Release plan", "Tag, build.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    path.write_bytes(path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign."))  # a hand edit

    answer = store.update(doc_id, content="Tag, build, sign.")
    record = answer.document.record
    on_disk = split_markdown(path.read_text(encoding="utf-8"))[1]
    # the action says what happened, as the revision does: the edit was taken in as revision 2 (it said "unchanged")
    assert answer.action == "adopted" and answer.document.content == on_disk == "Tag, build, sign."
    assert record.content_hash == sha256_hex(on_disk)  # contentHash: sha256 of the body as stored
    assert record.revision == 2
    assert answer.notices == ("no change to the text sent; the body on disk, edited outside mnemon-ls, already is "
                              "that text and was adopted as revision 2",)
    assert answer.preserved == {} and not (root / "documents" / "edits").exists()
    shown = store.get(doc_id).record
    assert (shown.revision, shown.content_hash) == (record.revision, record.content_hash)
    fresh = DocumentStore(root, workspace, clock=clock, freshness_seconds=0.0)
    assert fresh.freshness.refresh().adopted == []  # nothing left for a refresh to adopt
    assert fresh.get(doc_id).record.revision == 2

    again = store.update(doc_id, content="Tag, build, sign.")  # now a plain no-op
    assert again.action == "unchanged" and again.document.record.revision == 2
    assert again.notices == ("no change; revision 2 kept",)
