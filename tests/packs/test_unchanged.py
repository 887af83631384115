"""A merge that brings nothing new rewrites nothing; a component changed by hand while an import is staged
refuses the swap, so the hand edit is kept (mnemon_ls.packs.plan: ``ImportPlan.watched``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import PackRefused
from mnemon_ls.packs import swap
from tests.helpers.packs import contents, host_on, seed, unpack
from tests.packs.test_packs import do_import, export

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


def _two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """Roots ``a`` and ``b``, each seeded (``b``'s contents tagged " (b)")."""
    root, other = tmp_path / "a", tmp_path / "b"
    seed(root)
    seed(other, tag=" (b)")
    return root, other


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
    root, other = _two_roots(tmp_path)
    data = export(root)
    host = host_on(root)
    try:
        host.documents.create("Only here", "A document the pack does not carry.\n")
    finally:
        host.close()
    before = _files(root)
    receipt = do_import(root, data, components=["documents"])
    assert receipt["documents"] == {"added": 0, "skipped": 2, "renamed": [], "removed": 0, "pendingHandEdits": []}
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
    root, other = _two_roots(tmp_path)
    data = export(other)
    [document] = [p for p in (root / "documents" / "active").iterdir() if p.suffix == ".md"]
    edited = document.read_text(encoding="utf-8") + "\nA line typed by hand during the import.\n"

    def hand_edit(step: str) -> None:
        if step == "staged":
            document.write_text(edited, encoding="utf-8")

    before = contents(root)
    swap._step_hook = hand_edit
    try:
        with pytest.raises(PackRefused) as raised:
            do_import(root, data, mode=mode)
    finally:
        swap._step_hook = None
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
    root, other = _two_roots(tmp_path)
    data = export(other)
    memory_md = root / "runtime" / "MEMORY.md"
    edited = memory_md.read_text(encoding="utf-8").replace("Deploys go through staging", "Deploys go through canary")
    assert edited != memory_md.read_text(encoding="utf-8")

    def hand_edit(step: str) -> None:
        if step == "staged":
            memory_md.write_text(edited, encoding="utf-8")

    swap._step_hook = hand_edit
    try:
        with pytest.raises(PackRefused) as raised:
            do_import(root, data, components=["runtime"])
    finally:
        swap._step_hook = None
    assert raised.value.data["reason"] == "changed-meanwhile" and str(root / "runtime") in raised.value.message
    assert memory_md.read_text(encoding="utf-8") == edited
    receipt = do_import(root, data, components=["runtime"])
    assert receipt["runtime"]["added"] == 3
    memories = [e[1] for e in contents(root)["entries"] if e[0] == "memory"]
    assert "Deploys go through canary" in memories, memories  # the hand edit counted


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_a_hand_edit_of_memory_md_made_before_the_import_counts(tmp_path: Path, mode: str) -> None:
    root, other = _two_roots(tmp_path)
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
    root, other = _two_roots(tmp_path)
    _hand_edit_document(root, "A line typed into the document by hand.")
    receipt = do_import(root, export(other), mode="replace")  # was refused: backup-failed
    assert receipt["documents"]["removed"] == 2
    kept = unpack(Path(receipt["backup"]["path"]).read_bytes())
    assert [n for n, b in kept.items() if n.startswith("payload/documents/active/")
            and b"A line typed into the document by hand." in b]


def test_a_hand_edit_after_the_import_was_decided_rolls_the_swap_back_and_is_kept(tmp_path: Path) -> None:
    root, other = _two_roots(tmp_path)
    data = export(other)
    before = contents(root)
    document = _hand_edit_document(root, "typed before")  # (taken in by the import first: revision 2)

    def hand_edit(step: str) -> None:
        if step == "journal":  # decided: past the check before the journal, the swap has not moved anything
            document.write_text(document.read_text(encoding="utf-8") + "\ntyped while it swaps\n", encoding="utf-8")

    swap._step_hook = hand_edit
    try:
        with pytest.raises(PackRefused) as raised:
            do_import(root, data, mode="replace")
    finally:
        swap._step_hook = None
    assert raised.value.data["reason"] == "changed-meanwhile" and str(root / "documents") in raised.value.message
    assert document.read_text(encoding="utf-8").endswith("\ntyped while it swaps\n")
    assert not [p.name for p in root.iterdir() if p.name.startswith(".dsh-pack")]  # rolled back: no journal
    after = contents(root)
    assert after["entries"] == before["entries"] and after["spaces"] == before["spaces"]  # nothing imported


KILLED = r"""
import os, signal, sys
from pathlib import Path
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.packs import swap
from mnemon_ls.settings import load_settings

root, pack = sys.argv[1:3]
swap._step_hook = lambda name: os.kill(os.getpid(), signal.SIGKILL) if name == "journal" else None
host = WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": root, "runtimeUserScope": "storage"}))
host.import_pack(Path(pack).read_bytes(), mode="merge")
"""


def test_a_hand_edit_between_a_killed_import_and_its_roll_forward_is_kept_aside_and_reported(tmp_path: Path) -> None:
    import subprocess
    import sys

    from mnemon_ls.packs.swap import displaced_findings
    from tests.helpers import procs

    root, other = _two_roots(tmp_path)
    pack = tmp_path / "b.zip"
    pack.write_bytes(export(other))
    killed = subprocess.run([sys.executable, "-c", KILLED, str(root), str(pack)], capture_output=True, text=True,
                            timeout=procs.WAIT_SECONDS)
    assert killed.returncode == -9, killed.stderr
    assert (root / ".dsh-pack-swap.json").exists()  # decided, not swapped
    document = _hand_edit_document(root, "typed after the import was killed")
    typed = document.read_bytes()
    got = contents(root)  # a new host rolls the decided swap forward
    assert "ADR 7 (b)" in [d[1] for d in got["documents"]]
    [kept] = [p for p in root.iterdir() if p.name.startswith(".dsh-pack-displaced-")]
    assert (kept / "documents" / "active" / document.name).read_bytes() == typed  # nothing lost
    [finding] = displaced_findings(root)
    assert (finding.level, finding.subject) == ("warning", str(kept)) and "documents" in finding.message


def test_under_hand_edits_restore_the_import_says_it_restored_the_file_and_where_the_edit_is(tmp_path: Path) -> None:
    root, other = _two_roots(tmp_path)
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n§\ntyped by hand\n", encoding="utf-8")
    host = host_on(root, handEdits="restore")
    try:
        receipt = host.import_pack(export(other), components=["runtime"])
    finally:
        host.close()
    [edit] = receipt["runtime"]["handEdits"]
    assert (edit["file"], edit["status"]) == (str(memory_md), "restored")
    assert Path(edit["savedAs"]).read_text(encoding="utf-8").endswith("typed by hand\n")
    assert "typed by hand" not in memory_md.read_text(encoding="utf-8")


def test_an_export_refuses_an_archived_document_changed_by_hand_naming_the_file_and_the_rule(tmp_path: Path) -> None:
    root = tmp_path / "a"
    seed(root)
    [archived] = [p for p in (root / "documents" / "archived").iterdir() if p.suffix == ".md"]
    archived.write_text(archived.read_text(encoding="utf-8") + "\nedited after it was archived\n", encoding="utf-8")
    with pytest.raises(PackRefused) as raised:  # was: "entry:payload/documents/archived/...: is N bytes; ..."
        export(root, "documents")
    assert raised.value.data == {"reason": "document-changed", "file": str(archived)}
    assert raised.value.message.startswith(f"{archived} (document ")
    assert "could not be taken in: archived documents are immutable; nothing was exported. Put the file back" \
        in raised.value.message


def test_under_reject_an_export_refuses_a_document_a_token_was_typed_into(tmp_path: Path) -> None:
    from tests.redact_samples import GITHUB_PAT

    root = tmp_path / "a"
    seed(root)
    document = _hand_edit_document(root, f"push with {GITHUB_PAT}")
    host = host_on(root, secrets="reject")
    try:
        with pytest.raises(PackRefused) as raised:
            packs.export_pack(host, "documents")
    finally:
        host.close()
    assert raised.value.data == {"reason": "document-changed", "file": str(document)}
    assert "it holds what looks like a credential (secrets is reject)" in raised.value.message
    assert GITHUB_PAT not in raised.value.message


def test_a_dry_run_names_the_hand_edits_the_import_would_take_in_first(tmp_path: Path) -> None:
    root, other = _two_roots(tmp_path)
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n§\ntyped by hand\n", encoding="utf-8")
    document = _hand_edit_document(root, "typed by hand too")
    before = _files(root)
    receipt = do_import(root, export(other), dry_run=True)
    assert receipt["runtime"]["pendingHandEdits"] == [str(memory_md)]
    assert receipt["documents"]["pendingHandEdits"] == [str(document)]
    assert _files(root) == before  # named, not taken in
    real = do_import(root, export(other))
    assert real["runtime"]["pendingHandEdits"] == [] and [e["file"] for e in real["runtime"]["handEdits"]] == [str(memory_md)]


def test_a_write_to_a_placed_directory_before_the_swap_rolls_back_is_kept_aside(tmp_path: Path) -> None:
    root, other = _two_roots(tmp_path)
    data = export(other)
    memory_md = root / "runtime" / "MEMORY.md"
    document = _hand_edit_document(root, "typed before")

    def hand_edit(step: str) -> None:
        if step == "swap:0:placed":  # runtime/ is the pack's now; documents/ is still to be swapped
            memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n§\nwritten to the new copy\n",
                                 encoding="utf-8")
            document.write_text(document.read_text(encoding="utf-8") + "\nand the document\n", encoding="utf-8")

    swap._step_hook = hand_edit
    try:
        with pytest.raises(PackRefused) as raised:
            do_import(root, data)
    finally:
        swap._step_hook = None
    assert raised.value.data["reason"] == "changed-meanwhile"
    [kept] = raised.value.data["displaced"]
    assert Path(kept).name == "runtime" and "written to the new copy" in (Path(kept) / "MEMORY.md").read_text()
    assert kept in raised.value.message
    assert document.read_text(encoding="utf-8").endswith("\nand the document\n")  # rolled back in place


