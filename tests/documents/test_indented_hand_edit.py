"""A managed file edited by hand so its body starts with a line indented as a Markdown code block (real files).

The document format trims a body (reference dsh-mnemon.md 5.2-5.3), so adopting such an edit would rewrite the
file without that indentation. The refresh leaves the file byte for byte as typed instead, does not adopt it and
says why (the notice, and ``doctor`` until the file changes); an update that then replaces the body saves the
edited bytes under ``edits/`` first; once the first line is not indented the edit is adopted as usual. A file
dropped by hand into ``active/`` with such a body is set aside unchanged to ``orphans/`` with the reason.
"""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.documents import DocumentStore, diagnose

from tests.documents.test_support import make_store

NOTICE = ("the body's first line is indented (4 spaces), a Markdown code block whose indentation a document body "
          "cannot keep: a body is stored without its leading and trailing whitespace (the document format's rule); "
          "not adopted, the file stays as it is: start the body with a line that is not indented, e.g. a heading, "
          "or fence the code block with ```")


def hand_edit(path: Path, body: str) -> bytes:
    """Replace the body of the managed file ``path`` (its frontmatter kept) and return the file's new bytes."""
    text = path.read_text(encoding="utf-8")
    end = text.index("\n---\n") + 5
    data = (text[:end] + body).encode("utf-8")
    path.write_bytes(data)
    return data


