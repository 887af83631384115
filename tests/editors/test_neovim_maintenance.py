"""The Neovim plugin's capacity maintenance notices (editors/neovim/lua/mnemon/maintenance.lua) and
:MnemonCompact (editors/neovim/lua/mnemon/compact.lua), end to end: real headless Neovim (0.7.2 and 0.11),
real mnemon-ls, real repository. A full USER.md is one actionable WARN message with :MnemonCompact /
:MnemonCompactRequest / :MnemonOpenUserFile; a compaction ends with one INFO message saying what changed. The
user's picks go through the vim.ui stubs of test_neovim_manage.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from .nvim_helpers import Session
from .test_neovim import ERROR, INFO, WARN, binary, make_workspace, session  # noqa: F401  (fixtures)
from .test_neovim_manage import UI, answer

SEP = "\n\u00a7\n"
ENTRIES = [("prefers tabs over spaces in Go", "normal"), ("never force-push to main, ever", "critical"),
           ("likes short commit subject li", "low")]
REQUEST = """
local method, params = ...
T.reply = nil
local c = require('mnemon.compat').get_clients({ name = 'mnemon', bufnr = 0 })[1]
require('mnemon.client').request(c, method, params, function(err, result) T.reply = { err = err, result = result } end)
T.wait(10000, function() return T.reply ~= nil end)
return vim.fn.json_encode(T.reply)
"""


def call(session: Session, method: str, params: dict) -> dict:
    return json.loads(session.lua(REQUEST, method, params))


def test_full_user_md_is_actionable_and_compaction_is_announced(session: Session, tmp_path: Path) -> None:
    _repo, repo_dir, notes, runtime = make_workspace(tmp_path)
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage", "runtimeMemory": {"userLimitBytes": 120}})
    session.open(notes)
    session.wait_attached()
    for content, importance in ENTRIES:
        assert call(session, "mnemon/runtime/mutate", {"action": "add", "target": "user", "content": content,
                                                       "importance": importance}).get("err") is None
    mark = session.mark()
    failed = call(session, "mnemon/runtime/mutate", {"action": "add", "target": "user",
                                                     "content": "works in UTC+2 hours"})
    plan = failed["err"]["data"]["maintenance"]
    note = session.wait_note("USER.md is full: compact it with your assistant, or open it", mark)
    assert note["level"] == WARN
    assert (":MnemonCompact merges or drops entries, :MnemonCompactRequest copies the request for your assistant, "
            ":MnemonOpenUserFile opens it") in note["msg"]

    session.nv.command("MnemonCompactRequest")
    text = "\n".join(session.nv.current.buffer[:])
    assert text.startswith("USER.md is full (120 bytes). Compact it:")
    assert text.endswith("Entries:\n1. [importance=normal] prefers tabs over spaces in Go\n"
                         "2. [importance=critical] never force-push to main, ever\n"
                         "3. [importance=low] likes short commit subject li")
    assert session.nv.funcs.getreg('"') == text
    session.nv.command("MnemonOpenUserFile")
    assert Path(session.nv.current.buffer.name) == runtime / "USER.md"
    session.nv.command("wincmd p")

    mark = session.mark()
    done = call(session, "mnemon/runtime/compact", {"revision": plan["revision"], "target": "user",
                                                    "pending": plan["pending"], "entries": [
        {"content": "Go tabs; never force-push main", "importance": "critical", "sourceIndexes": [1, 2]},
        {"content": "short commit subjects", "importance": "low", "sourceIndexes": [3]}]})
    assert done.get("err") is None
    note = session.wait_note("mnemon: Compacted USER.md: 2 entries replace 3", mark)
    assert note["level"] == INFO
    assert (runtime / "USER.md").read_text() == \
        "Go tabs; never force-push main\n\u00a7\nshort commit subjects\n\u00a7\nworks in UTC+2 hours\n"


COMPACT = """
T.result = nil
require('mnemon.compact').compact({}, function(err, receipt) T.result = { err = err, receipt = receipt } end)
"""


def compact(session: Session, *answers: str) -> dict:
    """:MnemonCompact through its Lua entry point with scripted picks; the callback's {err, receipt}."""
    answer(session, *answers)
    session.lua(COMPACT)
    session.wait("T.result ~= nil", "the compaction's callback")
    return session.lua("return T.result")


