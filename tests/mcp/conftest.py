"""Fixtures for the MCP server tests: the real ``mnemon-ls mcp`` as a subprocess, driven by the official
SDK's own stdio client (``mcp.client.stdio`` + ``ClientSession``)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME for the process under test (``<tmp_path>/home``)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository (``<tmp_path>/repo``, pygit2) to run in."""
    path = tmp_path / "repo"
    make_repo(path)
    return path


def server_env(**extra: str) -> dict[str, str]:
    """Our environment minus anything that could redirect git or mnemon, plus ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "MNEMON_")) or k == "MNEMON_SEMANTIC"}  # tests/conftest.py sets it
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


@contextlib.asynccontextmanager
async def mcp_session(args: Sequence[str], *, cwd: Path | None = None, roots: list[Path] | None = None,
                      env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with ``python -m mnemon_ls mcp <args>``; with ``roots`` the client
    offers them through ``roots/list`` (the list object can be changed in place, then announced)."""
    command = mnemon_command("mcp", *args)  # python -m mnemon_ls mcp <args>, forked (tests/helpers/zygote.py)
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd or REPO),
                                   env=env or server_env())
    callback = None
    if roots is not None:
        async def callback(_ctx: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=p.as_uri()) for p in roots])

    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, list_roots_callback=callback) as session:
                await session.initialize()
                yield session


def text(result: types.CallToolResult) -> str:
    """The text of a tool result (all text parts joined)."""
    return "\n".join(part.text for part in result.content if isinstance(part, types.TextContent))


async def answer(session, name: str, arguments: dict) -> str:
    """The text a tool call answers, failing the test when the tool answers an error (its text in the message)."""
    result = await session.call_tool(name, arguments)
    assert not result.is_error, text(result)
    return text(result)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A real git repository on ``main`` with one commit."""
    path = tmp_path / "repo"
    make_repo(path)
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A custom storage root (nothing else of the machine is touched)."""
    return tmp_path / "root"