def test_an_indented_hand_edit_is_kept_as_typed_not_adopted_and_reported(tmp_path: Path) -> None:
    store, root, workspace, clock = make_store(tmp_path)
    created = store.create("Snippet", "# Main\nThe entry point.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    rel = created.document.record.relative_path
    index_before = (root / "documents" / "index.json").read_bytes()
    clock.tick()
    edited = hand_edit(path, "\n    def main():\n        pass\n")

    report = store.freshness.refresh()
    assert report.adopted == [] and report.preserved == {}
    assert f"{rel}: {NOTICE}" in report.notices
    assert path.read_bytes() == edited  # every byte as typed
    assert (root / "documents" / "index.json").read_bytes() == index_before
    assert not (root / "documents" / "edits").exists()

    # a read (which refreshes first) leaves it as it is too; a new process is told again; doctor says why
    assert store.get(doc_id).content == "def main():\n        pass"
    assert path.read_bytes() == edited
    again = DocumentStore(root, workspace, clock=clock, freshness_seconds=0.0).freshness.refresh()
    assert again.adopted == [] and f"{rel}: {NOTICE}" in again.notices
    finding = next(f for f in diagnose(store) if f.subject == str(path))
    assert finding.level == "warning" and "first line is indented (4 spaces)" in finding.advice
    assert path.read_bytes() == edited

    # an update replacing the body saves the edited bytes under edits/ first
    updated = store.update(doc_id, content="# Main\n\n    def main():\n        pass")
    saved = Path(updated.preserved[rel])
    assert saved.parent == root / "documents" / "edits" and saved.read_bytes() == edited
    assert updated.document.record.revision == 2

    # an edit whose first line is not indented is adopted as usual
    clock.tick()
    hand_edit(path, "# Main\n    def main():\n        return 0\n")
    adopted = store.freshness.refresh()
    assert adopted.adopted == [doc_id]
    assert store.get(doc_id).content == "# Main\n    def main():\n        return 0"


def test_a_tab_indented_edit_is_not_adopted_and_three_spaces_are(tmp_path: Path) -> None:
    store, _, _, clock = make_store(tmp_path)
    created = store.create("Notes", "First.")
    doc_id, path = created.document.record.id, Path(created.document.path)
    clock.tick()
    edited = hand_edit(path, "\tcode()\n")
    report = store.freshness.refresh()
    assert report.adopted == [] and any("first line is indented (1 tab)" in n for n in report.notices)
    assert path.read_bytes() == edited
    clock.tick()
    hand_edit(path, "   Three spaces carry nothing in Markdown.\n")
    assert store.freshness.refresh().adopted == [doc_id]
    assert store.get(doc_id).content == "Three spaces carry nothing in Markdown."


def test_a_file_dropped_in_by_hand_with_an_indented_body_is_set_aside_unchanged(tmp_path: Path) -> None:
    store, root, _, _ = make_store(tmp_path)
    store.create("Existing", "Something.")
    dropped = root / "documents" / "active" / "snippet.md"
    dropped.write_bytes(b"    def main():\n        pass\n")
    report = store.freshness.refresh()
    assert report.repair is not None and report.repair.adopted == []
    [aside] = report.repair.set_aside
    assert aside["file"] == "documents/active/snippet.md"
    assert "starts its body with a line indented as a code block (4 spaces)" in aside["reason"]
    assert Path(aside["to"]).read_bytes() == b"    def main():\n        pass\n" and not dropped.exists()
    assert [d.record.title for d in store.list().documents] == ["Existing"]


def test_an_update_of_the_title_saves_an_indentation_only_hand_edit_first(tmp_path: Path) -> None:
    """A hand edit that only indents the body's first line changes no hash (the trim drops it), so no refresh
    adopts it and the file stays as typed; an update that rewrites the file for another field (the title) saves
    those bytes under ``edits/`` first instead of trimming them away."""
    store, root, _workspace, clock = make_store(tmp_path)
    created = store.create("Snippet", "def main():\n    pass")
    doc_id, path = created.document.record.id, Path(created.document.path)
    rel = created.document.record.relative_path
    clock.tick()
    edited = hand_edit(path, "    def main():\n    pass\n")
    assert store.freshness.refresh().adopted == []
    assert path.read_bytes() == edited

    updated = store.update(doc_id, title="Entry point")
    saved = Path(updated.preserved[rel])
    assert saved.parent == root / "documents" / "edits" and saved.read_bytes() == edited
    assert updated.document.record.title == "Entry point" and updated.document.record.revision == 2
    # an ordinary title update (nothing edited by hand) saves nothing
    again = store.update(doc_id, title="Entry")
    assert again.preserved == {} and sorted(p.name for p in saved.parent.iterdir()) == [saved.name]


def test_archiving_keeps_an_indentation_only_hand_edit_under_edits(tmp_path: Path) -> None:
    """Archiving moves a document by writing it under ``archived/`` (its body trimmed, as the format keeps it)
    and removing the active file: a hand edit there that only the trim drops (a code-block indentation) is saved
    under ``edits/`` first, byte for byte; an ordinary archive saves nothing."""
    store, root, _workspace, clock = make_store(tmp_path)
    plain = store.create("Plain", "Nothing edited.").document.record.id
    created = store.create("Snippet", "def main():\n    pass")
    doc_id, path = created.document.record.id, Path(created.document.path)
    rel = created.document.record.relative_path
    clock.tick()
    edited = hand_edit(path, "    def main():\n    pass\n")
    archived = store.moves.archive(doc_id, None, summary="kept for reference")
    saved = Path(archived.preserved[rel])
    assert saved.parent == root / "documents" / "edits" and saved.read_bytes() == edited
    assert not path.exists()
    assert store.moves.archive(plain, None, summary="done").preserved == {}


def test_an_archive_and_a_restore_read_the_moved_file_once(tmp_path: Path, monkeypatch) -> None:
    """The body and the indented-hand-edit check of an archive come from one reading of the active file (it was
    read twice: ``files.committed_body``, then again in ``moves._move``); a restore reads the archived file once.
    The real reads run; a wrapper only counts them per path."""
    from mnemon_ls.documents import files as files_module

    store, _, _, clock = make_store(tmp_path)
    created = store.create("Snippet", "def main():\n    pass")
    doc_id, active = created.document.record.id, Path(created.document.path)
    clock.tick()
    edited = hand_edit(active, "    def main():\n    pass\n")  # the indentation-only hand edit is still saved
    reads: list[str] = []
    real = files_module.read_regular_file

    def counting(path, *args, **kwargs):
        reads.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files_module, "read_regular_file", counting)
    archived = store.moves.archive(doc_id, None, summary="kept")
    assert reads.count(str(active)) == 1
    assert Path(archived.preserved[created.document.record.relative_path]).read_bytes() == edited
    reads.clear()
    restored = store.moves.restore(doc_id)
    assert reads.count(archived.document.path) == 1
    assert restored.document.record.status == "active" and restored.preserved == {}
