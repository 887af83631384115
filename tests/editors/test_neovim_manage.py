"""Managing memory from Neovim (editors/neovim/lua/mnemon/manage.lua and the commands over it), end to
end on Neovim 0.7.2 and 0.11 against the real server: entries (edit, remove, re-scope, importance),
Memory Spaces (create, activate, deactivate), documents (archive, restore, update from file), recall
with a preview, code actions on every version, the statusline, <Plug> mappings, the health check and
:help. The user's picks go through stubs of vim.ui.select / vim.ui.input, as any UI plugin receives them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.runtime import ops
from mnemon_ls.runtime.store import RuntimeStore
from tests.gitrepo import create_branch, make_repo, switch

from .nvim_helpers import PLUGIN_DIR, Session
from .test_neovim import ERROR, INFO, WARN, binary, branch_event, session  # noqa: F401  (fixtures)

#: Stubs of vim.ui.select and vim.ui.input: each takes the next scripted answer (a substring of the
#: item's label for select, the text for input; "<cancel>" cancels) and records the prompt and labels.
UI = r"""
T.answers, T.prompts, T.shown = {}, {}, {}
local function next_answer()
  local a = table.remove(T.answers, 1)
  if a == nil or a == "<cancel>" then return nil end
  return a
end
vim.ui.select = function(items, opts, on_choice)
  table.insert(T.prompts, opts.prompt or "")
  local labels = {}
  for _, item in ipairs(items) do
    table.insert(labels, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(T.shown, labels)
  local want = next_answer()
  if want then
    for i, label in ipairs(labels) do
      if label:find(want, 1, true) then return on_choice(items[i], i) end
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(T.prompts, opts.prompt or "")
  on_confirm(next_answer())
end
"""


def answer(session: Session, *answers: str) -> None:
    session.lua("T.answers = ...; T.prompts = {}; T.shown = {}", list(answers))


def run(session: Session, command: str, done_note: str) -> dict:
    mark = session.mark()
    session.nv.command(command)
    return session.wait_note(done_note, mark)


def entries(root: Path) -> list[dict]:
    return json.loads((root / "runtime" / "memories.json").read_text(encoding="utf-8"))["entries"]


def start(session: Session, tmp_path: Path, settings: dict | None = None, git: bool = True) -> Path:
    ws = tmp_path / "repo"
    if git:
        make_repo(ws, "main")
    else:
        (ws / ".mnemon").mkdir(parents=True)
    (ws / "notes.md").write_text("# Notes\n\nUse pnpm.\n", encoding="utf-8")
    session.setup({"storageScope": "workspace", **(settings or {})})
    session.lua(UI)
    session.open(ws / "notes.md")
    session.wait_attached()
    return ws


def remember(session: Session, text: str, **extra) -> None:
    session.lua("T.r = nil; local opts = ...; require('mnemon').remember(opts, function(e) T.r = e or true end)",
                {"text": text, **extra})
    session.wait("T.r ~= nil", f"remembering {text!r}")


def test_entries_edit_scope_importance_remove_and_bad_input(session: Session, tmp_path: Path) -> None:
    ws = start(session, tmp_path, {"runtimeMemory": {"memoryLimitBytes": 200, "maintenance": "reject"}})
    root = ws / ".mnemon"
    remember(session, "Use pnpm, not npm")
    remember(session, "Deploys go through staging")

    # Edit: pick the entry, "Edit", type the new text.
    answer(session, "pnpm", "Edit", "Use pnpm 9, not npm")
    note = run(session, "MnemonEntries", "Entry replaced.")
    assert note["level"] == INFO and "MEMORY.md now holds 2 entries" in note["msg"]
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert prompts[0] == "mnemon: 2 entries" and shown[0] == ["[MEMORY.md] Use pnpm, not npm",
                                                            "[MEMORY.md] Deploys go through staging"]
    assert shown[1] == ["Edit", "Remove", "Branches", "Importance"]
    assert [e["content"] for e in entries(root)] == ["Use pnpm 9, not npm", "Deploys go through staging"]

    # Re-scope to a branch, then importance; the wake marks the scope.
    answer(session, "Deploys", "Branches", "main")
    run(session, "MnemonEntries", "Entry replaced.")
    answer(session, "Deploys", "Importance", "critical")
    run(session, "MnemonEntries", "Entry replaced.")
    [_, deploys] = entries(root)
    assert (deploys["branches"], deploys["importance"]) == (["main"], "critical")
    session.nv.command("MnemonWake")
    assert "; branches=main]\nDeploys go through staging" in session.wait_wake("Git branch: main")
    session.nv.command("wincmd p")
    answer(session, "Deploys", "Branches", "")
    run(session, "MnemonEntries", "Entry replaced.")
    assert not entries(root)[1].get("branches")

    # Bad input: a § inside the entry, 8 KiB + 1, over capacity: one clear error each, nothing changes.
    before = (root / "runtime" / "memories.json").read_bytes()
    for text, needle in (("half \u00a7 half", "[invalid-input]"), ("x" * 8193, "8192"),
                         ("y" * 190, "[runtime-capacity]")):
        answer(session, "pnpm", "Edit", text)
        note = run(session, "MnemonEntries", "not edited")
        assert note["level"] == ERROR and needle in note["msg"], note
        assert (root / "runtime" / "memories.json").read_bytes() == before

    # A revision conflict: another writer changed MEMORY.md after the list was read. Nothing is removed,
    # the message says so and the list is read again.
    session.lua("T.read = nil; require('mnemon.manage').read_entries({}, function(e, list, rev)"
                " T.read = { list = list, rev = rev } end)")
    session.wait("T.read ~= nil", "the entries")
    RuntimeStore(root).mutate(ops.validate_request("remove", "memory", old_text="Deploys go through staging"))
    changed = (root / "runtime" / "memories.json").read_bytes()
    answer(session, "<cancel>")
    mark = session.mark()
    session.lua("T.rm = nil; require('mnemon.manage').remove_entry(T.read.list[1], T.read.rev, {},"
                " function(e) T.rm = e or true end)")
    session.wait("T.rm ~= nil", "the refused remove")
    note = session.wait_note("changed meanwhile", mark)
    assert note["level"] == WARN and "nothing was changed and the list was read again" in note["msg"]
    assert (root / "runtime" / "memories.json").read_bytes() == changed
    session.wait("#T.prompts == 1", "the refreshed list")
    assert session.lua("return T.shown[1]") == ["[MEMORY.md] Use pnpm 9, not npm"]

    # Remove through the picker.
    answer(session, "pnpm", "Remove")
    note = run(session, "MnemonEntries", "Entry removed.")
    assert "MEMORY.md now holds 0 entries" in note["msg"] and entries(root) == []
    assert session.nv.vvars["errmsg"] == ""


def test_spaces_without_git(session: Session, tmp_path: Path) -> None:
    """Create, deactivate, activate a Memory Space in a .mnemon root that is no git repository; bad names."""
    ws = start(session, tmp_path, git=False)
    registry = ws / ".mnemon" / "state" / "memory-spaces.json"

    def spaces() -> list[tuple[str, bool]]:
        session.lua("T.sp = nil; require('mnemon').list_spaces({}, function(e, s) T.sp = s or {} end)")
        session.wait("T.sp ~= nil", "the spaces")
        return [(s["name"], s["active"]) for s in session.lua("return T.sp")]

    answer(session, "Decisions about this project")
    note = run(session, "MnemonSpaceCreate Project notes", "space Project notes created")
    assert note["level"] == INFO and "active for reading" in note["msg"]
    assert session.lua("return T.prompts") == ["mnemon: what belongs in Project notes? "]
    assert spaces() == [("Project notes", True)]

    answer(session, "Project notes", "Deactivate")
    run(session, "MnemonSpaces", "space Project notes deactivated")
    assert session.lua("return T.shown") == [["* Project notes (default): Decisions about this project"],
                                             ["Deactivate", "Recall from it"]]
    assert spaces() == [("Project notes", False)]
    run(session, "MnemonSpaceActivate default", "space Project notes activated")
    assert spaces() == [("Project notes", True)]
    run(session, "MnemonSpaceDeactivate default", "space Project notes deactivated")
    assert spaces() == [("Project notes", False)]
    run(session, "MnemonSpaceActivate default", "space Project notes activated")
    assert session.lua("return vim.fn.getcompletion('MnemonSpaceDeactivate ', 'cmdline')") == ["default"]

    # A remember into an inactive space activates it: the receipt says so, names the spaces active now (a
    # remember that names no space must then name one) and the command that makes it inactive again.
    answer(session, "What the team agreed")
    run(session, "MnemonSpaceCreate! Team", "space Team created")
    team = next(s["id"] for s in session.lua("T.sp = nil; require('mnemon').list_spaces({}, function(e, s) T.sp = s end);"
                                            " T.wait(T.wait_ms, function() return T.sp ~= nil end); return T.sp")
                if s["name"] == "Team")
    assert spaces() == [("Project notes", True), ("Team", False)]
    mark = session.mark()
    remember(session, "We deploy on Fridays", space_id=team)
    note = session.wait_note("Remembered in Team.", mark)
    assert note["msg"].endswith(
        f"(the space was inactive and is now active; 2 spaces are active (Project notes, Team), so a remember that "
        f"names no space must name one; :MnemonSpaceDeactivate {team} makes it inactive again)"), note
    run(session, f"MnemonSpaceDeactivate {team}", "space Team deactivated")
    assert spaces() == [("Project notes", True), ("Team", False)]

    # An empty and a 101-character name: the server's rule, named; nothing is created.
    before = registry.read_bytes() if registry.exists() else None
    for name in ("", "n" * 101):
        mark = session.mark()
        session.lua("T.c = nil; require('mnemon').space_create(..., 'd', {}, function(e) T.c = e or true end)", name)
        session.wait("T.c ~= nil", "the refused create")
        note = session.wait_note("space not created", mark)
        assert note["level"] == ERROR and "name" in note["msg"] and "[invalid-input]" in note["msg"], note
    assert spaces() == [("Project notes", True), ("Team", False)]
    assert (registry.read_bytes() if registry.exists() else None) == before
    assert session.nv.vvars["errmsg"] == ""


def test_an_empty_space_list_under_a_newer_catalog_says_the_note(session: Session, tmp_path: Path) -> None:
    """A native catalog written by a newer version is read-only (no space shown, none can be created): the
    :MnemonSpaces picker then says the server's note, not :MnemonSpaceCreate; without it, the usual hint."""
    ws = start(session, tmp_path, git=False)
    mark = session.mark()
    session.nv.command("MnemonSpaces")
    note = session.wait_note("Memory Space", mark)
    assert note["msg"] == "mnemon: no Memory Space yet (:MnemonSpaceCreate {name})", note
    catalog = ws / ".mnemon" / "data" / ".dsh-memory-bodies.json"
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_text('{"version": 9, "bodies": []}', encoding="utf-8")
    mark = session.mark()
    session.nv.command("MnemonSpaces")
    note = session.wait_note("Memory Space", mark)
    assert note["msg"].startswith(f"mnemon: no Memory Space can be shown here: {catalog} was written by a newer "
                                  "version of mnemon-ls (format version 9"), note
    assert "MnemonSpaceCreate" not in note["msg"] and note["level"] == INFO, note
    assert catalog.read_text(encoding="utf-8") == '{"version": 9, "bodies": []}'


def test_documents_update_offer_archive_restore(session: Session, tmp_path: Path) -> None:
    ws = start(session, tmp_path)
    index = ws / ".mnemon" / "documents" / "index.json"
    run(session, "MnemonDocCreate", "document created: Notes")
    session.nv.command("wincmd p")  # back to notes.md
    assert session.nv.current.buffer.name == str(ws / "notes.md")
    session.nv.current.buffer.append("Deploy on Fridays.")
    session.nv.command("write")

    # The file has a document: the update is offered (never a silent duplicate).
    answer(session, "Update document from file")
    run(session, "MnemonDocCreate", "document updated: Notes (revision 2)")
    assert session.lua("return T.shown[1]") == ["Update document from file: Notes",
                                                "Create another document from this file"]
    [doc] = json.loads(index.read_text())["documents"]
    assert doc["revision"] == 2
    assert "Deploy on Fridays." in (ws / ".mnemon" / doc["relativePath"]).read_text(encoding="utf-8")

    answer(session, "Notes", "Archive")
    run(session, "MnemonDocuments", "document archived: Notes (revision 3)")
    assert json.loads(index.read_text())["documents"][0]["status"] == "archived"
    mark = session.mark()
    answer(session)
    session.nv.command("MnemonDocuments")
    assert session.wait_note("no document yet", mark)["level"] == INFO  # archived ones need the bang
    answer(session, "[archived] Notes", "Restore")
    run(session, "MnemonDocuments!", "document restored: Notes (revision 4)")
    assert json.loads(index.read_text())["documents"][0]["status"] == "active"
    # With the bang a second document is made from the file, without asking.
    focus_notes = "vim.fn.win_gotoid(vim.fn.bufwinid(vim.fn.bufnr(...)))"
    assert session.lua(f"return {focus_notes}", str(ws / "notes.md")) == 1
    answer(session)
    run(session, "MnemonDocCreate!", "document created: Notes")
    assert session.lua("return #T.prompts") == 0 and len(json.loads(index.read_text())["documents"]) == 2

    # A stale revision (another editor archived it meanwhile): refused and said, nothing changes.
    session.lua("T.d = nil; require('mnemon').list_documents({}, function(e, d) T.d = d end)")
    session.wait("T.d ~= nil", "the documents")
    session.lua("local d = T.d[1]; d.revision = 1; T.a = nil;"
                " require('mnemon').doc_archive(d, {}, function(e) T.a = e or true end)")
    session.wait("T.a ~= nil", "the refused archive")
    before = index.read_bytes()
    assert "revision-conflict" in session.lua("return T.a.message") and index.read_bytes() == before
    assert session.nv.vvars["errmsg"] == ""


def test_recall_picker_with_preview(session: Session, tmp_path: Path) -> None:
    start(session, tmp_path)
    session.lua("T.s = nil; require('mnemon').space_create('Project', 'Decisions', { active = true },"
                " function(e) T.s = e or true end)")
    session.wait("T.s ~= nil", "the space")
    remember(session, "We chose SQLite FTS5 for the side index\nbecause it is embedded.", space_id="default")
    answer(session, "SQLite FTS5")
    mark = session.mark()
    session.nv.command("MnemonRecall! side index")
    session.wait("vim.api.nvim_buf_get_name(0):find('mnemon://recall-item', 1, true) ~= nil", "the preview")
    assert session.lua("return T.prompts") == ['mnemon: recalled for "side index"']
    assert session.lua("return T.shown[1][1]").startswith("Project · ")
    text = session.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
    assert session.lua("return vim.api.nvim_buf_get_name(0)").endswith("mnemon://recall-item")
    assert text.startswith("# Project\n\n_space default · id ") and text.endswith(
        "We chose SQLite FTS5 for the side index because it is embedded.")
    assert session.lua("return vim.bo.modifiable") is False
    assert not [n for n in session.notes()[mark:] if n["level"] >= WARN]


def code_action(session: Session, title: str) -> None:
    """Run the code action whose title starts with ``title`` the way a user does (vim.lsp.buf.code_action,
    the pick through vim.ui.select)."""
    answer(session, title)
    session.lua("vim.lsp.buf.code_action()")
    session.wait("#T.prompts >= 1", "the code action menu")


def test_code_actions_work_on_every_version(session: Session, tmp_path: Path) -> None:
    """Show wake snapshot and Create document from file open their file on 0.7.2 (no window/showDocument)
    as on 0.11; then the file is offered the update instead."""
    ws = start(session, tmp_path)
    remember(session, "Shown in the wake")
    code_action(session, "Show wake snapshot")
    session.wait("vim.api.nvim_buf_get_name(0):find('/state/wake%-') ~= nil", "the wake file")
    assert "Shown in the wake" in "\n".join(session.nv.current.buffer[:])
    session.nv.command("only")
    session.open(ws / "notes.md")

    mark = session.mark()
    code_action(session, "Create document from file")
    note = session.wait_note("document created: Notes", mark)
    session.wait("vim.api.nvim_buf_get_name(0):find('/documents/active/') ~= nil", "the managed document")
    assert note["level"] == INFO and len([n for n in session.notes()[mark:] if "document created" in n["msg"]]) == 1
    session.nv.command("only")
    session.open(ws / "notes.md")
    code_action(session, "Update document from file")
    labels = session.lua("return T.shown[1]")
    assert "Update document from file (Notes)" in labels and "Create document from file" not in labels
    # notes.md is the document's body already: no new revision
    session.wait_note("mnemon: document unchanged: Notes: no change; revision 1 kept", mark)
    assert session.nv.vvars["errmsg"] == ""


def test_statusline_plug_mappings_health_and_help(session: Session, binary, tmp_path: Path) -> None:  # noqa: F811
    ws = start(session, tmp_path)
    repo = __import__("pygit2").Repository(str(ws))
    assert session.lua("return require('mnemon').statusline()") in ("mnemon …", "")
    remember(session, "Only on main", branch_scoped=True)
    session.wait("require('mnemon').statusline() == 'mnemon main · 1 entry · 12/10240 B'", "the statusline")
    create_branch(repo, "other")
    switch(repo, "other")
    branch_event(session, "other")
    # The count is the wake's: the entry is kept to main, so the other branch shows none of it.
    session.wait("require('mnemon').statusline() == 'mnemon other · 0 entries · 12/10240 B'", "the statusline")

    for name in ("remember", "remember-branch", "recall", "wake", "status", "entries", "spaces", "documents",
                 "doc-create", "proposals"):
        assert session.lua("return vim.fn.maparg(..., 'n')", f"<Plug>(mnemon-{name})"), name
    assert session.lua("return vim.fn.maparg('<Plug>(mnemon-remember)', 'x')") == ":MnemonRemember<CR>"

    # doc/tags is shipped, so :help mnemon works without :helptags; every command has a tag.
    tags = {line.split("\t")[0] for line in (PLUGIN_DIR / "doc" / "tags").read_text().splitlines()}
    commands = {c for c in session.nv.api.get_commands({}) if c.startswith("Mnemon")}
    assert {":" + c for c in commands} <= tags, sorted({":" + c for c in commands} - tags)
    session.nv.command("help mnemon-manage")
    assert session.lua("return vim.bo.buftype") == "help"
    session.nv.command("close")

    session.nv.command("checkhealth mnemon")
    report = "\n".join(session.nv.current.buffer[:])
    assert "setup() was called" in report and "not called" not in report
    assert "pip install mnemon-ls" not in report


def test_health_after_vim_lsp_enable(session: Session, binary, tmp_path: Path) -> None:  # noqa: F811
    if not session.lua("return vim.fn.has('nvim-0.11') == 1"):
        pytest.skip(f"vim.lsp.enable needs Neovim 0.11+ ({binary.label} is {binary.version()})")
    session.nv.command("filetype on")
    session.lua("vim.lsp.config('mnemon', { cmd = T.server_cmd }); vim.lsp.enable('mnemon')")
    session.nv.command("checkhealth mnemon")
    report = "\n".join(session.nv.current.buffer[:])
    assert "started by vim.lsp.enable('mnemon')" in report
    assert "setup() was not called" not in report and "WARNING no client will start" not in report
    assert "server command: " in report
