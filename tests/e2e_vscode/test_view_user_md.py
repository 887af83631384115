"""A full USER.md in a real VS Code (code-server in Chromium; issue 23 item 9): an add that does not fit is ONE
notification, the server's "USER.md is full" with its actions (the request's own error is not shown too), and
"Merge or Drop Entries..." picks numbered entries to merge into one text (an input box) or to drop, sent as
``mnemon/runtime/compact``; the change that did not fit lands with the compaction and the message says what
changed. The store is read back with the CLI; what a test adds to USER.md it removes again."""

from __future__ import annotations

import re

import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS, UI_MS  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

USER_FULL = "USER.md is full: compact it with your assistant, or open it"
#: Two entries of about 1,600 bytes: with a third of 1,000 bytes USER.md (4,096 bytes) overflows.
FILLERS = [f"{w}: " + " ".join(f"{w}-{i}" for i in range(170)) for w in ("kestrel", "osprey")]
TOO_MUCH = "heron: " + " ".join(f"heron-{i}" for i in range(110))
MERGED = "kestrel and osprey notes, merged"


def user_entries(code_server, workspace) -> list[str]:
    return [e["content"] for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", "user")["entries"]]


def remove_user_entries(code_server, workspace, contents: list[str]) -> None:
    for content in contents:
        if content in user_entries(code_server, workspace):
            mnemon_cli(code_server, workspace, "runtime", "remove", "--target", "user", "--old-text", content)


def check(vscode, label: re.Pattern[str]) -> None:
    """Tick the row of the open multi-select quick pick whose label matches ``label``."""
    row = vscode.quick_input_rows().filter(has=vscode.page.locator(".label-name").filter(has_text=label))
    expect(row).to_have_count(1, timeout=UI_MS)
    row.locator(".quick-input-list-checkbox, input[type=checkbox], .monaco-checkbox").first.click()


def accept_picks(vscode) -> None:
    vscode.quick_input.locator(".quick-input-action .monaco-button, .monaco-button").filter(
        has_text=re.compile(r"^\s*OK\s*$")).click()


def test_a_full_user_md_is_one_notification_and_merge_or_drop_makes_room(code_server, vscode) -> None:
    workspace = vscode.workspace
    try:
        for content in FILLERS:
            mnemon_cli(code_server, workspace, "runtime", "add", "--target", "user", "--content", content)
        vscode.run_command("Mnemon: Add Entry")
        vscode.pick("USER.md")
        vscode.input_text(TOO_MUCH)
        toast = vscode.notification(USER_FULL)
        for label in ("Merge or Drop Entries...", "Compact with Assistant", "Open USER.md"):
            expect(vscode.notification_button(toast, label)).to_be_visible(timeout=UI_MS)
        assert TOO_MUCH not in user_entries(code_server, workspace)

        # Merge the two fillers: the pick shows the plan's numbered entries
        vscode.notification_button(toast, "Merge or Drop Entries...").click()
        expect(vscode.quick_input.locator(".quick-input-title")).to_contain_text("merge or drop entries of USER.md",
                                                                                   timeout=UI_MS)
        check(vscode, re.compile(r"^\s*\d+\. kestrel:"))
        check(vscode, re.compile(r"^\s*\d+\. osprey:"))
        accept_picks(vscode)
        vscode.pick("Merge into one entry")
        box = vscode.quick_input.locator("input.input")
        expect(box).to_have_value(re.compile(r"^kestrel: .*; osprey: "), timeout=UI_MS)  # the texts, joined
        vscode.input_text(MERGED)
        done = vscode.notification(re.compile(r"USER\.md compacted: merged \d+, \d+ into “kestrel and osprey notes, "
                                              r"merged”; \d+ → \d+ bytes"))
        expect(done).to_be_visible(timeout=SERVER_MS)
        entries = user_entries(code_server, workspace)
        assert MERGED in entries and TOO_MUCH in entries, entries  # the add that did not fit landed with it
        assert not set(FILLERS) & set(entries), entries

        # One failure, one notification: the refused add said nothing of its own. (Before, it also showed
        # "Mnemon: not added: USER.md is full ..." with Open USER.md / Remove entries... / Raise limit: an error
        # toast with actions, which stays until dismissed, so it would still be listed here.)
        messages = [t.inner_text() for t in vscode.toasts.all()]
        assert not [m for m in messages if "not added" in m or "not compacted" in m], messages
        assert len([m for m in messages if USER_FULL in m]) <= 1, messages
    finally:
        remove_user_entries(code_server, workspace, [*FILLERS, TOO_MUCH, MERGED])


def test_drop_from_the_palette_numbers_the_entries_as_runtime_list(code_server, vscode) -> None:
    workspace = vscode.workspace
    mine = "e2e: a USER.md fact to drop from the palette"
    try:
        mnemon_cli(code_server, workspace, "runtime", "add", "--target", "user", "--content", mine)
        number = user_entries(code_server, workspace).index(mine) + 1
        vscode.run_command("Mnemon: Merge or Drop Entries...")
        check(vscode, re.compile(rf"^\s*{number}\. {re.escape(mine)}\s*$"))
        accept_picks(vscode)
        vscode.pick("Drop the picked entries")
        vscode.notification(re.compile(rf"USER\.md compacted: dropped {number}; \d+ → \d+ bytes"))
        assert mine not in user_entries(code_server, workspace)
    finally:
        remove_user_entries(code_server, workspace, [mine])
