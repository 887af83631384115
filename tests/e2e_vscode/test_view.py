"""The Mnemon view container in a real VS Code (code-server in Chromium): the Runtime Memory, Documents, Memory
Spaces and Recall Results tree views, their inline and context-menu actions, and the capacity actions.
Every change made in the view is read back from the store with the CLI; every change made outside (git)
must show in the view."""

from __future__ import annotations

import json
import re

import pygit2
import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.conftest import FEATURE, MAIN, WORKSPACE_FILES  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS, UI_MS  # noqa: E402
from tests.gitrepo import switch  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

RUNTIME, DOCUMENTS, SPACES, RECALL = "Runtime Memory", "Documents", "Memory Spaces", "Recall Results"
#: The MEMORY.md limit the capacity test sets through "Raise limit" (default 10240 bytes).
RAISED_LIMIT = 32768


def text_of(name: str) -> str:
    """The content a remember of the whole file ``name`` stores (the selection, trimmed)."""
    return WORKSPACE_FILES[name].strip()


def memory_contents(code_server, workspace) -> list[str]:
    return [e["content"] for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", "memory")["entries"]]


def entries_label(count: int) -> str:
    return f"{count} {'entry' if count == 1 else 'entries'}"


def remember_file(vscode, name: str, command: str = "Mnemon: Remember Selection") -> None:
    vscode.open_file(name)
    vscode.select_all()
    vscode.run_command(command)


def test_the_runtime_view_shows_a_selection_remembered_with_the_keybinding(code_server, vscode) -> None:
    vscode.open_file("view-note.txt")
    vscode.select_all()
    vscode.page.keyboard.press("Control+Alt+m")  # the Remember Selection keybinding
    vscode.notification("Entry added. MEMORY.md")
    assert text_of("view-note.txt") in memory_contents(code_server, vscode.workspace)
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    count = len(memory_contents(code_server, vscode.workspace))
    memory_md = vscode.row(runtime, "MEMORY.md")
    expect(vscode.description(memory_md)).to_contain_text(entries_label(count), timeout=SERVER_MS)
    entry = vscode.row(runtime, text_of("view-note.txt"))
    expect(entry).to_be_visible(timeout=SERVER_MS)
    expect(vscode.description(entry)).to_contain_text("normal", timeout=UI_MS)


def add_from_the_view(vscode, runtime, content: str) -> None:
    """Add a MEMORY.md entry with the inline "Add Entry" action of the MEMORY.md row."""
    vscode.inline_action(vscode.row(runtime, "MEMORY.md"), "Add Entry")
    vscode.input_text(content)
    vscode.notification("Entry added. MEMORY.md")
    expect(vscode.row(runtime, content)).to_be_visible(timeout=SERVER_MS)


def test_edit_an_entry_from_the_view_replaces_it_in_the_store(code_server, vscode) -> None:
    old, new = "The view adds this entry", "The view edited this entry"
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    add_from_the_view(vscode, runtime, old)
    assert old in memory_contents(code_server, vscode.workspace)
    vscode.context_menu(vscode.row(runtime, old), "Edit Entry")
    expect(vscode.quick_input.locator("input.input")).to_have_value(old, timeout=UI_MS)
    vscode.input_text(new)
    expect(vscode.row(runtime, new)).to_be_visible(timeout=SERVER_MS)
    expect(vscode.row(runtime, old)).to_have_count(0, timeout=SERVER_MS)
    contents = memory_contents(code_server, vscode.workspace)
    assert new in contents and old not in contents, contents


def test_remove_an_entry_from_the_view_takes_it_out_of_the_store(code_server, vscode) -> None:
    content = "The view removes this entry"
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    add_from_the_view(vscode, runtime, content)
    before = memory_contents(code_server, vscode.workspace)
    vscode.inline_action(vscode.row(runtime, content), "Remove Entry")
    toast = vscode.notification(f'removed "{content}" from MEMORY.md')
    expect(vscode.notification_button(toast, "Undo")).to_be_visible(timeout=UI_MS)
    expect(vscode.row(runtime, content)).to_have_count(0, timeout=SERVER_MS)
    after = memory_contents(code_server, vscode.workspace)
    assert content not in after and len(after) == len(before) - 1, after
    expect(vscode.description(vscode.row(runtime, "MEMORY.md"))).to_contain_text(entries_label(len(after)), timeout=SERVER_MS)


def document_statuses(code_server, workspace) -> dict[str, str]:
    """Each document's status ("active", "archived") by title, as the store has it."""
    return {d["title"]: d["status"] for d in mnemon_cli(code_server, workspace, "doc", "list")["documents"]}


def test_archive_and_restore_from_the_documents_view_change_the_document_in_the_store(code_server, vscode) -> None:
    """The row's inline actions send the request they are named after: Archive Document leaves the document
    archived in the store, Restore Document active again; each says so in the status bar."""
    title = "Archive drill: the view archives, then restores, this document"
    if title not in document_statuses(code_server, vscode.workspace):
        mnemon_cli(code_server, vscode.workspace, "doc", "create", "--title", title, "--content",
                   "Archived, then restored, from the Documents view.")
    assert document_statuses(code_server, vscode.workspace)[title] == "active"
    vscode.show_mnemon()
    documents = vscode.only(DOCUMENTS)  # room for both groups' rows (a tree draws only the rows in sight)
    archived_group = vscode.row(documents, "Archived")
    statusbar = vscode.page.locator(".statusbar-item")

    vscode.inline_action(vscode.row(documents, title), "Archive Document")
    expect(statusbar.filter(has_text=f'Mnemon: archived "{title}"')).to_be_visible(timeout=SERVER_MS)
    statuses = document_statuses(code_server, vscode.workspace)
    assert statuses[title] == "archived", statuses
    archived = sum(status == "archived" for status in statuses.values())
    expect(vscode.description(archived_group)).to_have_text(str(archived), timeout=SERVER_MS)

    if archived_group.get_attribute("aria-expanded") != "true":
        archived_group.click()  # (the Archived group starts collapsed)
    expect(archived_group).to_have_attribute("aria-expanded", "true", timeout=UI_MS)
    vscode.inline_action(vscode.row(documents, title), "Restore Document")
    expect(statusbar.filter(has_text=f'Mnemon: restored "{title}"')).to_be_visible(timeout=SERVER_MS)
    statuses = document_statuses(code_server, vscode.workspace)
    assert statuses[title] == "active", statuses
    expect(vscode.description(archived_group)).to_have_text(str(archived - 1), timeout=SERVER_MS)
    archived_group.click()  # collapsed again, as the view opens
    expect(archived_group).to_have_attribute("aria-expanded", "false", timeout=UI_MS)


def test_a_branch_switch_outside_the_editor_changes_the_view_and_the_status_bar(code_server, vscode,
                                                                                 e2e_repo: pygit2.Repository) -> None:
    content = text_of("scoped-note.txt")
    remember_file(vscode, "scoped-note.txt", "Mnemon: Remember Selection for This Branch")
    vscode.notification(f"MEMORY.md for branch {MAIN}")
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    entry = vscode.row(runtime, content)
    expect(vscode.description(entry)).to_contain_text(MAIN, timeout=SERVER_MS)
    expect(vscode.description(entry)).not_to_contain_text("hidden", timeout=UI_MS)
    try:
        switch(e2e_repo, FEATURE)  # git switch feature, from outside the editor
        vscode.expect_status(re.compile(rf"^\s*{FEATURE} · MEMORY \d+%\s*$"))
        expect(vscode.description(entry)).to_contain_text(f"hidden on {FEATURE}", timeout=SERVER_MS)
        expect(vscode.description(vscode.row(runtime, "MEMORY.md"))).to_contain_text("hidden on this branch", timeout=SERVER_MS)
    finally:
        switch(e2e_repo, MAIN)
    vscode.expect_status(re.compile(rf"^\s*{MAIN} · MEMORY \d+%\s*$"))
    expect(vscode.description(entry)).not_to_contain_text("hidden", timeout=SERVER_MS)


def test_recall_finds_what_was_remembered_in_a_space_created_from_the_view(code_server, vscode) -> None:
    name, description = "Decisions", "Decisions about this repository"
    vscode.show_mnemon()
    spaces = vscode.view(SPACES)
    vscode.view_action(spaces, "Create Memory Space")
    # Two input boxes in a row, each waited for by its own prompt (src/providers.ts createSpaceIn).
    vscode.input_text(name, prompt="Name (1 to 100 characters)")
    vscode.input_text(description, prompt="What belongs in it")
    vscode.notification(f'created the Memory Space "{name}" (active)')
    space = vscode.row(spaces, name)
    expect(vscode.description(space)).to_contain_text("active", timeout=SERVER_MS)
    listed = mnemon_cli(code_server, vscode.workspace, "space", "list")
    assert [(s["name"], s["description"], s["active"]) for s in listed] == [(name, description, True)], listed
    try:
        # Remember into it: with an active space, Remember Selection asks where to.
        remember_file(vscode, "decision.txt")
        vscode.pick(name)
        vscode.notification(f"Remembered in {name}.")
        # Recall from the space's inline action: the results view opens with the item, from that space.
        vscode.show_mnemon()
        vscode.inline_action(vscode.row(vscode.view(SPACES), name), "Recall from This Space")
        vscode.input_text("HERON queue")
        results = vscode.view(RECALL)
        hit = vscode.row(results, text_of("decision.txt"))
        expect(hit).to_be_visible(timeout=SERVER_MS)
        expect(vscode.description(hit)).to_contain_text(name, timeout=UI_MS)
        # Deactivate it from the view: recall skips it, Remember Selection stops asking.
        vscode.inline_action(vscode.row(vscode.view(SPACES), name), "Deactivate Memory Space")
        expect(vscode.description(vscode.row(vscode.view(SPACES), name))).to_contain_text("inactive", timeout=SERVER_MS)
    finally:
        for listed_space in mnemon_cli(code_server, vscode.workspace, "space", "list"):
            if listed_space["active"]:  # a failure above must not leave later tests a target pick
                mnemon_cli(code_server, vscode.workspace, "space", "deactivate", listed_space["id"])
    assert [s["active"] for s in mnemon_cli(code_server, vscode.workspace, "space", "list")] == [False]


def test_the_capacity_actions_open_memory_md_remove_entries_and_raise_the_limit(code_server, vscode) -> None:
    a, b, c = (text_of(f"filler-{n}.txt") for n in "abc")
    for name in ("filler-a.txt", "filler-b.txt"):
        remember_file(vscode, name)
        vscode.notification("Entry added. MEMORY.md")
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    expect(vscode.row(runtime, "MEMORY.md is nearly full")).to_be_visible(timeout=SERVER_MS)

    # 1. Open MEMORY.md
    vscode.clear_notifications()
    remember_file(vscode, "filler-c.txt")
    toast = vscode.notification("not remembered")
    for label in ("Open MEMORY.md", "Remove entries...", "Raise limit"):
        expect(vscode.notification_button(toast, label)).to_be_visible(timeout=UI_MS)
    vscode.notification_button(toast, "Open MEMORY.md").click()
    expect(vscode.page.locator('.tabs-container .tab.active[data-resource-name="MEMORY.md"]')).to_be_visible(timeout=SERVER_MS)
    assert c not in memory_contents(code_server, vscode.workspace)

    # 2. Remove entries...: pick filler a, then c fits.
    remember_file(vscode, "filler-c.txt")
    vscode.notification_button(vscode.notification("not remembered"), "Remove entries...").click()
    row = vscode.quick_input_rows().filter(has=vscode.page.locator(".label-name").filter(has_text=re.compile(r"^\s*Filler a:")))
    row.locator(".quick-input-list-checkbox, input[type=checkbox], .monaco-checkbox").first.click()
    vscode.quick_input.locator(".quick-input-action .monaco-button, .monaco-button").filter(has_text=re.compile(r"^\s*OK\s*$")).click()
    vscode.notification("removed 1 entry from MEMORY.md")
    assert a not in memory_contents(code_server, vscode.workspace)
    remember_file(vscode, "filler-c.txt")
    vscode.notification("Entry added. MEMORY.md")

    # 3. Raise limit: the Settings editor opens on the limit; a higher limit lets filler a in again.
    remember_file(vscode, "filler-a.txt")
    vscode.notification_button(vscode.notification("not remembered"), "Raise limit").click()
    setting = vscode.page.locator(".settings-editor .setting-item").filter(has_text="Memory Limit Bytes")
    value = setting.locator("input").first
    expect(value).to_have_value("10240", timeout=SERVER_MS)
    value.fill(str(RAISED_LIMIT))
    value.press("Enter")
    # The Settings editor writes the user settings; the server re-pulls them on didChangeConfiguration and
    # sends nothing back, so "Refresh Views" is run until MEMORY.md's row shows the new limit (each run
    # waits on the row's text; bounded).
    memory_md = vscode.row(runtime, re.compile(r"^\s*MEMORY\.md\s*$"))
    for attempt in range(10):
        vscode.run_command("Mnemon: Refresh Views")
        try:
            expect(vscode.description(memory_md)).to_contain_text("of 32 KiB", timeout=2_000)
            break
        except AssertionError:
            if attempt == 9:
                raise
    settings = json.loads((code_server.user_data / "User" / "settings.json").read_text())
    assert settings["mnemon.runtimeMemory.memoryLimitBytes"] == RAISED_LIMIT, settings
    remember_file(vscode, "filler-a.txt")
    vscode.notification("Entry added. MEMORY.md")
    assert a in memory_contents(code_server, vscode.workspace)
    vscode.show_mnemon()
    expect(vscode.row(vscode.view(RUNTIME), re.compile("MEMORY.md is"))).to_have_count(0, timeout=SERVER_MS)
