"""The stores deleted spaces keep in ``data/.deleted/`` are named by ``space list`` (a note, on every surface) and
``doctor`` (count, size, where, how to remove them; they were never mentioned), and ``space purge-deleted``
removes them for good only with ``--confirm`` (refused like ``space delete``: exit 3 naming confirm, nothing
changed). Real CLI subprocesses (``tests/cli/test_cli.py``'s :class:`Cli`); a real MCP server for the same note."""

from __future__ import annotations

import asyncio
import json
import os

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.cli.test_space_delete import _two_spaces
from tests.conftest import disk_state


def _bytes(folder: str) -> int:
    total = 0
    for where, _dirs, files in os.walk(folder):
        total += sum(os.lstat(os.path.join(where, f)).st_size for f in files)
    return total


def test_kept_stores_are_named_and_purged_only_with_confirm(cli: Cli) -> None:  # noqa: F811
    space = _two_spaces(cli)
    assert "deleted space" not in cli.run("space", "list").stderr  # nothing kept: nothing said
    cli.ok("space", "delete", "Build facts", "--confirm")
    kept = cli.data / "data" / ".deleted"
    [copy] = sorted(kept.glob(f"*-{space}"))
    size = _bytes(str(copy)) + os.lstat(f"{copy}.json").st_size
    words = f"{size} bytes" if size < 1024 else (f"{size / 1024:.1f} KiB" if size < 1024 ** 2
                                                 else f"{size / 1024 ** 2:.1f} MiB")
    line = (f"1 deleted space's store ({words}) is kept in {kept}: `mnemon-ls space purge-deleted --confirm` "
            "removes it for good (to restore one, move its folder back to data/<id>)")
    listed = cli.run("space", "list")
    assert listed.returncode == 0 and listed.stderr == f"mnemon-ls: note: {line}\n"
    doctor = cli.run("doctor")
    assert line in doctor.stdout and doctor.returncode == 0, doctor.stdout
    assert [f for f in json.loads(cli.run("doctor", "--json").stdout)["findings"] if f["subject"] == str(kept)] == [
        {"level": "ok", "subject": str(kept), "message": line,
         "advice": "`mnemon-ls space purge-deleted --confirm` removes the kept stores for good"}]

    before = disk_state(cli.tmp, pin=True)
    refused = cli.run("space", "purge-deleted")
    assert (refused.returncode, refused.stdout) == (3, "")
    assert refused.stderr == (
        f"mnemon-ls: error: --confirm: {kept} keeps 1 deleted space's store ({words}); removing them for good "
        "needs explicit confirmation (--confirm / \"confirm\": true); they cannot be restored afterwards\n")
    error = json.loads(cli.run("space", "purge-deleted", "--json").stdout)["error"]
    assert (error["code"], error["field"], error["count"], error["bytes"], error["path"]) == (
        "confirmation-required", "--confirm", 1, size, str(kept))
    assert disk_state(cli.tmp) == before

    (kept / "notes.txt").write_text("mine")  # not a kept store: left alone
    assert cli.ok("space", "purge-deleted", "--yes") == (
        f"Removed 1 deleted space's store ({words}) from {kept} for good.\n")
    assert sorted(p.name for p in kept.iterdir()) == ["notes.txt"]
    assert cli.run("space", "list").stderr == "" and str(kept) not in cli.run("doctor").stdout
    assert cli.ok("space", "purge-deleted") == f"No deleted space's store is kept in {kept}; nothing was removed.\n"
    assert [s["id"] for s in cli.ok_json("space", "list")] == ["default"]


def test_the_mcp_space_list_says_the_same_note(cli: Cli) -> None:  # noqa: F811
    from tests.mcp.conftest import mcp_session

    _two_spaces(cli)
    cli.ok("space", "delete", "Build facts", "--confirm")

    async def listing() -> str:
        async with mcp_session(["--workspace", str(cli.ws), *cli.SCOPE], cwd=cli.ws, env=cli.env) as session:
            answer = await session.call_tool("mnemon_memory_spaces", {"action": "list"})
            return "\n".join(getattr(c, "text", "") for c in answer.content)

    text = asyncio.run(listing())
    assert "note: 1 deleted space's store (" in text and f"is kept in {cli.data / 'data' / '.deleted'}" in text
