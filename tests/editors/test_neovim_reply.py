"""``mnemon.util.reply_ok``: the one check of a request's answer that recall, status and document search share,
and wake, remember and forget with their own words (its ``opts``: ``failed``, ``hint``, ``field``, ``whole``).

Runs the plugin's module in a real headless Neovim (the PyPI 0.11, ``nvim -l``), with ``vim.notify`` recorded.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.editors.nvim_helpers import PLUGIN_DIR, wheel_nvim

SCRIPT = r"""
vim.opt.runtimepath:prepend(arg[1])
local notes = {}
vim.notify = function(msg, level) notes[#notes + 1] = { msg, level } end
local util = require("mnemon.util")
local out = {}
local function run(err, result, what, opts)
  local ended = "not called"
  local ok = util.reply_ok(what or "recall", err, result, function(e) ended = e == nil and "nil" or e.message end, opts)
  out[#out + 1] = { ok = ok, ended = ended, notes = notes }
  notes = {}
end
run({ code = -32602, message = "query: must not be empty" }, nil)
run(nil, "a string")
run(nil, { results = {} })
-- wake: the answer must have a string `text`
run(nil, { text = 3 }, "wake", { field = "text" })
run(nil, { text = "# Wake" }, "wake", { field = "text" })
-- remember: its own words, and the whole message ends the callback of an unexpected answer
local remember = { failed = "not remembered", whole = true }
run({ code = -32602, message = "text: must not be empty" }, nil, "remember", remember)
run(nil, 42, "remember", remember)
-- forget: a hint after the error when the error's data has one, nothing added when not
local function hint(e) return e.data and e.data.matches and ("(" .. e.data.matches .. " entries match)") or nil end
local forget = { failed = "not forgotten", hint = hint }
run({ code = -32602, message = "oldText: 2 memory entries contain", data = { code = "ambiguous-match", matches = 2 } },
  nil, "forget", forget)
run({ code = -32602, message = "oldText: no memory entry contains" }, nil, "forget", forget)
run(nil, true, "forget", forget)
io.stdout:write(vim.json.encode(out))
"""


def test_reply_ok_tells_the_error_or_the_unexpected_reply_once_and_ends_the_callback(tmp_path: Path) -> None:
    nvim = wheel_nvim()
    if not nvim.path:
        pytest.skip(nvim.missing)
    script = tmp_path / "reply.lua"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([nvim.path, "--clean", "-l", str(script), str(PLUGIN_DIR)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    error, odd, fine, *worded = json.loads(done.stdout)
    assert error["ok"] is False and error["ended"] == "query: must not be empty"
    assert [n[0] for n in error["notes"]] == ["mnemon: recall failed: query: must not be empty"]
    assert error["notes"][0][1] == 4  # vim.log.levels.ERROR
    assert odd["ok"] is False and odd["ended"] == "unexpected reply"
    assert odd["notes"] == [["mnemon: recall failed: unexpected reply from mnemon-ls", 4]]
    assert fine == {"ok": True, "ended": "not called", "notes": []}
    wake_odd, wake_fine, remember_error, remember_odd, forget_hint, forget_plain, forget_odd = worded
    assert wake_odd == {"ok": False, "ended": "unexpected reply",
                        "notes": [["mnemon: wake failed: unexpected reply from mnemon-ls", 4]]}
    assert wake_fine == {"ok": True, "ended": "not called", "notes": []}
    assert remember_error == {"ok": False, "ended": "text: must not be empty",
                              "notes": [["mnemon: not remembered: text: must not be empty", 4]]}
    assert remember_odd == {"ok": False, "ended": "mnemon: not remembered: unexpected reply from mnemon-ls",
                            "notes": [["mnemon: not remembered: unexpected reply from mnemon-ls", 4]]}
    assert forget_hint["ok"] is False and forget_hint["ended"] == "oldText: 2 memory entries contain"
    assert forget_hint["notes"] == [
        ["mnemon: not forgotten: oldText: 2 memory entries contain [ambiguous-match] (2 entries match)", 4]]
    assert forget_plain["notes"] == [["mnemon: not forgotten: oldText: no memory entry contains", 4]]
    assert forget_odd == {"ok": False, "ended": "unexpected reply",
                          "notes": [["mnemon: not forgotten: unexpected reply from mnemon-ls", 4]]}