def test_compact_merges_or_drops_picked_entries_with_the_pending_change(session: Session, tmp_path: Path) -> None:
    _repo, repo_dir, notes, runtime = make_workspace(tmp_path)
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage", "runtimeMemory": {"userLimitBytes": 120}})
    session.open(notes)
    session.wait_attached()
    session.lua(UI)
    for content, importance in ENTRIES:
        call(session, "mnemon/runtime/mutate", {"action": "add", "target": "user", "content": content,
                                                "importance": importance})
    mark = session.mark()
    call(session, "mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "works in UTC+2 hours"})
    session.wait_note("USER.md is full", mark)

    # from the plan: numbered as `mnemon-ls runtime list --target user`; the pending add lands with it
    mark = session.mark()
    result = compact(session, "1. prefers", "2. never", "Done", "Merge into one entry", "Go tabs; no force-push")
    assert result.get("err") is None and result["receipt"]["maintenance"]["entries"][0]["sourceIndexes"] == [1, 2]
    shown = session.lua("return T.shown")
    assert shown[0] == ["[ ] 1. prefers tabs over spaces in Go (30 bytes)",
                        "[ ] 2. never force-push to main, ever (critical; 30 bytes)",
                        "[ ] 3. likes short commit subject li (low; 29 bytes)",
                        "Done: merge or drop the 0 picked entries"]
    assert shown[2][:2] == ["[x] 1. prefers tabs over spaces in Go (30 bytes)",
                            "[x] 2. never force-push to main, ever (critical; 30 bytes)"]
    assert shown[3] == ["Merge into one entry", "Drop"]
    note = session.wait_note("mnemon: Compacted USER.md: 2 entries replace 3 (79/120 bytes)", mark)
    assert note["level"] == INFO
    assert note["msg"].split("\n")[1:] == ["  merged 1, 2 into: Go tabs; no force-push", "  unchanged: 3",
                                           "  USER.md: 97 -> 79 UTF-8 bytes"]
    assert (runtime / "USER.md").read_text() == SEP.join(
        ["Go tabs; no force-push", "likes short commit subject li", "works in UTC+2 hours"]) + "\n"

    # no plan any more: numbered from the snapshot; drop one
    mark = session.mark()
    result = compact(session, "2. likes", "Done", "Drop")
    assert result.get("err") is None
    note = session.wait_note("mnemon: Compacted USER.md", mark)
    assert note["msg"].split("\n")[1:] == ["  dropped 2", "  unchanged: 1, 3", "  USER.md: 79 -> 46 UTF-8 bytes"]
    assert (runtime / "USER.md").read_text() == SEP.join(["Go tabs; no force-push", "works in UTC+2 hours"]) + "\n"
    assert "likes short commit subject li" in (runtime / "archived" / "USER.md").read_text()
    assert [n["level"] for n in session.notes()[mark:]] == [INFO]  # one message for one compaction


def test_a_refused_compaction_is_one_error_and_a_full_user_md_one_warning(session: Session, tmp_path: Path) -> None:
    _repo, repo_dir, notes, runtime = make_workspace(tmp_path)
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage", "runtimeMemory": {"userLimitBytes": 120}})
    session.open(notes)
    session.wait_attached()
    session.lua(UI)
    for content, importance in ENTRIES:
        call(session, "mnemon/runtime/mutate", {"action": "add", "target": "user", "content": content,
                                                "importance": importance})
    # an edit from :MnemonEntries that does not fit: the server's full-USER.md notice is the one message
    mark = session.mark()
    answer(session, "likes short", "Edit", "likes short commit subject lines, written in the imperative mood")
    session.lua("T.result = nil; require('mnemon.manage').entries({ target = 'user' }, function(err) "
                "T.result = { err = err } end)")
    session.wait("T.result ~= nil", "the edit's callback")
    session.wait_note("USER.md is full", mark)
    call(session, "mnemon/status", {})  # a round trip: whatever the failure sends has arrived
    assert [n["level"] for n in session.notes()[mark:]] == [WARN]

    before = (runtime / "memories.json").read_bytes()
    mark = session.mark()
    result = compact(session, "1. prefers", "Done", "Merge into one entry", "x" * 90)
    assert result["err"]["code"] == "invalid-input"
    notes_after = session.notes()[mark:]
    assert [n["level"] for n in notes_after] == [ERROR]
    # the plan of the failed edit (a replace of entry 3, pending) numbers entries 1 and 2, budget 84 - 64 - 4
    assert notes_after[0]["msg"].startswith("mnemon: not compacted: entries: USER.md would still use 124 UTF-8 bytes "
                                            "for its entries, over the budget of 16")
    assert (runtime / "memories.json").read_bytes() == before
