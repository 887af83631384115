"""Mnemon Packs from a real VS Code (code-server in Chromium): "Mnemon: Export Pack" driven from the command
palette with and without the user profile, the ZIP it wrote opened here (manifest, checksums, payload), and
the left-out count its message reports checked against the USER.md entries the CLI lists for the same
store. Cancelling a step of the export writes no file."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.workbench import UI_MS, format_bytes  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

#: The export message (src/requestsPacks.ts exportedMessage): the file, its size, then what was left out.
EXPORTED = re.compile(r"exported (?P<scope>\S+) pack to (?P<path>\S+) \((?P<size>[\d.]+ (?:B|KiB|MiB))\)\.")
LEFT_OUT = re.compile(r"USER\.md: (?P<count>\d+) (?:entry|entries) left out \(your user profile stays on this machine")
CARRIED = re.compile(r"USER\.md: carries (?P<count>\d+) (?:entry|entries) \(your user profile\)")
PROFILE_OUT, PROFILE_IN = "Leave my user profile out", "Include my user profile"
#: The placeholders of the scope and the user-profile quick picks (src/packs.ts, src/requestsPacks.ts).
SCOPE_PROMPT, PROFILE_PROMPT = "what goes into the pack?", "include your user profile (USER.md)?"
#: The file name the save dialog proposes (the reference's, in the exports folder: mnemon/pack/exportFolder).
PROPOSED = re.compile(r"mnemon-backup-\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3}\.zip")
#: Where it proposes it: ``<global root>/state/pack-exports`` (~/.mnemon here), never the workspace folder.
EXPORTS = (".mnemon", "state", "pack-exports")


def user_entries(code_server, workspace: Path) -> list[str]:
    """USER.md's entries (contents) as the CLI lists them for the workspace."""
    return [e["content"] for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", "user")["entries"]]


def open_pack(path: Path) -> tuple[dict, dict[str, bytes]]:
    """The manifest and every other entry of the pack at ``path``, after checking checksums.json covers
    exactly the payload with the right sha256 of each file."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        files = {name: archive.read(name) for name in names}
    assert names[:2] == ["manifest.json", "checksums.json"], names
    checksums = json.loads(files.pop("checksums.json"))
    manifest = json.loads(files.pop("manifest.json"))
    assert checksums["algorithm"] == "sha256"
    assert checksums["files"] == {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    return manifest, files


def expect_placeholder(vscode, text: str) -> None:
    """Wait until the open quick pick is the one whose placeholder contains ``text``."""
    expect(vscode.quick_input.locator("input.input")).to_have_attribute(
        "placeholder", re.compile(re.escape(text)), timeout=UI_MS)


def choose(vscode, label: str) -> None:
    """Choose ``label`` in the open quick pick with the keyboard: type it (the pick filters on labels) until
    its row is the only one, then Enter. (A click could land on the tooltip of the row under the mouse.)"""
    box = vscode.quick_input.locator("input.input")
    box.fill(label)
    rows = vscode.quick_input_rows()
    expect(rows).to_have_count(1, timeout=UI_MS)
    # The row's shown label: a row element the list reuses keeps the hidden detail line of an earlier pick's item.
    expect(rows.locator(".label-name").filter(visible=True)).to_have_text(label, timeout=UI_MS)
    box.press("Enter")


def export_from_palette(vscode, scope: str, profile: str | None, name: str, keep: Path) -> tuple[str, Path]:
    """Run "Mnemon: Export Pack", choose ``scope`` and (when asked) ``profile``, save as ``name`` where the
    dialog proposes (the exports folder, checked); returns the text of the message that follows and the pack,
    moved into ``keep`` after the message names it (so the workspace is left as it was)."""
    # A text editor of the folder in front (the folder the export is of; and no webview of an earlier test,
    # such as a document preview still loading, can take the focus and so close the quick pick).
    vscode.open_file("notes.txt")
    vscode.run_command("Mnemon: Export Pack")
    expect_placeholder(vscode, SCOPE_PROMPT)
    choose(vscode, scope)
    if profile is not None:
        expect_placeholder(vscode, PROFILE_PROMPT)
        choose(vscode, profile)
    written = vscode.save_as(name, PROPOSED)
    assert written.parent.parts[-3:] == EXPORTS and vscode.workspace not in written.parents, written
    text = vscode.notification(f"pack to {written}").inner_text()
    said = EXPORTED.search(text)
    assert said and said["path"] == str(written), text
    assert said["size"] == format_bytes(written.stat().st_size), text  # in the extension's one unit rule
    return text, Path(shutil.move(written, keep / name))


def test_export_pack_leaves_the_user_profile_out_unless_included(code_server, vscode, tmp_path: Path) -> None:
    workspace = vscode.workspace
    mine = "Prefers the KESTREL keyboard layout"
    mnemon_cli(code_server, workspace, "runtime", "add", "--target", "user", "--content", mine)
    try:
        profile = user_entries(code_server, workspace)
        memory = [e["content"] for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", "memory")["entries"]]
        assert mine in profile

        # The default choice: the user profile stays here; the message counts what it left out.
        text, left = export_from_palette(vscode, "Runtime memory", PROFILE_OUT, "pack-left-out.zip", tmp_path)
        assert EXPORTED.search(text)["scope"] == "runtime", text
        count = LEFT_OUT.search(text)
        assert count and int(count["count"]) == len(profile), text
        manifest, files = open_pack(left)
        assert (manifest["format"], manifest["version"], manifest["scope"], manifest["components"]) == (
            "mnemonpack", 1, "runtime", ["runtime"])
        assert sorted(files) == ["payload/runtime/MEMORY.md", "payload/runtime/USER.md", "payload/runtime/memories.json"]
        entries = json.loads(files["payload/runtime/memories.json"])["entries"]
        assert [e for e in entries if e["target"] == "user"] == [] and files["payload/runtime/USER.md"] == b""
        assert sorted(e["content"] for e in entries if e["target"] == "memory") == sorted(memory)
        vscode.clear_notifications()

        # Included: the pack carries every USER.md entry, and nothing is said to be left out.
        text, carried = export_from_palette(vscode, "Full", PROFILE_IN, "pack-with-profile.zip", tmp_path)
        assert EXPORTED.search(text)["scope"] == "full", text
        assert not LEFT_OUT.search(text), text
        count = CARRIED.search(text)
        assert count and int(count["count"]) == len(profile), text
        manifest, files = open_pack(carried)
        assert manifest["components"] == ["runtime", "documents", "memory-spaces"]
        entries = json.loads(files["payload/runtime/memories.json"])["entries"]
        assert sorted(e["content"] for e in entries if e["target"] == "user") == sorted(profile)
        assert sorted(e["content"] for e in entries if e["target"] == "memory") == sorted(memory)
        assert mine in files["payload/runtime/USER.md"].decode()
        assert "payload/documents/index.json" in files
    finally:  # the later tests' views show USER.md as the suite left it
        mnemon_cli(code_server, workspace, "runtime", "remove", "--target", "user", "--old-text", mine)


def test_a_documents_pack_asks_nothing_about_the_user_profile(code_server, vscode, tmp_path: Path) -> None:
    text, pack = export_from_palette(vscode, "Documents", None, "pack-documents.zip", tmp_path)
    assert "USER.md" not in text, text
    manifest, files = open_pack(pack)
    assert manifest["components"] == ["documents"] and "payload/documents/index.json" in files
    assert not any(name.startswith("payload/runtime/") for name in files)


def test_cancelling_the_export_at_any_step_writes_nothing(code_server, vscode, tmp_path: Path) -> None:
    before = sorted(vscode.workspace.rglob("*.zip"))
    for steps in ([], ["Runtime memory"], ["Runtime memory", PROFILE_OUT]):
        vscode.open_file("notes.txt")
        vscode.run_command("Mnemon: Export Pack")
        expect_placeholder(vscode, SCOPE_PROMPT)
        if steps:
            choose(vscode, steps[0])
            expect_placeholder(vscode, PROFILE_PROMPT)
        if len(steps) == 2:
            choose(vscode, steps[1])
            vscode.expect_save_dialog(PROPOSED)  # the last step: where to save
        vscode.page.mouse.move(700, 600)  # (away from the rows: no tooltip of one to take the Escape)
        vscode.quick_input.locator("input.input").press("Escape")
        vscode.wait_quick_input_closed()
    assert sorted(vscode.workspace.rglob("*.zip")) == before
    # Then one export that goes through: its message is the only one, and its file the only one written.
    export_from_palette(vscode, "Runtime memory", PROFILE_OUT, "pack-after-cancel.zip", tmp_path)
    expect(vscode.toasts.filter(has_text="pack to")).to_have_count(1)
    assert sorted(vscode.workspace.rglob("*.zip")) == before
    assert list(tmp_path.iterdir()) == [tmp_path / "pack-after-cancel.zip"]
