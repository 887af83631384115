"""Import from other assistants in a real VS Code (code-server in Chromium; issue 28 item 2): with a CLAUDE.md and
a Cursor rule in the workspace, "Mnemon: Import Memory from Other Assistants…" shows one multi-select quick pick
grouped by source (Claude Code, Cursor), each item's destination on its description, every item picked but the
Cursor rule's copy of a CLAUDE.md bullet (a duplicate). The person unticks one item and accepts: the receipt says
what was imported, and the CLI reads back exactly the picked entries in MEMORY.md and USER.md, not the unpicked
one nor the duplicate twice. The files and entries are removed again at the end (the window is shared).
The quick pick is saved as ``import-quick-pick.png`` in the artifacts directory."""

from __future__ import annotations

import re

import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS, UI_MS, exact  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

BUILD = "IBIS: the build runs with make ibis."
TERSE = "IBIS: I prefer terse commit messages."
CLUSTER = "IBIS: the staging cluster is in eu-north-1."
TABS = "IBIS: use tabs in Makefiles."
CLAUDE_MD = f"# Ibis notes\n\n- {BUILD}\n- {TERSE}\n- {CLUSTER}\n"
CURSOR_RULE = f"---\ndescription: Ibis style\nalwaysApply: true\n---\n- {TABS}\n- {BUILD}\n"


def entries(code_server, workspace, target: str) -> list[str]:
    return [e["content"] for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", target)["entries"]]


def item_rows(vscode, label: str):
    return vscode.quick_input_rows().filter(has=vscode.page.locator(".label-name").filter(has_text=exact(label)))


def checkbox(row):
    return row.locator(".quick-input-list-checkbox, input[type=checkbox], .monaco-checkbox").first


def test_import_picks_from_claude_md_and_a_cursor_rule(code_server, vscode, e2e_artifacts) -> None:
    workspace = vscode.workspace
    claude, rule = workspace / "CLAUDE.md", workspace / ".cursor" / "rules" / "x.mdc"
    rule.parent.mkdir(parents=True)
    claude.write_text(CLAUDE_MD, encoding="utf-8")
    rule.write_text(CURSOR_RULE, encoding="utf-8")
    try:
        vscode.run_command("Mnemon: Import Memory from Other Assistants…")
        expect(vscode.quick_input.locator(".quick-input-title")).to_contain_text("import 5 items found for", timeout=SERVER_MS)
        for source in ("Claude Code", "Cursor"):
            expect(vscode.quick_input.get_by_text(source, exact=True).first).to_be_visible(timeout=UI_MS)
        expected = {BUILD: "MEMORY.md", TERSE: "USER.md", CLUSTER: "MEMORY.md", TABS: "MEMORY.md"}
        for label, destination in expected.items():
            row = item_rows(vscode, label).first
            expect(row.locator(".label-description")).to_have_text(destination, timeout=UI_MS)
            expect(checkbox(row)).to_be_checked(timeout=UI_MS)
        build_rows = item_rows(vscode, BUILD)
        expect(build_rows).to_have_count(2, timeout=UI_MS)
        duplicate = build_rows.nth(1)
        expect(duplicate.locator(".label-description")).to_have_text("MEMORY.md · skipped: duplicate", timeout=UI_MS)
        expect(duplicate).to_contain_text("duplicate of CLAUDE.md: Ibis notes; a project fact or convention "
                                          "(.cursor/rules/x.mdc: Ibis style)", timeout=UI_MS)
        expect(checkbox(duplicate)).not_to_be_checked(timeout=UI_MS)

        vscode.screenshot(e2e_artifacts, "import-quick-pick", vscode.quick_input)
        checkbox(item_rows(vscode, CLUSTER)).click()  # the person leaves this one out
        expect(checkbox(item_rows(vscode, CLUSTER))).not_to_be_checked(timeout=UI_MS)
        vscode.quick_input.locator(".quick-input-action .monaco-button, .monaco-button").filter(
            has_text=re.compile(r"^\s*OK\s*$")).click()
        vscode.notification("Mnemon: imported 3 items (2 to MEMORY.md, 1 to USER.md).")

        memory, user = entries(code_server, workspace, "memory"), entries(code_server, workspace, "user")
        assert [e for e in memory if e.startswith("IBIS")] == [BUILD, TABS], memory
        assert [e for e in user if e.startswith("IBIS")] == [TERSE], user
        assert claude.read_text(encoding="utf-8") == CLAUDE_MD and rule.read_text(encoding="utf-8") == CURSOR_RULE
    finally:
        vscode.clear_notifications()
        claude.unlink(missing_ok=True)
        rule.unlink(missing_ok=True)
        for directory in (rule.parent, rule.parent.parent):
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
        for target, content in (("memory", BUILD), ("memory", TABS), ("user", TERSE), ("memory", CLUSTER)):
            if content in entries(code_server, workspace, target):
                mnemon_cli(code_server, workspace, "runtime", "remove", "--target", target, "--old-text", content)
