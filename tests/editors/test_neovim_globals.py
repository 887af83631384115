"""No Lua file of the Neovim plugin reads or writes a global it does not define.

A misspelt or out-of-scope local (``{ bufnr = bufnr }`` in a function that never declared ``bufnr``) is a
global read in Lua: it yields nil at run time and nothing fails until a user notices that a request went
to the wrong buffer. This test lists every global access of every plugin file from LuaJIT's bytecode
(``jit.bc``, inside the PyPI Neovim 0.11, which runs Lua scripts with ``nvim -l``) and allows only Lua
5.1's and LuaJIT's standard globals and ``vim``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.editors.nvim_helpers import PLUGIN_DIR, wheel_nvim

#: Lua 5.1 base library and standard modules, LuaJIT's ``jit``/``bit``, and Neovim's ``vim``.
ALLOWED = sorted(
    """_G _VERSION assert collectgarbage coroutine debug dofile error getfenv getmetatable io ipairs load loadfile
    loadstring math module next os package pairs pcall print rawequal rawget rawset require select setfenv
    setmetatable string table tonumber tostring type unpack xpcall jit bit vim""".split()
)

#: Prints "<file>\t<GGET|GSET>\t<name>" for every global access outside ALLOWED; the file paths are the
#: script's arguments after the first (the allowed names, comma-separated).
SCRIPT = r"""
local bc = require("jit.bc")
local allowed = {}
for name in arg[1]:gmatch("[^,]+") do allowed[name] = true end
for i = 2, #arg do
  local fn = assert(loadfile(arg[i]))
  local chunks = {}
  bc.dump(fn, { write = function(_, s) chunks[#chunks + 1] = s end, flush = function() end }, true)
  for op, name in table.concat(chunks):gmatch('(G[GS]ET)%s+[%d%s]*;%s*"([%w_]+)"') do
    if not allowed[name] then io.stdout:write(arg[i], "\t", op, "\t", name, "\n") end
  end
end
"""


def test_plugin_lua_touches_no_undefined_global(tmp_path: Path) -> None:
    nvim = wheel_nvim()
    if not nvim.path:
        pytest.skip(nvim.missing)
    files = sorted(str(p) for p in PLUGIN_DIR.rglob("*.lua"))
    assert len(files) >= 20, files  # the plugin's modules, plugin/ and lsp/ files were all found
    script = tmp_path / "globals.lua"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [nvim.path, "--clean", "-l", str(script), ",".join(ALLOWED), *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = [line.replace(str(PLUGIN_DIR) + "/", "") for line in done.stdout.splitlines()]
    assert found == []


def test_the_check_sees_an_undefined_global(tmp_path: Path) -> None:
    """The bytecode listing does report an undefined global (so an empty list above means something)."""
    nvim = wheel_nvim()
    if not nvim.path:
        pytest.skip(nvim.missing)
    bad = tmp_path / "bad.lua"
    bad.write_text("local M = {}\nfunction M.f(opts)\n  return { bufnr = bufnr, n = #opts }\nend\nreturn M\n")
    script = tmp_path / "globals.lua"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [nvim.path, "--clean", "-l", str(script), ",".join(ALLOWED), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{bad}\tGGET\tbufnr"]
