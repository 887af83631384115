"""The Mnemon extension in a real VS Code (code-server in Chromium): installed from its ``.vsix``, started
on a git repository, driven from the command palette; the store it writes is read back with the CLI, and
git is moved from outside the editor with pygit2 (as a terminal would)."""

from __future__ import annotations

import re

import pygit2
import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import EXTENSION_ID, mnemon_cli  # noqa: E402
from tests.e2e_vscode.conftest import FEATURE, MAIN, WORKSPACE_FILES  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS  # noqa: E402
from tests.gitrepo import switch  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

#: The receipt toast of a remember: "Mnemon: Entry added. MEMORY.md[ for branch B]: N entries, U/L bytes."
RECEIPT = re.compile(r"MEMORY\.md(?: for branch (?P<branch>\S+))?: (?P<count>\d+) (?:entry|entries), "
                     r"(?P<used>\d+)/(?P<limit>\d+) bytes\.")


def memory_entries(code_server, workspace) -> list[dict]:
    """MEMORY.md's entries as the CLI lists them (every branch's)."""
    return mnemon_cli(code_server, workspace, "runtime", "list", "--target", "memory")["entries"]


def usage_line(count: int, used: int, limit: int) -> str:
    """The MEMORY.md line of the status bar tooltip (src/format.ts usageLine)."""
    return f"MEMORY.md: {count} {'entry' if count == 1 else 'entries'}, {used}/{limit} bytes"


def test_the_vsix_installs_into_code_server_and_the_extension_starts_its_server(code_server, vscode) -> None:
    assert "successfully installed" in code_server.install_output, code_server.install_output
    listed = code_server.cli("--list-extensions", "--show-versions")
    assert listed.returncode == 0, listed.stderr
    assert f"{EXTENSION_ID}@0.1.0" in listed.stdout.split(), listed.stdout
    # The status bar item is the extension's, filled from mnemon/status: the branch and MEMORY.md usage.
    vscode.expect_status(re.compile(rf"^\s*{MAIN} · MEMORY \d+%\s*$"))
    tooltip = vscode.status_tooltip()
    assert f"Branch: {MAIN}" in tooltip and "MEMORY.md:" in tooltip and "USER.md:" in tooltip, tooltip
    # Nothing the window loaded came from anywhere but this code-server.
    assert vscode.page.foreign_requests == []


def test_remember_selection_from_the_command_palette_writes_memory_md_and_updates_the_status_bar(code_server, vscode) -> None:
    before = memory_entries(code_server, vscode.workspace)
    vscode.open_file("notes.txt")
    vscode.select_all()
    vscode.run_command("Mnemon: Remember Selection")
    receipt = RECEIPT.search(vscode.notification("Entry added. MEMORY.md").inner_text())
    assert receipt and receipt["branch"] is None, receipt
    entries = memory_entries(code_server, vscode.workspace)
    added = [e for e in entries if e not in before]
    assert [e["content"] for e in added] == [WORKSPACE_FILES["notes.txt"].strip()]
    assert int(receipt["count"]) == len(entries)
    # The status bar follows the write: its tooltip gives the receipt's count and bytes.
    expect(vscode.status_item).to_have_attribute(
        "aria-label", re.compile(re.escape(usage_line(len(entries), int(receipt["used"]), int(receipt["limit"])))),
        timeout=SERVER_MS)


def test_a_branch_switch_outside_the_editor_changes_the_status_bar(code_server, vscode, e2e_repo: pygit2.Repository) -> None:
    vscode.open_file("branch-note.txt")
    vscode.select_all()
    vscode.run_command("Mnemon: Remember Selection for This Branch")
    receipt = RECEIPT.search(vscode.notification(f"MEMORY.md for branch {MAIN}").inner_text())
    assert receipt and receipt["branch"] == MAIN, receipt
    scoped = [e for e in memory_entries(code_server, vscode.workspace)
              if e["content"] == WORKSPACE_FILES["branch-note.txt"].strip()]
    assert [e.get("branches") for e in scoped] == [[MAIN]], scoped
    try:
        switch(e2e_repo, FEATURE)  # git switch feature, from outside the editor
        vscode.expect_status(re.compile(rf"^\s*{FEATURE} · MEMORY \d+%\s*$"))
        expect(vscode.status_item).to_have_attribute("aria-label", re.compile(rf"Branch: {FEATURE}\b"), timeout=SERVER_MS)
    finally:
        switch(e2e_repo, MAIN)
    vscode.expect_status(re.compile(rf"^\s*{MAIN} · MEMORY \d+%\s*$"))


def test_create_document_from_file_makes_a_document_with_the_file_as_its_source(code_server, vscode) -> None:
    before = {d["id"] for d in mnemon_cli(code_server, vscode.workspace, "doc", "list")["documents"]}
    vscode.open_file("docs/ADR-7.md")
    vscode.run_command("Mnemon: Create Document from File")
    toast = vscode.notification("created document")
    assert "ADR-7: Search with SQLite FTS5" in toast.inner_text()
    created = [d for d in mnemon_cli(code_server, vscode.workspace, "doc", "list")["documents"] if d["id"] not in before]
    assert [(d["title"], d["sourcePaths"], d["status"]) for d in created] == [
        ("ADR-7: Search with SQLite FTS5", ["docs/ADR-7.md"], "active")]
    assert created[0]["relativePath"] in toast.inner_text()
