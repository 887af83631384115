"""An exception no layer expected (a bug) reaches an MCP client as ``internal-error: <type>: <message>``, never as
the SDK's bare "Error executing tool <name>" (h-attack49: a ``ValueError`` from ``os.lstat`` on a path holding
NUL gave only that line, with no field and no kind), and its traceback goes to the server's log. The fault is
injected into a real host's ``wake``: no input of today's code raises one (that is what makes it a bug)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from mnemon_ls.mcp.server import MnemonMcp
from tests.mcp.test_mcp_nowait import WAKE, _server


def _broken(*args: object, **kwargs: object) -> None:
    raise ValueError("embedded null byte")


async def test_an_unexpected_exception_is_an_internal_error_with_its_kind(workspace: Path, data_dir: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    app: MnemonMcp = _server(workspace, data_dir)
    host = await app._resolve(None, None)
    host.wake = _broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="mnemon_ls.mcp"), pytest.raises(ToolError) as raised:
        await app._run_operation(None, WAKE, {})
    assert str(raised.value) == "internal-error: ValueError: embedded null byte"
    logged = [r for r in caplog.records if r.name == "mnemon_ls.mcp" and r.levelno == logging.ERROR]
    assert [r.getMessage() for r in logged] == ["internal error in workspace.wake"]
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is ValueError


async def test_a_refusal_is_still_its_own_error(workspace: Path, data_dir: Path) -> None:
    app: MnemonMcp = _server(workspace, data_dir)
    with pytest.raises(ToolError) as raised:
        await app._run_operation(None, WAKE, {"budgetChars": -5})
    assert str(raised.value).startswith("invalid-input: budget")