KILLED_COMPARING = r"""
import os, signal, sys
from pathlib import Path
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.packs import swap
from mnemon_ls.settings import load_settings

root, pack, document = sys.argv[1:4]
def edit(name):
    if name == "journal":
        with open(document, "a", encoding="utf-8") as f:
            f.write("\ntyped while the swap compared\n")
swap._step_hook = edit
swap._changed_since = lambda pair, moved: os.kill(os.getpid(), signal.SIGKILL)  # killed mid-compare
host = WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": root, "runtimeUserScope": "storage"}))
host.import_pack(Path(pack).read_bytes(), mode="merge", components=["documents"])
"""


def test_a_kill_while_the_swap_compares_a_moved_directory_keeps_the_change(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.helpers import procs

    root, other = _two_roots(tmp_path)
    pack = tmp_path / "b.zip"
    pack.write_bytes(export(other))
    [document] = [p for p in (root / "documents" / "active").iterdir() if p.suffix == ".md"]
    killed = subprocess.run([sys.executable, "-c", KILLED_COMPARING, str(root), str(pack), str(document)],
                            capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    assert killed.returncode == -9, killed.stderr
    contents(root)  # a new host rolls the swap forward
    [kept] = [p for p in root.iterdir() if p.name.startswith(".dsh-pack-displaced-")]
    assert (kept / "documents" / "active" / document.name).read_text(encoding="utf-8").endswith(
        "\ntyped while the swap compared\n")


@pytest.mark.parametrize("secrets", ["redact", "reject"])
def test_a_markdown_file_dropped_into_documents_is_adopted_in_the_managed_form_and_exported(
        tmp_path: Path, secrets: str) -> None:
    from tests.redact_samples import GITHUB_PAT

    root = tmp_path / "a"
    seed(root)
    active = root / "documents" / "active"
    (active / "my-notes.md").write_text("Just notes, no frontmatter.\n", encoding="utf-8")
    (active / "dropped.md").write_text(f"# Dropped\n\ndeploy key {GITHUB_PAT}\n", encoding="utf-8")
    host = host_on(root, secrets=secrets)
    try:
        titles = sorted(d.record.title for d in host.documents.list().documents)
        exported = packs.export_pack(host, "documents")  # was refused: "its frontmatter id None differs ..."
    finally:
        host.close()
    files = unpack(exported.data)
    assert b"Just notes, no frontmatter." in files["payload/documents/active/my-notes.md"]
    assert not any(GITHUB_PAT.encode() in b for b in files.values())
    on_disk = [p for p in root.rglob("*") if p.is_file() and GITHUB_PAT.encode() in p.read_bytes()]
    if secrets == "redact":
        assert titles == ["ADR 7", "Dropped", "Old plan", "my-notes"] and on_disk == []
        assert b"deploy key [redacted:github-token]" in files["payload/documents/active/dropped.md"]
    else:  # not adopted: set aside, out of the memory, and said
        assert titles == ["ADR 7", "Old plan", "my-notes"]
        assert [p.parent.name for p in on_disk] == ["orphans"]


def test_a_frontmatter_edited_by_hand_is_kept_and_does_not_block_export_or_replace(tmp_path: Path) -> None:
    root, other = _two_roots(tmp_path)
    [document] = [p for p in (root / "documents" / "active").iterdir() if p.suffix == ".md"]
    edited = document.read_text(encoding="utf-8").replace('title: "ADR 7"', 'title: "ADR 7, renamed by hand"')
    assert edited != document.read_text(encoding="utf-8")
    document.write_text(edited, encoding="utf-8")
    host = host_on(root)
    try:
        exported = packs.export_pack(host, "documents")  # was refused: document-changed
    finally:
        host.close()
    [note] = exported.hand_edits
    assert (note["file"], note["status"]) == (str(document), "frontmatter-kept")
    assert b'title: "ADR 7"\n' in unpack(exported.data)[f"payload/documents/active/{document.name}"]
    receipt = do_import(root, export(other), mode="replace")  # was refused: backup-failed
    assert receipt["documents"]["removed"] == 2
    [kept] = [p for p in (root / "documents" / "edits").iterdir() if p.name.endswith(document.name)]
    assert kept.read_text(encoding="utf-8") == edited
