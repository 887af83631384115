"""An unknown method or ``workspace/executeCommand`` command name is named clipped in the error of the real
server (pygls echoed it whole: a 100 KB name came back as a 100 KB message)."""

from __future__ import annotations

from pathlib import Path

from pygls.exceptions import JsonRpcException

from mnemon_ls.errors import ECHO_LIMIT
from tests.lsp.conftest import MnemonClient, uri

LONG = "x" * 100_000


async def test_an_unknown_method_is_named_clipped(client: MnemonClient) -> None:
    error = await client.call_error("mnemon/" + LONG, {})
    assert (error.code, error.message) == (-32601, "Method Not Found: mnemon/" + "x" * (ECHO_LIMIT - 7) + "...")
    assert error.data == {"code": "method-not-found"}
    short = await client.call_error("mnemon/nope", {})
    assert short.message == "Method Not Found: mnemon/nope"
    assert (await client.status())["protocolVersion"]  # the connection still serves


async def test_an_unknown_command_is_named_clipped(client: MnemonClient, repo_dir: Path) -> None:
    try:
        await client.command("mnemon." + LONG, {})
    except JsonRpcException as error:
        assert (error.code, error.message) == (
            -32602, "Invalid Params: Command name 'mnemon." + "x" * (ECHO_LIMIT - 8) + "... is not defined")
    else:
        raise AssertionError("an unknown command was run")
    try:
        await client.command("mnemon.nope", {})
    except JsonRpcException as error:
        assert error.message == "Invalid Params: Command name 'mnemon.nope' is not defined"
    else:
        raise AssertionError("an unknown command was run")
    (repo_dir / "a.py").write_text("x = 1\n", encoding="utf-8")  # a known command still runs
    answer = await client.command("mnemon.server.showCitingMemories", {"uri": uri(repo_dir / "a.py"), "line": 1})
    assert answer["path"].endswith(".md"), answer
