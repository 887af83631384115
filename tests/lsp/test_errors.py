"""Error responses of the ``mnemon/*`` requests: stable ``data.code``, exact details, no tracebacks.

Every error goes through :meth:`MnemonClient.call_error`, which also asserts that neither the message
nor ``data`` carries a traceback. A rejected request changes no byte on disk (DESIGN.md invariant 4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import echo_value

from tests.lsp.conftest import CLIENTS, Launcher, MnemonClient, tree_state, uri

MUTATE = "mnemon/runtime/mutate"

# (method, params, field, rule)
INVALID_INPUT = [
    (MUTATE, {"action": "frobnicate", "content": "x"}, "action",
     "input should be 'add', 'replace' or 'remove' (got 'frobnicate')"),
    (MUTATE, {"action": "add"}, "content", "is required"),
    (MUTATE, {"content": "x"}, "action", "is required"),
    (MUTATE, {"action": "add", "content": "a \u00a7 b"}, "content",
     "must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    (MUTATE, {"action": "add", "content": " \n\t "}, "content", "is required (empty or only whitespace)"),
    (MUTATE, {"action": "replace", "content": "new"}, "oldText", "is required for replace and remove (a string)"),
    (MUTATE, {"action": "remove", "oldText": "x", "content": "y"}, "content", "does not apply to remove"),
    (MUTATE, {"action": "add", "target": "user", "content": "x", "branches": ["main"]}, "branches",
     "applies to target=memory only"),
    (MUTATE, {"action": "add", "content": "x", "branches": ["bad..name"]}, "branches[0]",
     "must not contain '..' (got 'bad..name')"),
    (MUTATE, {"action": "add", "content": "x", "branches": ["main", "-x"]}, "branches[1]",
     "must not start with '/' or '-' (got '-x')"),
    (MUTATE, {"action": "add", "content": "x", "target": "project"}, "target",
     "input should be 'user' or 'memory' (got 'project')"),
    (MUTATE, {"action": "add", "content": "x", "color": "red"}, "color", "is not a known field"),
    (MUTATE, [{"action": "add", "content": "x"}], "params",
     "must be an object, not an array (got [{'action': 'add', 'content': 'x'}])"),
    (MUTATE, "add x", "params", "must be an object, not a string (got 'add x')"),
    ("mnemon/wake", {"budgetChars": 10}, "budgetChars", "must be an integer in 1024..4194304 (got 10)"),
    ("mnemon/wake", {"budgetChars": "2048"}, "budgetChars", "input should be a valid integer, not a string (got '2048')"),
    ("mnemon/wake", {"branch": "bad..x"}, "branch", "must not contain '..' (got 'bad..x')"),
    ("mnemon/wake", {"branch": "has space"}, "branch", "may contain only A-Z a-z 0-9 . _ / - (got 'has space')"),
    ("mnemon/wake", {"verbose": True}, "verbose", "is not a known field"),
    ("mnemon/wake", [1, 2], "params", "must be an object, not an array (got [1, 2])"),
    ("mnemon/status", {"x": 1}, "x", "is not a known field"),
    ("mnemon/turn/end", {}, "viewId", "is required"),
    ("mnemon/turn/begin", {"parentViewId": 7}, "parentViewId",
     "input should be a valid string, not an integer (got 7)"),
]


async def test_invalid_input(client: MnemonClient, repo_dir: Path):
    await client.call(MUTATE, {"action": "add", "content": "kept"})
    before = tree_state(repo_dir / ".mnemon")
    problems = []
    for method, params, field, rule in INVALID_INPUT:
        error = await client.call_error(method, params)
        got = (error.code, error.message, error.data)
        data = {"code": "invalid-input", "field": field, "rule": rule}
        if rule.startswith("must be an integer in "):  # a number out of its range: the number sent, as data.value
            data["value"] = params[field]
        if field == "content" and rule.startswith(("must not contain", "is required (")):  # echoed
            data["value"] = echo_value(params[field])
        want = (-32602, f"{field}: {rule}", data)
        if got != want:
            problems.append(f"{method} {params!r}:\n  got  {got!r}\n  want {want!r}")
    assert not problems, "\n".join(problems)

    error = await client.call_error(MUTATE, {"action": "add", "content": "\u00e9" * 5000})
    rule = "is 10000 UTF-8 bytes; an entry is at most 8192 bytes"
    assert (error.code, error.message, error.data) == (
        -32602, f"content: {rule}", {"code": "invalid-input", "field": "content", "rule": rule, "bytes": 10000})
    assert tree_state(repo_dir / ".mnemon") == before


@pytest.fixture(params=CLIENTS)
async def small(request, lsp: Launcher, repo, repo_dir: Path) -> MnemonClient:
    """A server whose MEMORY.md holds at most 40 bytes and USER.md 16."""
    return await lsp.start(request.param, [repo_dir], {
        "mnemon": {"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 40, "userLimitBytes": 16,
                                                                   "maintenance": "reject"}}})


async def test_runtime_capacity(small: MnemonClient, repo_dir: Path):
    await small.call(MUTATE, {"action": "add", "content": "twenty bytes of text"})
    before = tree_state(repo_dir / ".mnemon")
    error = await small.call_error(MUTATE, {"action": "add", "content": "another twenty bytes"})
    assert (error.code, error.message, error.data) == (
        -32010,
        "memory is over capacity: 44 of 40 UTF-8 bytes after this change (now 20); remove or shorten entries, "
        "or raise runtimeMemory.memoryLimitBytes",
        {"code": "runtime-capacity", "target": "memory", "used": 20, "projected": 44, "limit": 40},
    )
    error = await small.call_error(MUTATE, {"action": "replace", "oldText": "twenty", "content": "x" * 41})
    assert error.data == {"code": "runtime-capacity", "target": "memory", "used": 20, "projected": 41, "limit": 40}
    error = await small.call_error(MUTATE, {"action": "add", "target": "user", "content": "seventeen bytes!!"})
    assert error.data == {"code": "runtime-capacity", "target": "user", "used": 0, "projected": 17, "limit": 16}
    assert tree_state(repo_dir / ".mnemon") == before


async def test_ambiguous_and_no_match(client: MnemonClient, repo_dir: Path):
    await client.call(MUTATE, {"action": "add", "content": "cache the build"})
    await client.call(MUTATE, {"action": "add", "content": "cache the tests"})
    await client.call(MUTATE, {"action": "add", "target": "user", "content": "likes cache"})
    before = tree_state(repo_dir / ".mnemon")

    error = await client.call_error(MUTATE, {"action": "remove", "oldText": "cache"})
    assert (error.code, error.message, error.data) == (
        -32012, "oldText: 2 memory entries contain 'cache' ('cache the build', 'cache the tests'); use a unique "
                "substring",
        {"code": "ambiguous-match", "field": "oldText", "target": "memory", "oldText": "cache", "matches": 2,
         "candidates": ["cache the build", "cache the tests"]})
    error = await client.call_error(MUTATE, {"action": "replace", "oldText": "the", "content": "new text"})
    assert error.data["code"] == "ambiguous-match" and error.code == -32012

    error = await client.call_error(MUTATE, {"action": "remove", "oldText": "deploy"})
    assert (error.code, error.message, error.data) == (
        -32013, "oldText: no memory entry contains 'deploy'",
        {"code": "no-match", "field": "oldText", "target": "memory", "oldText": "deploy"})
    # Matching is per target: the user entry is not a memory entry.
    error = await client.call_error(MUTATE, {"action": "remove", "target": "user", "oldText": "build"})
    assert error.data == {"code": "no-match", "field": "oldText", "target": "user", "oldText": "build"}
    assert tree_state(repo_dir / ".mnemon") == before


async def test_not_in_workspace(client: MnemonClient, tmp_path: Path, repo_dir: Path):
    outside = tmp_path / "elsewhere" / "notes.md"
    outside.parent.mkdir()
    outside.write_text("x\n")
    for method, params in ((MUTATE, {"action": "add", "content": "x", "workspace": uri(outside)}),
                           ("mnemon/wake", {"workspace": uri(outside)}),
                           ("mnemon/runtime/snapshot", {"workspace": uri(outside)}),
                           ("mnemon/turn/begin", {"workspace": uri(outside)})):
        error = await client.call_error(method, params)
        assert (error.code, error.message, error.data) == (
            -32016, f"workspace: {uri(outside)} is outside every open workspace folder",
            {"code": "not-in-workspace", "field": "workspace", "uri": uri(outside)}), method
    # A sibling whose name merely starts with the folder's name is outside too.
    sibling = tmp_path / "repo-other"
    sibling.mkdir()
    error = await client.call_error("mnemon/wake", {"workspace": uri(sibling)})
    assert error.data["code"] == "not-in-workspace"
    assert not (repo_dir / ".mnemon").exists()


async def test_unreadable_store(client: MnemonClient, repo_dir: Path):
    await client.call(MUTATE, {"action": "add", "content": "first entry"})
    await client.call(MUTATE, {"action": "add", "content": "second entry"})
    memories = repo_dir / ".mnemon" / "runtime" / "memories.json"
    damaged = memories.read_bytes()[:-25]
    memories.write_bytes(damaged)
    before = tree_state(repo_dir / ".mnemon")

    error = await client.call_error(MUTATE, {"action": "add", "content": "third entry"})
    assert error.code == -32015
    assert set(error.data) == {"code", "file", "reason"}
    assert error.data["code"] == "unreadable-store"
    assert error.data["file"] == str(memories)
    assert error.data["reason"].startswith(f"{memories}: ") and "is not valid JSON" in error.data["reason"]
    assert error.message.startswith(error.data["reason"] + "; nothing was written.")
    assert memories.read_bytes() == damaged, "a damaged truth file is never rewritten"

    # Reads still answer, with the recoverable entries and a notice.
    wake = await client.call("mnemon/wake", {})
    assert wake["notices"] == [f"{error.data['reason']}; showing the recoverable entries; "
                               "run `mnemon-ls runtime recover`"]
    assert "first entry" in wake["text"] and "second entry" in wake["text"]
    status = await client.status()
    assert status["workspaces"][0]["problems"] == [error.data["reason"]]
    assert tree_state(repo_dir / ".mnemon") == before


async def test_file_where_a_store_directory_belongs_is_storage_unreadable_without_traceback(
        client: MnemonClient, repo_dir: Path):
    # Was internal-error before the storage codes (issue 15 defect 6); the path is named, no traceback.
    (repo_dir / ".mnemon").mkdir()
    runtime = repo_dir / ".mnemon" / "runtime"
    runtime.write_text("a file where the runtime directory belongs\n")
    error = await client.call_error(MUTATE, {"action": "add", "content": "x"})
    assert error.code == -32034
    assert error.data == {"code": "storage-unreadable", "file": str(runtime), "errno": "ENOTDIR",
                          "reason": "a file is where a directory of the storage root belongs"}
    assert error.message == (f"{runtime}: cannot be used as the store expects "
                             "(a file is where a directory of the storage root belongs)")
