"""A merge that brings nothing new rewrites nothing; a component changed by hand while an import is staged
refuses the swap, so the hand edit is kept (mnemon_ls.packs.importer: ``_Plan.watched``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import PackRefused
from mnemon_ls.packs import importer
from tests.helpers.packs import contents, host_on, seed, unpack
from tests.test_packs import do_import, export

_SKIP = (".search.sqlite3", ".access.lock", ".index.lock", ".memories.lock", ".mnemon-ls-index.db")


def _files(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``root`` but the derived ones: (inode, mtime in ns, bytes)."""
    found = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            if name.startswith(_SKIP) or name.endswith(("-wal", "-shm")):
                continue
            path = Path(folder) / name
            st = path.lstat()
            found[str(path.relative_to(root))] = (st.st_ino, st.st_mtime_ns, path.read_bytes())
    return found


def test_merging_a_pack_of_what_is_here_rewrites_no_file(tmp_path: Path) -> None:
    root = tmp_path / "a"
    seed(root)
    data = export(root)
    before = _files(root)
    assert any(p.startswith("documents/active/") for p in before) and "runtime/MEMORY.md" in before
    receipt = do_import(root, data)
    assert receipt["status"] == "committed"
    assert (receipt["runtime"]["added"], receipt["documents"]["added"], receipt["spaces"]["added"]) == (0, 0, 0)
    assert (receipt["runtime"]["skipped"], receipt["documents"]["skipped"], receipt["spaces"]["skipped"]) == (3, 2, 1)
    after = _files(root)
    assert after == before  # same inodes, times and bytes: nothing was swapped
    assert not [p.name for p in root.iterdir() if p.name.startswith(".dsh-pack")]


def test_a_merge_that_adds_to_one_component_swaps_only_that_one(tmp_path: Path) -> None:
    root, other = tmp_path / "a", tmp_path / "b"
    seed(root)
    seed(other, tag=" (b)")
    data = export(root)
    host = host_on(root)
    try:
        host.documents.create("Only here", "A document the pack does not carry.\n")
    finally:
        host.close()
    before = _files(root)
    receipt = do_import(root, data, components=["documents"])
    assert receipt["documents"] == {"added": 0, "skipped": 2, "renamed": [], "removed": 0}
    assert _files(root) == before
    # a real addition still swaps in (the other root's documents are new here)
    receipt = do_import(root, export(other), components=["documents"])
    assert receipt["documents"]["added"] == 2
    titles = sorted(d[1] for d in contents(root)["documents"])
    assert titles == sorted(["ADR 7", "Old plan", "Only here", "ADR 7 (b)", "Old plan (b)"]), titles
    assert {p: v for p, v in _files(root).items() if p.startswith("runtime/")} == \
        {p: v for p, v in before.items() if p.startswith("runtime/")}


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_a_hand_edit_while_the_import_is_staged_is_kept_and_nothing_is_imported(tmp_path: Path, mode: str) -> None:
    root, other = tmp_path / "a", tmp_path / "b"
    seed(root)
    seed(other, tag=" (b)")
    data = export(other)
    [document] = [p for p in (root / "documents" / "active").iterdir() if p.suffix == ".md"]
    edited = document.read_text(encoding="utf-8") + "\nA line typed by hand during the import.\n"

    def hand_edit(step: str) -> None:
        if step == "staged":
            document.write_text(edited, encoding="utf-8")

    before = contents(root)
    importer._step_hook = hand_edit
    try:
        with pytest.raises(PackRefused) as raised:
            do_import(root, data, mode=mode)
    finally:
        importer._step_hook = None
    assert raised.value.data["reason"] == "changed-meanwhile"
    assert str(root / "documents") in raised.value.message and "nothing was imported" in raised.value.message
    assert document.read_text(encoding="utf-8") == edited
    assert not [p.name for p in root.iterdir() if p.name.startswith(".dsh-pack")]
    assert not (root / "state" / "pack-backups").exists() or not list((root / "state" / "pack-backups").iterdir())
    after = contents(root)
    assert after["entries"] == before["entries"] and after["spaces"] == before["spaces"]
    # run again, the import goes through and the hand edit is in what it kept (merge) or backed up (replace)
    receipt = do_import(root, data, mode=mode)
    assert receipt["status"] == "committed"
    line = b"A line typed by hand during the import."
    if mode == "merge":
        assert line in document.read_bytes()
    else:
        kept = unpack(Path(receipt["backup"]["path"]).read_bytes())
        assert [n for n, b in kept.items() if n.startswith("payload/documents/") and line in b], sorted(kept)


