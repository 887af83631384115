"""``mnemon_import_propose`` on a Markdown file with no heading (the official SDK client over stdio, a real
server): every proposal was titled by the file name ("AGENTS.md" three times), so a person reviewing them could not
tell them apart by title. An item under no heading is now titled by its first sentence (trimmed), as an item under a
heading is titled by that heading."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import mcp_session, server_env
from tests.mcp.test_mcp_server import args_for, call

AGENTS_MD = ("Use pnpm for the web client, never npm. It keeps one lockfile.\n\n"
             "- The API is versioned under /v2; /v1 is frozen.\n"
             "- Always answer me in a terse style, bullet points first and the details after them, in full sentences "
             "that a reviewer can paste into the changelog without editing\n\n"
             "# Release\n\n- The release train leaves every second Tuesday.\n")


async def test_proposals_of_a_file_without_headings_have_distinct_titles(workspace: Path, data_dir: Path,
                                                                        tmp_path: Path) -> None:
    (workspace / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    env = server_env(DSH_HOME=str(tmp_path / "dsh"), HOME=str(tmp_path))
    async with mcp_session(args_for(workspace, data_dir), env=env) as session:
        error, message = await call(session, "mnemon_import_propose", {"source": "agents-md"})
        assert not error, message
    records = [json.loads(line) for line in
               (workspace / ".dsh" / "workspace-memory" / "records.jsonl").read_text().splitlines()]
    assert [r["title"] for r in records] == [
        "Use pnpm for the web client, never npm.",
        "The API is versioned under /v2; /v1 is frozen.",
        "Always answer me in a terse style, bullet points first and the details after them, in…",
        "Release"]
    assert ": Use pnpm for the web client, never npm. -> MEMORY.md" in message
