"""Keyword recall over the real ``mnemon-ls mcp`` (semantic recall off, so ``recallPolicy`` auto is strict-v2):
when every match is weak (``low``: a name alone here), the assistant is told how many were withheld, with the
``withheld:`` line semantic recall uses (docs/semantic.md), and what to do, not "no result passed the quality
policy"; the person's command line lists how to see them. A real CLI writes the memories first."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import answer, mcp_session, server_env

QUESTION = "When is Priya Raman's birthday?"


async def test_weak_keyword_matches_are_counted_as_withheld(workspace: Path, data_dir: Path) -> None:
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    env = server_env(MNEMON_SEMANTIC="off")

    def cli(*argv: str) -> str:
        done = subprocess.run([*mnemon_command(), *argv, *args], capture_output=True, text=True, env=env,
                              cwd=workspace, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("space", "create", "--name", "Project", "--description", "facts", "--active")
    cli("remember", "Priya Raman owns the billing service")
    cli("remember", "Priya Raman reviews the payments migration")
    async with mcp_session(args, env=env) as session:
        body = await answer(session, "mnemon_recall", {"query": QUESTION})
        # null for the optional flag is the argument left out (every optional MCP argument: ops/jsonargs)
        left_out = await answer(session, "mnemon_recall", {"query": QUESTION, "include_low_confidence": None})
        # the assistant asks for what was withheld: both weak matches are sent, labelled low
        asked = await answer(session, "mnemon_recall", {"query": QUESTION, "include_low_confidence": True})
        refused = await session.call_tool("mnemon_recall", {"query": QUESTION, "include_low_confidence": "yes"})
    assert body == ("withheld: 2 results with low confidence (not sent; include_low_confidence: true sends them)\n"
                    "No memory matched with enough confidence: ask again with more of the words a stored fact would "
                    "use (a name or one common word alone is a weak match).")
    assert left_out == body
    lines = asked.splitlines()
    assert sorted(line[3:] for line in lines[0::2]) == ["Priya Raman owns the billing service",
                                                        "Priya Raman reviews the payments migration"], asked
    assert len(lines) == 4 and all("· tier: low ·" in line for line in lines[1::2]), asked
    assert "withheld" not in asked, asked
    assert refused.is_error and refused.content[0].text.endswith("invalid-input: include_low_confidence: input should "
                                                                  "be a valid boolean, not a string (got 'yes')"), (
        refused.content)
    assert cli("recall", QUESTION) == ("0 result(s); no result passed the quality policy (2 weak matches, labelled "
                                       "low: recallPolicy balanced-v1 lists them, MNEMON_RECALL_POLICY=balanced-v1 "
                                       "for one command)\n")
