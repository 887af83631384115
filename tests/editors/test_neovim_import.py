"""Import from other assistants in real Neovim (0.7.2 and 0.11) against the real server (issue 28 item 2): with a
CLAUDE.md and a Cursor rule in the workspace, :MnemonImport lists the sources ("Claude Code: 3 of 3 picked",
"Cursor: 1 of 2 picked": the rule's copy of a CLAUDE.md bullet is a duplicate, not picked), a source's items
("[x] text -> MEMORY.md: why (file)"), and choosing an item unticks it; "Import the 3 picked items" imports
exactly those (read back from memories.json). A file changed between the scan and the import is refused with
nothing written. The user's picks go through the vim.ui.select stub of tests/editors/test_neovim_manage.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gitrepo import make_repo

from . import test_neovim
from .nvim_helpers import Session
from .test_neovim import ERROR, INFO, WARN
from .test_neovim_manage import UI, answer

#: The fixtures of tests/editors/test_neovim.py: each Neovim binary, one session per test.
binary, session = test_neovim.binary, test_neovim.session

BUILD = "IBIS: the build runs with make ibis."
TERSE = "IBIS: I prefer terse commit messages."
CLUSTER = "IBIS: the staging cluster is in eu-north-1."
TABS = "IBIS: use tabs in Makefiles."
CLAUDE_MD = f"# Ibis notes\n\n- {BUILD}\n- {TERSE}\n- {CLUSTER}\n"
CURSOR_RULE = f"---\ndescription: Ibis style\nalwaysApply: true\n---\n- {TABS}\n- {BUILD}\n"
#: Before the stub answers "Import the ...", run T.before_import once (a file changed between scan and import).
HOOK = r"""
local pick = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  local next_answer = T.answers[1]
  if T.before_import and next_answer and next_answer:find("Import the", 1, true) then
    local hook = T.before_import
    T.before_import = nil
    hook()
  end
  return pick(items, opts, on_choice)
