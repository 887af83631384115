"""A recall of a fact kept only in Runtime memory (MEMORY.md, USER.md), not in any Memory Space (real CLI and MCP
server subprocesses, a real git repository, an empty HOME). Recall searches the Memory Spaces only, so it answered
no result and no hint: an assistant that asked concluded nothing was remembered, though the wake snapshot held the
fact. An answer with no result now says how many Runtime memory entries the wake shows hold most of the query's
words, in which file, and where that surface reads them (``runtimeMatches`` and a notice); an entry the wake hides
(scoped to another branch) is not counted, and a recall with results says nothing of it."""

from __future__ import annotations

import json

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.mcp.conftest import answer, mcp_session, server_env

FACT = "The staging deploy listens on port 8443 behind the blue-green router"


def _note(where: str, files: str = "MEMORY.md", count: int = 1) -> str:
    noun, pronoun = ("entry", "it is") if count == 1 else ("entries", "they are")
    return (f"Runtime memory holds {count} {noun} with most of these words ({files}); recall searches only the "
            f"Memory Spaces: {pronoun} in the wake snapshot ({where})")


CLI_WHERE = "`mnemon-ls wake`; `mnemon-ls runtime list` lists every entry"


async def test_an_empty_recall_says_runtime_memory_holds_matching_entries(cli: Cli) -> None:  # noqa: F811
    cli.ok("runtime", "add", "--content", FACT)
    cli.ok("runtime", "add", "--content", "Staging deploy port on the feature branch is 9443", "--branch", "feature")

    said = cli.ok("recall", "what port does the staging deploy use").splitlines()
    assert said == [f"note: {_note(CLI_WHERE)}",  # before: only the last line
                    "0 result(s); no active space (`mnemon-ls space create --name NAME --active` makes one; "
                    "`mnemon-ls space activate SPACE` reads one)"]
    data = json.loads(cli.ok("recall", "staging deploy port", "--json"))
    assert data["results"] == [] and data["runtimeMatches"] == {"MEMORY.md": 1}  # the feature entry is hidden here
    assert data["notices"] == [_note(CLI_WHERE)]

    quiet = json.loads(cli.ok("recall", "kubernetes cluster autoscaling", "--json"))  # no entry holds these words
    assert "runtimeMatches" not in quiet and quiet["notices"] == []
    half = json.loads(cli.ok("recall", "staging kubernetes cluster", "--json"))  # one word of three: not most
    assert "runtimeMatches" not in half

    cli.ok("runtime", "add", "--target", "user", "--content", "Prefers the staging deploy checked before port changes")
    both = json.loads(cli.ok("recall", "staging deploy port", "--json"))
    assert both["runtimeMatches"] == {"USER.md": 1, "MEMORY.md": 1}
    assert both["notices"] == [_note(CLI_WHERE, "USER.md (1) and MEMORY.md (1)", 2)]

    cli.ok("space", "create", "--name", "notes", "--description", "project notes", "--active")
    assert cli.ok("recall", "staging deploy port").splitlines() == [
        f"note: {_note(CLI_WHERE, 'USER.md (1) and MEMORY.md (1)', 2)}", "0 result(s); nothing matched"]
    cli.ok("remember", "--space", "notes", "The staging deploy port moved to 8443 in March")
    found = json.loads(cli.ok("recall", "staging deploy port", "--json"))
    assert found["results"] and "runtimeMatches" not in found and found["notices"] == []

    args = ["--workspace", str(cli.ws), *Cli.SCOPE]
    async with mcp_session(args, env=server_env(HOME=str(cli.home), MNEMON_DATA_DIR=str(cli.data))) as session:
        await answer(session, "mnemon_memory_spaces", {"action": "deactivate", "space_id": "notes"})
        told = await answer(session, "mnemon_recall", {"query": "blue-green router"})
    assert told.splitlines() == [f"note: {_note('mnemon_wake')}", "No memory matched. no active space"], told
