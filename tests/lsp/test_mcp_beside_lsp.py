"""An MCP server (``mnemon-ls mcp``, driven by the SDK's client) and a language server on one root, writing
at once: nothing is lost, and each sees the other's facts (the editor's wake shows what the assistant
added over MCP)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.lsp.conftest import Launcher
from tests.mcp.conftest import mcp_session, server_env, text

WORKSPACE = {"mnemon": {"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 1048576}}}
COUNT = 30
#: Requests of one server waiting for the store's lock at once. The MCP SDK runs each tool call in a worker
#: thread (up to 40): with all 30 sent at once, the last waited past the store's 10 s lock timeout under
#: stress-ng at load 14 (StoreBusy, as designed). The two servers still contend for every commit.
IN_FLIGHT = 2


async def test_mcp_and_language_server_on_one_root_lose_nothing(lsp: Launcher, repo, repo_dir: Path) -> None:
    editor = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    args = ["--workspace", str(repo_dir), "--scope", "workspace", "--memory-limit-bytes", "1048576"]
    async with mcp_session(args, env=server_env(HOME=str(lsp.home))) as session:
        mcp_slots, lsp_slots = asyncio.Semaphore(IN_FLIGHT), asyncio.Semaphore(IN_FLIGHT)

        async def over_mcp(n: int) -> None:
            async with mcp_slots:
                result = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": f"mcp fact {n}"})
            assert not result.is_error, text(result)

        async def over_lsp(n: int) -> None:
            async with lsp_slots:
                receipt = await editor.call("mnemon/runtime/mutate", {"action": "add", "content": f"editor fact {n}"},
                                            timeout=60)
            assert receipt["changed"]

        await asyncio.gather(*(over_mcp(n) for n in range(COUNT)), *(over_lsp(n) for n in range(COUNT)))
        wake_over_mcp = text(await session.call_tool("mnemon_wake", {}))
    stored = json.loads((repo_dir / ".mnemon" / "runtime" / "memories.json").read_text())["entries"]
    expected = {f"mcp fact {n}" for n in range(COUNT)} | {f"editor fact {n}" for n in range(COUNT)}
    assert sorted(e["content"] for e in stored) == sorted(expected)
    editor_wake = (await editor.call("mnemon/wake", {}))["text"]
    assert all(fact in editor_wake and fact in wake_over_mcp for fact in expected)
    assert not (repo_dir / ".mnemon" / "runtime" / "edits").exists(), "a commit was taken for a hand edit"