def test_a_hand_edit_of_memory_md_while_the_import_is_staged_is_kept(tmp_path: Path) -> None:
    root, other = tmp_path / "a", tmp_path / "b"
    seed(root)
    seed(other, tag=" (b)")
    data = export(other)
    memory_md = root / "runtime" / "MEMORY.md"
    edited = memory_md.read_text(encoding="utf-8").replace("Deploys go through staging", "Deploys go through canary")
    assert edited != memory_md.read_text(encoding="utf-8")

    def hand_edit(step: str) -> None:
        if step == "staged":
            memory_md.write_text(edited, encoding="utf-8")

    importer._step_hook = hand_edit
    try:
        with pytest.raises(PackRefused) as raised:
            do_import(root, data, components=["runtime"])
    finally:
        importer._step_hook = None
    assert raised.value.data["reason"] == "changed-meanwhile" and str(root / "runtime") in raised.value.message
    assert memory_md.read_text(encoding="utf-8") == edited
    receipt = do_import(root, data, components=["runtime"])
    assert receipt["runtime"]["added"] == 3
    memories = [e[1] for e in contents(root)["entries"] if e[0] == "memory"]
    assert "Deploys go through canary" in memories, memories  # the hand edit counted


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_a_hand_edit_of_memory_md_made_before_the_import_counts(tmp_path: Path, mode: str) -> None:
    root, other = tmp_path / "a", tmp_path / "b"
    seed(root)
    seed(other, tag=" (b)")
    data = export(other)
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8").replace("Deploys go through staging",
                                                                       "Deploys go through canary"), encoding="utf-8")
    receipt = do_import(root, data, mode=mode, components=["runtime"])
    [edit] = receipt["runtime"]["handEdits"]
    assert (edit["file"], edit["status"]) == (str(memory_md), "imported")
    assert Path(edit["savedAs"]).read_text(encoding="utf-8").count("Deploys go through canary") == 1
    memories = sorted(e[1] for e in contents(root)["entries"] if e[0] == "memory")
    if mode == "merge":
        assert memories == ["Deploys go through canary", "Deploys go through staging (b)",
                            "Run tests with pytest -n 2", "Run tests with pytest -n 2 (b)"]
    else:  # replaced, and the backup holds the hand edit, not the entry it changed
        assert memories == ["Deploys go through staging (b)", "Run tests with pytest -n 2 (b)"]
        runtime = json.loads(unpack(Path(receipt["backup"]["path"]).read_bytes())["payload/runtime/memories.json"])
        backed_up = sorted(e["content"] for e in runtime["entries"] if e["target"] == "memory")
        assert backed_up == ["Deploys go through canary", "Run tests with pytest -n 2"], backed_up


def test_an_export_carries_a_hand_edit_of_memory_md(tmp_path: Path) -> None:
    root = tmp_path / "a"
    seed(root)
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n§\nA note typed into MEMORY.md by hand\n",
                         encoding="utf-8")
    host = host_on(root)
    try:
        exported = packs.export_pack(host, "runtime", include_user_profile=True)
    finally:
        host.close()
    [edit] = exported.to_dict()["handEdits"]  # said, as every command that takes a hand edit in says it
    assert (edit["file"], edit["status"]) == (str(memory_md), "imported") and "added" in edit["message"]
    files = unpack(exported.data)
    contents_ = sorted(e["content"] for e in json.loads(files["payload/runtime/memories.json"])["entries"]
                       if e["target"] == "memory")
    assert "A note typed into MEMORY.md by hand" in contents_, contents_
    assert b"A note typed into MEMORY.md by hand" in files["payload/runtime/MEMORY.md"]


def _hand_edit_document(root: Path, line: str) -> Path:
    [document] = [p for p in (root / "documents" / "active").iterdir() if p.suffix == ".md"]
    document.write_text(document.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return document


def test_an_export_carries_a_document_changed_by_hand(tmp_path: Path) -> None:
    root = tmp_path / "a"
    seed(root)
    document = _hand_edit_document(root, "A line typed into the document by hand.")
    host = host_on(root)
    try:  # was refused: "is 372 bytes; the index says sizeBytes 355"
        exported = packs.export_pack(host, "documents")
    finally:
        host.close()
    [edit] = exported.hand_edits
    assert (edit["file"], edit["status"]) == (str(document), "adopted") and "revision 2" in edit["message"]
    files = unpack(exported.data)
    [name] = [n for n, b in files.items() if b"A line typed into the document by hand." in b]
    assert name == f"payload/documents/active/{document.name}"
    [record] = [r for r in json.loads(files["payload/documents/index.json"])["documents"] if r["filename"] == document.name]
    assert (record["sizeBytes"], record["revision"]) == (len(files[name]), 2)


def test_a_replace_after_a_document_changed_by_hand_backs_the_change_up(tmp_path: Path) -> None:
    root, other = tmp_path / "a", tmp_path / "b"
    seed(root)
    seed(other, tag=" (b)")
    _hand_edit_document(root, "A line typed into the document by hand.")
    receipt = do_import(root, export(other), mode="replace")  # was refused: backup-failed
    assert receipt["documents"]["removed"] == 2
    kept = unpack(Path(receipt["backup"]["path"]).read_bytes())
    assert [n for n, b in kept.items() if n.startswith("payload/documents/active/")
            and b"A line typed into the document by hand." in b]
