"""The Neovim plugin's capacity maintenance notices (editors/neovim/lua/mnemon/maintenance.lua), end to end:
real headless Neovim (0.7.2 and 0.11), real mnemon-ls, real repository. A full USER.md is an actionable
WARN message with :MnemonCompactRequest / :MnemonOpenUserFile; a compaction ends with a short INFO message.
"""

from __future__ import annotations

import json
from pathlib import Path

from .nvim_helpers import Session
from .test_neovim import INFO, WARN, binary, make_workspace, session  # noqa: F401  (fixtures)

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
    assert ":MnemonCompactRequest copies the request for your assistant, :MnemonOpenUserFile opens it" in note["msg"]

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
