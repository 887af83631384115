"""MEMORY.md overflow archival through the language server (issue 9): ``mnemon/runtime/mutate`` and the
"Remember selection" command go through the same Host operation as the CLI and MCP, so an add past the
limit archives into the active space and the receipt says what went where; explicit ``routes`` are
accepted and bad ones are refused naming the field, with nothing changed; the wake counts what left."""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
from tests.lsp.conftest import Launcher, tree_state, uri

MUTATE = "mnemon/runtime/mutate"
REMEMBER = "mnemon.server.rememberSelection"
SETTINGS = {"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 600}}


def fact(n: int) -> str:
    return f"Fact {n:03d}: the build cache lives in .cache/build-{n} and is safe to delete"


def create_space(repo_dir: Path) -> str:
    host = WorkspaceHost(repo_dir, load_settings(SETTINGS))
    try:
        return host.spaces.create_space("Project", "Build facts", active=True).record.id
    finally:
        host.close()


async def test_adds_past_the_limit_archive_into_the_space_and_routes_are_checked(
        lsp: Launcher, repo, repo_dir: Path) -> None:
    space = create_space(repo_dir)
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": SETTINGS})
    n = 0
    while True:
        result = await client.call(MUTATE, {"action": "add", "content": fact(n)})
        n += 1
        if "maintenance" in result:
            break
    maintenance = result["maintenance"]
    assert maintenance["kind"] == "mnemon-archive" and maintenance["target"] == "memory"
    assert maintenance["destinations"] == [{"kind": "memory-space", "spaceId": space, "spaceName": "Project",
                                            "count": len(maintenance["archived"])}]
    assert maintenance["bytesFreed"] > 0 and result["usage"]["used"] <= 600
    assert result["message"].startswith("Entry added. Archived ")
    archived = [a["summary"] for a in maintenance["archived"]]
    recalled = await client.call("mnemon/recall", {"query": archived[0], "mode": "keyword"})
    assert archived[0] in [r["content"] for r in recalled["results"]]
    wake = await client.call("mnemon/wake", {})
    assert wake["archived"] == len(archived)
    assert f"Archived: {len(archived)} entries left MEMORY.md" in wake["text"]

    # fill again, then an explicit route that skips an entry is refused with nothing changed
    while (await client.status())["workspaces"][0]["usage"]["memory"]["used"] + 4 + len(fact(n)) <= 600:
        await client.call(MUTATE, {"action": "add", "content": fact(n)})
        n += 1
    before = tree_state(repo_dir / ".mnemon")
    error = await client.call_error(MUTATE, {"action": "add", "content": fact(n),
                                             "routes": [{"sourceIndexes": [1], "spaceId": space}]})
    assert error.data["field"] == "routes" and "must cover every entry" in error.data["rule"]
    assert tree_state(repo_dir / ".mnemon") == before
    error = await client.call_error(MUTATE, {"action": "add", "content": fact(n), "routes": [{"sourceIndexes": ["1"]}]})
    assert (error.data["field"], error.data["rule"]) == ("routes[0].sourceIndexes[0]", "must be an integer >= 1 (got '1')")
    assert tree_state(repo_dir / ".mnemon") == before


async def test_remember_selection_archives_instead_of_refusing(lsp: Launcher, repo, repo_dir: Path) -> None:
    client = await lsp.start("neovim", [repo_dir], {"mnemon": SETTINGS})
    source = repo_dir / "notes.py"
    source.write_text("x = 1\n")
    results = [await client.command(REMEMBER, {"uri": uri(source), "text": fact(n)}) for n in range(12)]
    assert all(r["success"] is True for r in results)
    local = [r["maintenance"] for r in results if "maintenance" in r]
    assert local and local[0]["kind"] == "local-archive"
    assert (repo_dir / ".mnemon" / "runtime" / "archived" / "MEMORY.md").read_text().startswith(
        local[0]["archived"][0]["summary"])
