"""``mnemon_import_propose`` says what it did not propose and why (the official SDK client over stdio, a real
server): a Claude Code ``@path`` import that leaves the workspace is refused by name (the import follows the others),
and a Cline memory bank's temporary progress (``activeContext.md``, ``progress.md``) is not proposed as memory:
before, progress.md's bullets were filed as proposals to MEMORY.md and imports stayed unread."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import mcp_session, server_env
from tests.mcp.test_mcp_server import args_for, call


async def test_the_proposal_names_a_refused_import_and_skips_temporary_progress(workspace: Path, data_dir: Path,
                                                                               tmp_path: Path) -> None:
    (workspace / "CLAUDE.md").write_text("- Style rules live in @docs/code.md; see also @../elsewhere.md\n",
                                         encoding="utf-8")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "code.md").write_text("## Style\n\n- Functions stay under forty lines.\n", "utf-8")
    (tmp_path / "elsewhere.md").write_text("- Not in the workspace.\n", encoding="utf-8")
    bank = workspace / "memory-bank"
    bank.mkdir()
    (bank / "productContext.md").write_text("- Orbit plans antenna time for the ground stations.\n", "utf-8")
    (bank / "progress.md").write_text("## What's left\n\n- RAW files.\n- JPEG export.\n", encoding="utf-8")
    env = server_env(DSH_HOME=str(tmp_path / "dsh"), HOME=str(tmp_path / "home"))
    async with mcp_session(args_for(workspace, data_dir), env=env) as session:
        error, claude = await call(session, "mnemon_import_propose", {"source": "claude-code"})
        assert not error, claude
        error, cline = await call(session, "mnemon_import_propose", {"source": "cline"})
        assert not error, cline
    assert claude.startswith("Filed 2 import proposal(s) from claude-code")
    assert (f"refused {tmp_path / 'elsewhere.md'}: is imported by {workspace / 'CLAUDE.md'} (@../elsewhere.md) but "
            f"leaves {workspace}; not read") in claude
    assert cline.startswith("Filed 1 import proposal(s) from cline")
    assert ("Not proposed: 2 item(s) of temporary progress (a memory bank's activeContext.md and progress.md, "
            "rewritten every session); memory keeps durable facts.") in cline
    records = [json.loads(line) for line in
               (workspace / ".dsh" / "workspace-memory" / "records.jsonl").read_text().splitlines()]
    assert sorted(r["content"] for r in records) == [
        "Orbit plans antenna time for the ground stations.", "Style rules live in @docs/code.md; see also "
        "@../elsewhere.md", "Style: Functions stay under forty lines."]
