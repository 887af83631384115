"""What a person sees in the Mnemon view container and around it, in a real VS Code (code-server in Chromium):
Remember Selection takes a comment's words without its markers and marks which spaces are active; a write
into an inactive space says what activating it changed and offers to undo it; the Runtime Memory pane gets
the room; sizes are written in one unit rule; an entry's hover keeps its parts apart; the providers that are
not installed are one row; a recall that found nothing for want of an active space offers to activate one;
the walkthrough's first step checks itself while the server runs and names no placeholder.

Each test saves a screenshot of what it checked into the artifacts directory (``$MNEMON_E2E_ARTIFACTS``),
named after what it shows. Stores are read back with the CLI; every space a test activates is inactive
again when it ends (later tests expect Remember Selection to ask nothing)."""

from __future__ import annotations

import re

import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS, UI_MS, exact, format_bytes, format_usage  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

RUNTIME, DOCUMENTS, SPACES, PROVIDERS, RECALL = ("Runtime Memory", "Documents", "Memory Spaces", "Memory Providers",
                                                 "Recall Results")
SIDEBAR = '[id="workbench.view.extension.mnemon"]'


def widen_sidebar(vscode) -> None:
    """Make the side bar wide enough for the rows' descriptions to show whole in a screenshot: drag the sash on
    its right edge 200 px to the right (once a session; a wider side bar changes nothing a test checks)."""
    box = vscode.page.locator(".part.sidebar").bounding_box()
    assert box
    if box["width"] >= 480:
        return
    x, y = box["x"] + box["width"] + 1, box["y"] + box["height"] / 2
    mouse = vscode.page.mouse
    mouse.move(x, y)
    mouse.down()
    mouse.move(x + 100, y, steps=5)
    mouse.move(x + 200, y, steps=5)
    mouse.up()
    expect(vscode.page.locator(".part.sidebar")).to_have_css("width", re.compile(r"^(4[89]\d|[5-9]\d\d)(\.\d+)?px$"),
                                                             timeout=UI_MS)


def memory_contents(code_server, workspace) -> list[str]:
    return [e["content"] for e in mnemon_cli(code_server, workspace, "runtime", "list", "--target", "memory")["entries"]]


def add_entry(code_server, workspace, content: str) -> None:
    """Add a MEMORY.md entry with the CLI, which reads no editor setting: its own limit and archival are set so
    that it neither archives nor refuses what the editor (its limit raised by test_view.py) would keep."""
    mnemon_cli(code_server, workspace, "runtime", "add", "--content", content, "--memory-limit-bytes", "1048576",
               "--memory-maintenance", "reject")


def spaces_by_name(code_server, workspace) -> dict[str, dict]:
    return {s["name"]: s for s in mnemon_cli(code_server, workspace, "space", "list")}


def deactivate_all(code_server, workspace) -> None:
    """Leave no space active (Remember Selection then asks nothing, as the other tests expect)."""
    for space in mnemon_cli(code_server, workspace, "space", "list"):
        if space["active"]:
            mnemon_cli(code_server, workspace, "space", "deactivate", space["id"])


def ensure_space(code_server, workspace, name: str, description: str) -> dict:
    """The space called ``name``, created (inactive) when missing."""
    existing = spaces_by_name(code_server, workspace).get(name)
    return existing or mnemon_cli(code_server, workspace, "space", "create", "--name", name, "--description", description)


def test_a_selected_comment_is_remembered_without_its_comment_markers(code_server, vscode, e2e_artifacts) -> None:
    deactivate_all(code_server, vscode.workspace)
    vscode.show_mnemon()
    widen_sidebar(vscode)
    vscode.open_file("deploy-note.py")
    vscode.select_first_lines(2)  # the two comment lines, not the code under them
    vscode.run_command("Mnemon: Remember Selection")
    vscode.notification("Entry added. MEMORY.md")
    vscode.open_file("schema-note.sql")
    vscode.select_first_lines(1)
    vscode.run_command("Mnemon: Remember Selection")
    vscode.notification("Entry added. MEMORY.md")
    contents = memory_contents(code_server, vscode.workspace)
    assert "Deploy with: make release (it needs the VPN)" in contents, contents
    assert "orders are never deleted, only closed" in contents, contents
    assert not any(c.startswith(("#", "--")) for c in contents), contents
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    last = vscode.row(runtime, "orders are never deleted, only closed")
    expect(vscode.description(vscode.row(runtime, re.compile(r"^\s*MEMORY\.md\s*$")))).to_contain_text(
        f"{len(contents)} entries", timeout=SERVER_MS)
    vscode.scroll_to_end(runtime)  # the two new entries are MEMORY.md's last
    expect(vscode.row(runtime, "Deploy with: make release (it needs the VPN)")).to_be_visible(timeout=SERVER_MS)
    expect(last).to_be_visible(timeout=SERVER_MS)
    vscode.screenshot(e2e_artifacts, "remember-selection-without-comment-markers", runtime)


