"""``mnemon.util.reply_ok``: the one check of a request's answer that recall, status and document search share.

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
local function run(err, result)
  local ended = "not called"
  local ok = util.reply_ok("recall", err, result, function(e) ended = e == nil and "nil" or e.message end)
  out[#out + 1] = { ok = ok, ended = ended, notes = notes }
  notes = {}
end
run({ code = -32602, message = "query: must not be empty" }, nil)
run(nil, "a string")
run(nil, { results = {} })
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
    error, odd, fine = json.loads(done.stdout)
    assert error["ok"] is False and error["ended"] == "query: must not be empty"
    assert [n[0] for n in error["notes"]] == ["mnemon: recall failed: query: must not be empty"]
    assert error["notes"][0][1] == 4  # vim.log.levels.ERROR
    assert odd["ok"] is False and odd["ended"] == "unexpected reply"
    assert odd["notes"] == [["mnemon: recall failed: unexpected reply from mnemon-ls", 4]]
    assert fine == {"ok": True, "ended": "not called", "notes": []}
