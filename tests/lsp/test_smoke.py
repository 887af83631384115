from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.lsp.conftest import CLIENTS, as_dict, server_config


@pytest_lsp.fixture(params=CLIENTS, config=server_config(Path("/tmp/unused")))
async def client(lsp_client: LanguageClient, request, workspace: Path):
    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="repo")],
        initialization_options={"mnemon": {"storageScope": "workspace"}},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_smoke(client: LanguageClient, workspace: Path):
    r = await client.protocol.send_request_async("mnemon/runtime/mutate", {"action": "add", "content": "hello world"})
    print(as_dict(r))
    w = await client.protocol.send_request_async("mnemon/wake", {})
    print(as_dict(w)["text"])
    s = await client.protocol.send_request_async("mnemon/status", {})
    print(as_dict(s))
    try:
        await client.protocol.send_request_async("mnemon/runtime/mutate", {"action": "add", "content": "a§"})
    except Exception as e:
        print(type(e), e, getattr(e, "data", None))
    assert (workspace / ".mnemon" / "runtime" / "MEMORY.md").read_text() == "hello world\n"