def test_remember_into_an_inactive_space_marks_the_targets_and_says_what_activating_it_changed(
        code_server, vscode, e2e_artifacts) -> None:
    deactivate_all(code_server, vscode.workspace)
    inbox = ensure_space(code_server, vscode.workspace, "Inbox", "Facts to sort later")
    team = ensure_space(code_server, vscode.workspace, "Team", "What the team agreed")
    mnemon_cli(code_server, vscode.workspace, "space", "activate", inbox["id"])
    try:
        vscode.open_file("team-note.txt")
        vscode.select_all()
        vscode.run_command("Mnemon: Remember Selection")
        # The target list marks which spaces are active now, and what picking an inactive one does.
        rows = vscode.quick_input_rows()
        inbox_row = rows.filter(has=vscode.page.locator(".label-name").filter(has_text=exact("Inbox")))
        team_row = rows.filter(has=vscode.page.locator(".label-name").filter(has_text=exact("Team")))
        expect(inbox_row.locator(".label-description")).to_contain_text("active ·", timeout=UI_MS)
        expect(team_row.locator(".label-description")).to_contain_text("inactive: remembering here makes it active",
                                                                       timeout=UI_MS)
        vscode.screenshot(e2e_artifacts, "remember-selection-targets-marked-active", vscode.quick_input)
        vscode.pick("Team")
        toast = vscode.notification("Team was inactive and is now active")
        text = toast.inner_text()
        assert "2 spaces are active (Inbox, Team)" in text and "must name one" in text, text
        undo = vscode.notification_button(toast, "Deactivate Team")
        expect(undo).to_be_visible(timeout=UI_MS)
        vscode.screenshot(e2e_artifacts, "remember-into-inactive-space-receipt", toast)
        listed = spaces_by_name(code_server, vscode.workspace)
        assert (listed["Inbox"]["active"], listed["Team"]["active"]) == (True, True), listed
        # What the receipt said: a remember that names no space is refused while two are active ...
        refused = mnemon_cli_error(code_server, vscode.workspace, "remember", "A plain fact")
        assert "2 spaces are active (Inbox, Team)" in refused, refused
        # ... and its button makes Team inactive again.
        undo.click()
        expect(vscode.row(vscode.view(SPACES), "Team").locator(".label-description")).to_contain_text(
            "inactive", timeout=SERVER_MS)
        assert spaces_by_name(code_server, vscode.workspace)["Team"]["active"] is False
        assert mnemon_cli(code_server, vscode.workspace, "space", "status", team["id"])["status"]["total_insights"] >= 1
    finally:
        deactivate_all(code_server, vscode.workspace)


def mnemon_cli_error(code_server, workspace, *args: str) -> str:
    """The error text of a CLI command that must fail (``mnemon_cli`` raises AssertionError with stderr)."""
    with pytest.raises(AssertionError) as failed:
        mnemon_cli(code_server, workspace, *args)
    return str(failed.value)


