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
from tests.e2e_vscode.workbench import SERVER_MS, UI_MS, format_usage  # noqa: E402
from mnemon_ls.runtime.model import joined_bytes  # noqa: E402
from tests.gitrepo import switch  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

#: The receipt toast of a remember: "Mnemon: Entry added. MEMORY.md[ for branch B]: N entries, 1.2 KiB of 10 KiB."
RECEIPT = re.compile(r"MEMORY\.md(?: for branch (?P<branch>\S+))?: (?P<count>\d+) (?:entry|entries), "
                     r"(?P<usage>\S+ \S+ of \S+ \S+)\.")
#: MEMORY.md's limit in this window (the default; test_view.py raises it later).
MEMORY_LIMIT = 10240


def memory_entries(code_server, workspace) -> list[dict]:
    """MEMORY.md's entries as the CLI lists them (every branch's)."""
    return mnemon_cli(code_server, workspace, "runtime", "list", "--target", "memory")["entries"]


def usage_line(count: int, usage: str) -> str:
    """The MEMORY.md line of the status bar tooltip (src/format.ts usageLine), ``usage`` as src/units.ts writes it."""
    return f"MEMORY.md: {count} {'entry' if count == 1 else 'entries'}, {usage}"


def stored_usage(entries: list[dict]) -> str:
    """MEMORY.md's usage from its entries as the CLI lists them (UTF-8 bytes joined by the § delimiter), as
    the extension writes it."""
    return format_usage(joined_bytes(e["content"] for e in entries), MEMORY_LIMIT)


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


def test_the_empty_views_offer_to_create_what_is_missing(code_server, vscode, e2e_artifacts) -> None:
    """A fresh store: the Documents and Memory Spaces views are empty and say so with a button that creates the
    missing thing; an empty MEMORY.md offers a row that adds an entry. Each button is pressed and leads to its
    input (dismissed here: nothing is created, later tests start from an empty store)."""
    assert mnemon_cli(code_server, vscode.workspace, "doc", "list")["documents"] == []
    assert mnemon_cli(code_server, vscode.workspace, "space", "list") == []
    vscode.run_command("View: Close All Editors")  # "Create Document from File" would take the active file
    vscode.show_mnemon()
    documents, spaces = vscode.view("Documents"), vscode.view("Memory Spaces")
    create_document = documents.locator(".welcome-view-content .monaco-button").filter(has_text="Create Document from File")
    create_space = spaces.locator(".welcome-view-content .monaco-button").filter(has_text="Create Memory Space")
    expect(documents.locator(".welcome-view-content")).to_contain_text("No documents yet", timeout=SERVER_MS)
    expect(spaces.locator(".welcome-view-content")).to_contain_text("No Memory Spaces yet", timeout=SERVER_MS)
    expect(create_document).to_be_visible(timeout=UI_MS)
    expect(create_space).to_be_visible(timeout=UI_MS)
    runtime = vscode.view("Runtime Memory")
    add = vscode.row(runtime, "No entries yet").filter(has_text="Add an entry to MEMORY.md…")
    expect(add).to_have_count(1, timeout=SERVER_MS)
    # The container's first layout gives Runtime Memory the room (package.json initialSize), not a third.
    pane, other = runtime.bounding_box(), documents.bounding_box()
    assert pane and other and pane["height"] >= 1.5 * other["height"], (pane, other)
    vscode.screenshot(e2e_artifacts, "empty-views-offer-to-create", vscode.page.locator('[id="workbench.view.extension.mnemon"]'))

    create_space.click()
    expect(vscode.quick_input).to_contain_text("new Memory Space", timeout=UI_MS)
    vscode.page.keyboard.press("Escape")
    vscode.wait_quick_input_closed()
    create_document.click()  # no file in hand: a file dialog asks which one
    expect(vscode.quick_input).to_contain_text("create a document from which file", timeout=UI_MS)
    vscode.page.keyboard.press("Escape")
    vscode.wait_quick_input_closed()
    add.click()
    expect(vscode.quick_input).to_contain_text("add an entry to MEMORY.md", timeout=UI_MS)
    vscode.page.keyboard.press("Escape")
    vscode.wait_quick_input_closed()
    assert mnemon_cli(code_server, vscode.workspace, "space", "list") == []
    assert mnemon_cli(code_server, vscode.workspace, "doc", "list")["documents"] == []


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
    # The size in the one unit rule of the extension (src/units.ts), from the bytes the store really holds.
    assert receipt["usage"] == stored_usage(entries), receipt["usage"]
    # The status bar follows the write: its tooltip gives the receipt's count and size.
    expect(vscode.status_item).to_have_attribute(
        "aria-label", re.compile(re.escape(usage_line(len(entries), receipt["usage"]))), timeout=SERVER_MS)


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
