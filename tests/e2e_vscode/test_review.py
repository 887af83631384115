"""Memory where the code is, in a real VS Code (code-server in Chromium; issue 24 item 5): a memory citing a file
puts a code lens on the cited lines ("1 memory cites this"); once the person changes those lines and saves, the
"Needs Review" view lists the memory ("code changed"), and "Still True: Re-anchor to the Current Code" re-anchors
it: the view says nothing needs review and the lens no longer says changed. Issue 24 item 6: an entry nobody
updated for 120 days (its times made old by hand in memories.json) is listed as "review due", and "Still True"
confirms it (the row goes; memories.json stays byte for byte). The store is read back with the CLI; the memories
are removed again at the end."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

FILE = "cited_parser.py"
MEMORY = "The KINGFISHER parser splits on whitespace"


def test_a_lens_on_cited_code_and_still_true_from_needs_review(code_server, vscode) -> None:
    workspace = vscode.workspace
    (workspace / FILE).write_text("def parse(text):\n    return text.split()\n", encoding="utf-8")
    mnemon_cli(code_server, workspace, "runtime", "add", "--content", MEMORY, "--cite", f"{FILE}:1-2")
    try:
        vscode.open_file(FILE)
        lens = vscode.editor.locator(".codelens-decoration")
        expect(lens.filter(has_text="1 memory cites this").first).to_be_visible(timeout=SERVER_MS)

        # The person changes the cited line and saves: the memory needs review.
        vscode.focus_editor()
        vscode.page.keyboard.press("Control+Home")
        vscode.page.keyboard.press("End")
        vscode.page.keyboard.press("Backspace")  # "def parse(text):" -> "def parse(text)"
        vscode.page.keyboard.type(": # splits")
        vscode.page.keyboard.press("Control+s")
        vscode.show_mnemon()
        view = vscode.view("Needs Review")
        row = vscode.row(view, MEMORY)
        expect(row).to_have_count(1, timeout=SERVER_MS)
        expect(vscode.description(row)).to_have_text("MEMORY.md · 0d · code changed", timeout=SERVER_MS)
        expect(lens.filter(has_text="1 memory cites this (1 changed)").first).to_be_visible(timeout=SERVER_MS)

        vscode.inline_action(row, "Still True: Re-anchor to the Current Code")
        vscode.notification("re-anchored 1 citation to the current code")
        expect(vscode.row(view, "No memory needs review")).to_have_count(1, timeout=SERVER_MS)
        cites = [e.get("cites") for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", "memory")[
            "entries"] if e["content"] == MEMORY]
        assert [[(c["startLine"], c["endLine"], c["freshness"]) for c in entry] for entry in cites] == [[(1, 2, "fresh")]]
        expect(lens.filter(has_text=re.compile(r"^1 memory cites this$")).first).to_be_visible(timeout=SERVER_MS)
    finally:
        vscode.clear_notifications()
        if any(e["content"] == MEMORY for e in mnemon_cli(code_server, workspace, "runtime", "list")["entries"]):
            mnemon_cli(code_server, workspace, "runtime", "remove", "--old-text", MEMORY)


DUE = "The HERON deploys go through staging"


def _age(home: Path, content: str, days: int) -> tuple[Path, bytes]:
    """Set ``created_at``/``updated_at`` of the entry ``content`` ``days`` ago in the memories.json under ``home``
    that holds it (a hand edit); that file and its new bytes."""
    old = (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    for path in (home / ".mnemon").rglob("memories.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if any(e["content"] == content for e in data["entries"]):
            for entry in data["entries"]:
                if entry["content"] == content:
                    entry["created_at"] = entry["updated_at"] = old
            path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            return path, path.read_bytes()
    raise AssertionError(f"no memories.json under {home} holds {content!r}")


def test_a_memory_due_for_review_is_listed_and_still_true_confirms_it(code_server, vscode) -> None:
    workspace = vscode.workspace
    mnemon_cli(code_server, workspace, "runtime", "add", "--content", DUE)
    try:
        path, aged = _age(Path(code_server.env["HOME"]), DUE, 120)
        vscode.show_mnemon()
        view = vscode.view("Needs Review")
        vscode.view_action(view, "Refresh Needs Review")
        row = vscode.row(view, DUE)
        expect(row).to_have_count(1, timeout=SERVER_MS)
        expect(vscode.description(row)).to_have_text("MEMORY.md · 120d · review due", timeout=SERVER_MS)

        vscode.inline_action(row, "Still True: Re-anchor to the Current Code")
        vscode.notification("confirmed still true. Next review in 90 days")
        expect(vscode.row(view, DUE)).to_have_count(0, timeout=SERVER_MS)
        assert DUE not in [m["content"] for m in mnemon_cli(code_server, workspace, "review")["memories"]]
        assert path.read_bytes() == aged  # confirmed in a side file; the entry is still there, nothing deleted
    finally:
        vscode.clear_notifications()
        if any(e["content"] == DUE for e in mnemon_cli(code_server, workspace, "runtime", "list")["entries"]):
            mnemon_cli(code_server, workspace, "runtime", "remove", "--old-text", DUE)
