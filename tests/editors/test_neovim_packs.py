""":MnemonPackExport and :MnemonPackImport in a real headless Neovim with a real mnemon-ls (both Neovim
binaries, like tests/editors/test_neovim.py)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers.packs import contents, seed

from .nvim_helpers import Session
from .test_neovim import ERROR, INFO, binary, session  # noqa: F401 (fixtures)


def test_pack_export_and_import(session: Session, tmp_path: Path) -> None:  # noqa: F811
    one, two = tmp_path / "one", tmp_path / "two"
    make_repo(one, "main")
    make_repo(two, "main")
    seed(one / ".mnemon")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage"})
    session.open(one / "a.txt")
    session.wait_attached()
    pack = tmp_path / "out.zip"
    mark = session.mark()
    session.nv.command(f"MnemonPackExport documents {pack}")
    note = session.wait_note("mnemon: exported documents pack", mark)
    assert note["level"] == INFO and str(pack) in note["msg"]
    with zipfile.ZipFile(pack) as archive:
        assert json.loads(archive.read("manifest.json"))["components"] == ["documents"]
    full = tmp_path / "full.zip"
    session.nv.command(f"MnemonPackExport {full}")
    note = session.wait_note("mnemon: exported full pack", mark)
    assert "USER.md: 1 entry left out" in note["msg"]  # the user profile stays here unless asked for
    assert f"to {full} ({full.stat().st_size} bytes; " in note["msg"]
    with zipfile.ZipFile(full) as archive:
        assert [e for e in json.loads(archive.read("payload/runtime/memories.json"))["entries"] if e["target"] == "user"] == []
    carried = tmp_path / "with-profile.zip"
    session.nv.command(f"MnemonPackExport! runtime {carried}")  # ! includes the user profile
    note = session.wait_note("mnemon: exported runtime pack", mark)
    assert "USER.md: carries 1 entry (your user profile)" in note["msg"] and "left out" not in note["msg"]
    with zipfile.ZipFile(carried) as archive:
        users = [e for e in json.loads(archive.read("payload/runtime/memories.json"))["entries"] if e["target"] == "user"]
    assert [e["content"] for e in users] == [e[1] for e in contents(one / ".mnemon")["entries"] if e[0] == "user"]

    session.open(two / "b.txt")
    session.wait_attached()
    mark = session.mark()
    session.nv.command(f"MnemonPackImport {full}")
    note = session.wait_note("mnemon: pack imported (merge)", mark)
    assert "runtime: 2 added" in note["msg"] and "documents: 2 added" in note["msg"]
    got, want = contents(two / ".mnemon"), contents(one / ".mnemon")
    want["entries"] = [e for e in want["entries"] if e[0] != "user"]
    assert got == want

    # replace asks first; "Cancel" changes nothing, "Replace" replaces the chosen component
    session.lua("""
        T.answers = ...
        vim.ui.select = function(items, opts, on_choice) on_choice(table.remove(T.answers, 1)) end
    """, ["Cancel", "Replace"])
    before = contents(two / ".mnemon")
    session.nv.command(f"MnemonPackImport! {pack} documents")
    session.wait("#T.answers == 1", "the replace confirmation (answered Cancel)")
    assert contents(two / ".mnemon") == before
    mark = session.mark()
    session.nv.command(f"MnemonPackImport! {pack} documents")
    note = session.wait_note("mnemon: pack imported (replace)", mark)
    # the same two documents again: already here, none removed; the backup and its restore command named
    assert "documents: 0 added, 2 already here, 0 removed; what was replaced is saved in " in note["msg"], note["msg"]
    assert "/state/pack-backups/mnemon-backup-" in note["msg"] and "(restore: MNEMON_DATA_DIR=" in note["msg"] and " mnemon-ls pack import " in note["msg"]

    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    mark = session.mark()
    session.nv.command(f"MnemonPackImport {bad}")
    note = session.wait_note("pack not imported (nothing changed)", mark)
    assert note["level"] == ERROR and "pack-invalid" in note["msg"]


def test_pack_export_without_a_file_proposes_the_exports_folder(session: Session, tmp_path: Path) -> None:  # noqa: F811
    """:MnemonPackExport with no file asks where, proposing the server's exports folder
    (``<global root>/state/pack-exports/mnemon-backup-<time>.zip``, here under MNEMON_DATA_DIR), never the
    cwd (the git work tree); accepting the proposal writes the pack there."""
    import re

    one = tmp_path / "one"
    make_repo(one, "main")
    seed(one / ".mnemon")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage"})
    session.open(one / "a.txt")
    session.wait_attached()
    session.nv.command(f"cd {one}")
    session.lua("vim.ui.input = function(opts, on_confirm) T.proposed = opts.default; on_confirm(opts.default) end")
    mark = session.mark()
    session.nv.command("MnemonPackExport runtime")
    note = session.wait_note("mnemon: exported runtime pack", mark)
    proposed = Path(session.lua("return T.proposed"))
    assert proposed.parent == tmp_path / "data" / "state" / "pack-exports", proposed
    assert re.fullmatch(r"mnemon-backup-\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3}\.zip", proposed.name), proposed
    assert f"to {proposed} (" in note["msg"] and proposed.is_file()
    assert not list(one.glob("*.zip"))