def test_user_md_stays_in_sight_above_a_long_memory_md(code_server, vscode, e2e_artifacts) -> None:
    """USER.md comes first (the wake's order): however long MEMORY.md grows and however the container's panes
    were resized since (here: Memory Providers opened, Recall Results shown), USER.md is not pushed out of the
    pane. (The container's first layout giving Runtime Memory the room is checked in test_commands.py.)"""
    for n in range(max(0, 12 - len(memory_contents(code_server, vscode.workspace)))):
        add_entry(code_server, vscode.workspace, f"A long MEMORY.md, entry {n + 1}")
    count = len(memory_contents(code_server, vscode.workspace))
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    memory_md = vscode.row(runtime, re.compile(r"^\s*MEMORY\.md\s*$"))
    expect(vscode.description(memory_md)).to_contain_text(f"{count} entries", timeout=SERVER_MS)
    vscode.scroll_to_end(runtime, "Home")  # the tree as it opens (an earlier test scrolled it down)
    user_md = vscode.row(runtime, "USER.md")
    expect(user_md).to_be_visible(timeout=SERVER_MS)
    pane, user_row, memory_row = runtime.bounding_box(), user_md.bounding_box(), memory_md.bounding_box()
    assert pane and user_row and memory_row
    assert user_row["y"] < memory_row["y"], (user_row, memory_row)
    # USER.md's row and the row under it (its first entry, or the row that adds one) are inside the pane.
    assert pane["y"] <= user_row["y"] and user_row["y"] + 2 * user_row["height"] <= pane["y"] + pane["height"], (
        user_row, pane)
    vscode.screenshot(e2e_artifacts, "user-md-in-sight-above-memory-md", vscode.page.locator(SIDEBAR))


def test_sizes_are_written_in_one_unit_rule(code_server, vscode, e2e_artifacts) -> None:
    if not mnemon_cli(code_server, vscode.workspace, "doc", "list")["documents"]:
        mnemon_cli(code_server, vscode.workspace, "doc", "create", "--title", "Release plan", "--content",
                   "Tag, build the wheel, then publish the changelog.")
    catalog = mnemon_cli(code_server, vscode.workspace, "doc", "list")
    active = [d for d in catalog["documents"] if d["status"] == "active"]
    vscode.show_mnemon()
    documents = vscode.view(DOCUMENTS)
    group = vscode.row(documents, "Active")
    expected = f"{len(active)} · {format_usage(catalog['activeBytes'], catalog['limitBytes'])}"
    expect(vscode.description(group)).to_have_text(expected, timeout=SERVER_MS)
    assert format_bytes(catalog["limitBytes"]) == "10 MiB"  # was "10240 KiB" beside MEMORY.md's "10 KiB"
    memory_md = vscode.row(vscode.view(RUNTIME), re.compile(r"^\s*MEMORY\.md\s*$"))
    expect(vscode.description(memory_md)).to_have_text(re.compile(r" · [\d.]+ (B|KiB) of [\d.]+ KiB \(\d+%\)$"),
                                                       timeout=SERVER_MS)
    assert "bytes" not in vscode.description(memory_md).inner_text()
    top, bottom = vscode.view(RUNTIME).bounding_box(), documents.bounding_box()
    assert top and bottom
    vscode.page.screenshot(path=str(e2e_artifacts / "sizes-in-one-unit.png"), clip={
        "x": top["x"], "y": top["y"], "width": top["width"], "height": bottom["y"] + bottom["height"] - top["y"]})


def test_an_entry_hover_keeps_its_parts_apart(code_server, vscode, e2e_artifacts) -> None:
    content = "The hover shows this entry's age and branches"
    if content not in memory_contents(code_server, vscode.workspace):
        add_entry(code_server, vscode.workspace, content)
    count = len(memory_contents(code_server, vscode.workspace))
    vscode.show_mnemon()
    runtime = vscode.view(RUNTIME)
    row = vscode.row(runtime, content)
    memory_md = vscode.row(runtime, re.compile(r"^\s*MEMORY\.md\s*$"))
    expect(vscode.description(memory_md)).to_contain_text(f"{count} entries", timeout=SERVER_MS)  # drawn with it
    vscode.scroll_to_end(runtime)  # MEMORY.md's last entry
    expect(row).to_be_visible(timeout=SERVER_MS)
    row.hover()
    hover = vscode.page.locator(".workbench-hover").filter(visible=True).filter(has_text="Shown on every branch")
    expect(hover).to_be_visible(timeout=UI_MS)
    paragraphs = [p.strip() for p in hover.locator("p").all_inner_texts()]
    created = next(p for p in paragraphs if "created" in p)
    assert re.search(r"· created today$", created), paragraphs  # was "created today Every branch"
    assert "Shown on every branch" in paragraphs, paragraphs
    vscode.screenshot(e2e_artifacts, "entry-hover-parts-apart", hover)
    vscode.page.keyboard.press("Escape")