end
"""


def entries(ws: Path) -> list[tuple[str, str]]:
    data = json.loads((ws / ".mnemon" / "runtime" / "memories.json").read_text(encoding="utf-8"))
    return [(e["target"], e["content"]) for e in data["entries"]]


def test_import_picks_per_source_and_refuses_a_changed_file(session: Session, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    make_repo(ws, "main")
    (ws / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    (ws / ".cursor" / "rules").mkdir(parents=True)
    (ws / ".cursor" / "rules" / "x.mdc").write_text(CURSOR_RULE, encoding="utf-8")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage"})
    session.lua(UI)
    session.lua(HOOK)
    session.nv.command("cd " + session.nv.funcs.fnameescape(str(ws)))
    session.open(ws / "CLAUDE.md")
    session.wait_attached()

    # A file changed between the scan and the import: refused, nothing written.
    session.lua("local path = ...; T.before_import = function() local f = io.open(path, 'a');"
                " f:write('- IBIS: one more line.\\n'); f:close() end", str(ws / "CLAUDE.md"))
    answer(session, "Import the")
    mark = session.mark()
    session.nv.command("MnemonImport")
    note = session.wait_note("mnemon: nothing imported: fingerprint: ", mark)
    assert note["level"] == ERROR
    assert f"{ws / 'CLAUDE.md'} changed since the scan; nothing was imported: scan again" in note["msg"]
    assert not (ws / ".mnemon" / "runtime" / "memories.json").exists()
    (ws / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")

    # Claude Code's items, untick the staging cluster, back, import the three picked.
    answer(session, "Claude Code", "staging cluster", "Done with", "Import the")
    mark = session.mark()
    session.nv.command("MnemonImport")
    note = session.wait_note("mnemon: imported", mark)
    assert note["level"] == INFO and note["msg"] == "mnemon: imported 3 items (2 to MEMORY.md, 1 to USER.md)"
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert prompts == ["mnemon: import from other assistants (4 picked)", "mnemon: Claude Code: pick what to import",
                       "mnemon: Claude Code: pick what to import", "mnemon: import from other assistants (3 picked)"]
    assert shown[0] == ["Import the 4 picked items", "Claude Code: 3 of 3 picked", "Cursor: 1 of 2 picked"]
    why = "a project fact or convention (CLAUDE.md)"
    assert shown[1] == ["Done with Claude Code (3 of 3 picked)", "Pick all", "Pick none",
                        f"[x] {BUILD} -> MEMORY.md: {why}",
                        f"[x] {TERSE} -> USER.md: a statement about the person (a profile or preference) (CLAUDE.md)",
                        f"[x] {CLUSTER} -> MEMORY.md: {why}"]
    assert shown[2][0] == "Done with Claude Code (2 of 3 picked)" and shown[2][5] == f"[ ] {CLUSTER} -> MEMORY.md: {why}"
    assert shown[3] == ["Import the 3 picked items", "Claude Code: 2 of 3 picked", "Cursor: 1 of 2 picked"]
    assert entries(ws) == [("memory", BUILD), ("user", TERSE), ("memory", TABS)]

    # The next scan skips what was imported and says why; cancelling a source's list goes back to the first list,
    # cancelling that imports nothing.
    answer(session, "Cursor")
    session.nv.command("MnemonImport")
    session.wait("#T.shown == 3", "the sources, the Cursor items, the sources again")
    shown = session.lua("return T.shown")
    assert shown[0] == shown[2] == ["Import the 1 picked item", "Claude Code: 1 of 3 picked", "Cursor: 0 of 2 picked"]
    assert shown[1] == [
        "Done with Cursor (0 of 2 picked)", "Pick all", "Pick none",
        f"[ ] {TABS} -> MEMORY.md: skipped: already imported (.cursor/rules/x.mdc)",
        # BUILD is in CLAUDE.md too, scanned first in the same run: named as a duplicate of that item (h-import48)
        f"[ ] {BUILD} -> MEMORY.md: skipped: duplicate of CLAUDE.md: Ibis notes (.cursor/rules/x.mdc)"]
    assert entries(ws) == [("memory", BUILD), ("user", TERSE), ("memory", TABS)]
    assert session.lua("return vim.fn.maparg('<Plug>(mnemon-import)', 'n')") == "<Cmd>MnemonImport<CR>"


POLICY = " ".join(f"Fixture {i} is rebuilt from the recorded session before every release." for i in range(30))


def test_an_item_its_source_refuses_is_named_and_the_rest_imported(session: Session, tmp_path: Path) -> None:
    """A section long enough for a Document, with the active Documents' limit (1,500 bytes) too small for it: the
    import writes the bullets, refuses that one item, and the notice (a warning) names it, where it was going, the
    setting and the rule. It was an info notice of the written count alone."""
    ws = tmp_path / "repo"
    make_repo(ws, "main")
    (ws / "CLAUDE.md").write_text(f"# Ibis notes\n\n- {BUILD}\n\n## Fixture policy\n\n{POLICY}\n", encoding="utf-8")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage",
                   "documents": {"activeLimitBytes": 1500}})
    session.lua(UI)
    session.nv.command("cd " + session.nv.funcs.fnameescape(str(ws)))
    session.open(ws / "CLAUDE.md")
    session.wait_attached()
    answer(session, "Import the")
    mark = session.mark()
    session.nv.command("MnemonImport")
    note = session.wait_note("mnemon: imported", mark)
    assert note["level"] == WARN
    assert note["msg"].startswith("mnemon: imported 1 item (1 to MEMORY.md); refused 1 (Fixture policy -> Document: "
                                  "documents.activeLimitBytes: "), note["msg"]
    assert note["msg"].endswith("): importing again tries it again"), note["msg"]
    assert entries(ws) == [("memory", BUILD)]
    assert not any((ws / ".mnemon" / "documents" / "active").glob("*.md"))


def test_files_imported_from_outside_the_repository_are_read_only_when_the_person_says_so(
        session: Session, tmp_path: Path) -> None:
    """CLAUDE.md imports ``@~/team.md`` (in the home directory, outside the repository and ~/.claude): the scan
    leaves it unread (needsApproval) and :MnemonImport asks first. "Leave them out" imports the repository's line
    only; "Read them" scans again with allowOutside and imports the team file's line too; cancelling the question
    imports nothing. The ``@~/team.md`` line itself is never an item."""
    ws = tmp_path / "repo"
    make_repo(ws, "main")
    team = tmp_path / "home" / "team.md"
    team.write_text(f"- {TABS}\n", encoding="utf-8")
    (ws / "CLAUDE.md").write_text(f"# Ibis notes\n\n- {BUILD}\n\n@~/team.md\n", encoding="utf-8")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage"})
    session.lua(UI)
    session.nv.command("cd " + session.nv.funcs.fnameescape(str(ws)))
    session.open(ws / "CLAUDE.md")
    session.wait_attached()
    question = ("mnemon: 1 imported file outside the repository was not read (credential locations never are): "
                f"~/team.md (imported by {ws / 'CLAUDE.md'} (@~/team.md))")

    answer(session, "<cancel>")
    session.nv.command("MnemonImport")
    session.wait("#T.shown == 1", "the question")
    assert session.lua("return { T.prompts, T.shown }") == [[question], [["Read them", "Leave them out"]]]
    assert not (ws / ".mnemon" / "runtime" / "memories.json").exists()

    answer(session, "Leave them out", "Import the")
    mark = session.mark()
    session.nv.command("MnemonImport")
    note = session.wait_note("mnemon: imported", mark)
    assert note["msg"] == "mnemon: imported 1 item (1 to MEMORY.md)"
    assert session.lua("return T.shown")[1] == ["Import the 1 picked item", "Claude Code: 1 of 1 picked"]
    assert entries(ws) == [("memory", BUILD)]

    answer(session, "Read them", "Import the")
    mark = session.mark()
    session.nv.command("MnemonImport")
    note = session.wait_note("mnemon: imported", mark)
    assert note["msg"].startswith("mnemon: imported 1 item (1 to MEMORY.md)"), note["msg"]
    assert session.lua("return T.prompts")[0] == question
    assert entries(ws) == [("memory", BUILD), ("memory", TABS)]
