"""The editor commands (``workspace/executeCommand``) are bound from the operation layer in one loop, as the
``mnemon/*`` requests are (issue 29 item 1): no handler is registered by hand, ``initialize`` advertises exactly
the ids the operations' :class:`~mnemon_ls.ops.surfaces.LspCommand` bindings declare, and each binding runs its
operation through the real server (seen through that operation's own ``mnemon/*`` request).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Awaitable, Callable

from mnemon_ls.ops.command_ids import (COMMANDS, CREATE_DOCUMENT_FROM_FILE, REMEMBER_SELECTION, SHOW_CITING_MEMORIES,
                                      SHOW_WAKE_SNAPSHOT, UPDATE_DOCUMENT_FROM_FILE)
from tests.lsp.conftest import Launcher, MnemonClient, uri

PACKAGE = Path(__file__).resolve().parents[2] / "mnemon_ls"


def _command_calls(path: Path) -> list[tuple[int, str]]:
    """``(line, enclosing function)`` of every ``<anything>.command(...)`` call in ``path`` (a decorator
    ``@server.command(ID)`` or ``@feature.command(ID)`` is one too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "command":
                found.append((child.lineno, function))
            visit(child, inner)

    visit(tree, "<module>")
    return found


def test_no_command_is_registered_by_hand() -> None:
    """The only ``.command(...)`` registration in the package is :func:`mnemon_ls.lsp.commands.bind`'s loop;
    the server's commands are exactly :data:`COMMANDS`, in order, each served by that module's handler, and the
    registry binds each id to at least one operation."""
    from mnemon_ls.lsp import feature
    from mnemon_ls.lsp.server import server
    from mnemon_ls.ops.registry import by_lsp_command

    calls = {(str(path.relative_to(PACKAGE)), function): line for path in sorted(PACKAGE.rglob("*.py"))
             for line, function in _command_calls(path)}
    assert list(calls) == [("lsp/commands.py", "bind")], calls
    assert not hasattr(feature.Feature, "command")

    registered = server.protocol.fm.commands
    assert list(registered) == list(COMMANDS)
    for command_id, handler in registered.items():
        assert getattr(handler, "func", handler).__module__ == "mnemon_ls.lsp.commands", command_id
    bound = by_lsp_command()
    assert list(bound) == list(COMMANDS) and all(bound.values())


GUIDE = "# Release guide\nTag the commit, then run the release workflow.\n"

Case = Callable[[MnemonClient, Path], Awaitable[None]]


async def _remember_in_memory(client: MnemonClient, repo_dir: Path) -> None:
    source = repo_dir / "app.py"
    source.write_text("# build with make\n", encoding="utf-8")
    answer = await client.command(REMEMBER_SELECTION, {"uri": uri(source), "text": "# build with make",
                                                        "languageId": "python", "quiet": True})
    assert (answer["success"], answer["added"], answer["workspace"]) == (True, "build with make", uri(repo_dir))
    snapshot = await client.call("mnemon/runtime/snapshot", {})
    assert [(e["target"], e["content"]) for e in snapshot["entries"]] == [("memory", "build with make")]


async def _remember_in_space(client: MnemonClient, repo_dir: Path) -> None:
    space = await client.call("mnemon/spaces/create", {"name": "Project", "description": "Facts", "active": True})
    answer = await client.command(REMEMBER_SELECTION, {"uri": uri(repo_dir / "app.py"),
                                                        "text": "# the cache   keeps 64 entries",
                                                        "spaceId": space["id"], "languageId": "python",
                                                        "quiet": True})
    assert answer["success"] is True and answer["status"] == "committed"
    found = await client.call("mnemon/recall", {"query": "cache", "mode": "basic"})
    assert [(r["id"], r["content"], r["source"]) for r in found["results"]] == [
        (answer["id"], "the cache keeps 64 entries", "user")]
    snapshot = await client.call("mnemon/runtime/snapshot", {})  # spaceId routed it away from MEMORY.md
    assert [e["content"] for e in snapshot["entries"]] == ["build with make"]


async def _show_wake(client: MnemonClient, repo_dir: Path) -> None:
    answer = await client.command(SHOW_WAKE_SNAPSHOT, {"uri": uri(repo_dir)})
    wake = await client.call("mnemon/wake", {})
    assert answer["success"] is True and "build with make" in wake["text"]
    assert (answer["text"], answer["revision"]) == (wake["text"], wake["revision"])
    assert Path(answer["path"]).read_text(encoding="utf-8") == wake["text"] + "\n"


async def _create_document(client: MnemonClient, repo_dir: Path) -> None:
    source = repo_dir / "docs" / "release.md"
    source.parent.mkdir()
    source.write_text(GUIDE, encoding="utf-8")
    answer = await client.command(CREATE_DOCUMENT_FROM_FILE, {"uri": uri(source)})
    assert answer["success"] is True and answer["action"] == "created"
    document = await client.call("mnemon/documents/get", {"id": answer["document"]["id"]})
    assert (document["title"], document["sourcePaths"], document["revision"]) == (
        "Release guide", ["docs/release.md"], 1)
    assert answer["path"] == document["path"]


async def _update_document(client: MnemonClient, repo_dir: Path) -> None:
    source = repo_dir / "docs" / "release.md"
    source.write_text(GUIDE + "Then announce it.\n", encoding="utf-8")
    answer = await client.command(UPDATE_DOCUMENT_FROM_FILE, {"uri": uri(source), "documentRevision": 1})
    assert answer["success"] is True and answer["action"] == "updated"
    document = await client.call("mnemon/documents/get", {"id": answer["document"]["id"]})
    assert (document["revision"], document["content"]) == (2, GUIDE + "Then announce it.")


async def _show_citing(client: MnemonClient, repo_dir: Path) -> None:
    source = repo_dir / "docs" / "release.md"
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "releases start from a tag",
                                                "cites": [{"path": "docs/release.md", "startLine": 2}]})
    answer = await client.command(SHOW_CITING_MEMORIES, {"uri": uri(source), "line": 2})
    assert answer["success"] is True and answer["count"] == 1
    assert [(r["startLine"], r["endLine"], [m["content"] for m in r["memories"]]) for r in answer["ranges"]] == [
        (2, 2, ["releases start from a tag"])]
    assert Path(answer["path"]).read_text(encoding="utf-8") == answer["text"] + "\n"


#: One case per binding (operation name), in the order they run; every binding of the registry has one.
CASES: dict[str, Case] = {
    "runtime.mutate": _remember_in_memory,
    "spaces.remember": _remember_in_space,
    "workspace.wake": _show_wake,
    "documents.create": _create_document,
    "documents.updateFromFile": _update_document,
    "citations.file": _show_citing,
}


async def test_every_command_is_advertised_and_runs_its_operation(lsp: Launcher, repo: Any, repo_dir: Path):
    from mnemon_ls.ops.registry import by_lsp_command

    bound = {operation.name: command.command for bindings in by_lsp_command().values()
             for operation, command in bindings}
    assert set(CASES) == set(bound), "a command binding without a case here (or a case for none)"
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    assert client.init_result is not None
    assert list(client.init_result.capabilities.execute_command_provider.commands) == list(COMMANDS)
    for case in CASES.values():
        await case(client, repo_dir)