def test_providers_that_are_not_installed_are_one_row(code_server, vscode, e2e_artifacts) -> None:
    listed = mnemon_cli(code_server, vscode.workspace, "provider", "list")["providers"]
    missing = [p["label"] for p in listed if not p["installed"]]
    installed = [p["label"] for p in listed if p["installed"]]
    assert missing, listed
    vscode.show_mnemon()
    view = vscode.only(PROVIDERS)  # room for every provider's row (a tree draws only the rows in sight)
    group = vscode.row(view, "Not installed")
    expect(vscode.description(group)).to_have_text(f"{len(missing)} more providers: {', '.join(missing)}",
                                                   timeout=SERVER_MS)
    for label in missing:  # collapsed: no row of its own until the group is opened
        expect(vscode.row(view, label)).to_have_count(0, timeout=UI_MS)
    for label in installed:
        expect(vscode.row(view, label)).to_have_count(1, timeout=UI_MS)
    vscode.screenshot(e2e_artifacts, "providers-not-installed-one-row", view)
    group.click()  # the row leads to them
    expect(vscode.description(vscode.row(view, missing[0]))).to_have_text("not installed", timeout=UI_MS)
    group.click()


def test_nothing_recalled_for_want_of_an_active_space_offers_to_activate_one(code_server, vscode, e2e_artifacts) -> None:
    deactivate_all(code_server, vscode.workspace)
    ensure_space(code_server, vscode.workspace, "Archive notes", "Old facts, inactive")
    try:
        vscode.run_command("Mnemon: Recall")
        vscode.input_text("migration review day")
        results = vscode.view(RECALL)
        welcome = results.locator(".welcome-view-content")
        expect(welcome).to_contain_text("Nothing recalled: no Memory Space is active.", timeout=SERVER_MS)
        activate = welcome.locator(".monaco-button").filter(has_text="Activate Memory Space")
        expect(activate).to_be_visible(timeout=UI_MS)
        expect(welcome.locator(".monaco-button").filter(has_text="Create Memory Space")).to_be_visible(timeout=UI_MS)
        vscode.screenshot(e2e_artifacts, "nothing-recalled-offers-to-activate", results)
        activate.click()
        vscode.pick("Archive notes")
        vscode.notification("Archive notes is active; recall reads it now.")
        assert spaces_by_name(code_server, vscode.workspace)["Archive notes"]["active"] is True
        expect(welcome.locator(".monaco-button").filter(has_text="Recall Again")).to_be_visible(timeout=SERVER_MS)
    finally:
        deactivate_all(code_server, vscode.workspace)
        vscode.run_command("Mnemon: Clear Recall Results")


def test_the_walkthrough_checks_its_server_step_and_names_no_placeholder(code_server, vscode, e2e_artifacts) -> None:
    vscode.expect_status(re.compile(r"MEMORY \d+%"))  # the server runs
    vscode.run_command("View: Toggle Primary Side Bar Visibility")  # room for the walkthrough's two columns
    expect(vscode.page.locator(".part.sidebar")).to_be_hidden(timeout=UI_MS)
    vscode.run_command("Welcome: Open Walkthrough...")
    vscode.pick("Get started with Mnemon")
    step = vscode.page.locator('.getting-started-step[data-step-id$="#server"]')
    expect(step).to_have_attribute("aria-checked", "true", timeout=SERVER_MS)
    media = vscode.page.frame_locator(".getting-started-media iframe.webview").frame_locator("iframe").locator("body")
    expect(media).to_contain_text("python3 -m pip install .", timeout=SERVER_MS)
    assert not re.search(r"<[a-z-]+>", media.inner_text()), media.inner_text()  # was "<url-of-mnemon-ls>"
    assert not re.search(r"<[a-z-]+>", step.inner_text()), step.inner_text()
    vscode.screenshot(e2e_artifacts, "walkthrough-server-step-checked", vscode.page.locator(".part.editor"))
    vscode.run_command("View: Close All Editors")
    vscode.run_command("View: Toggle Primary Side Bar Visibility")
    expect(vscode.page.locator(".part.sidebar")).to_be_visible(timeout=UI_MS)
