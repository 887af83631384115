"""Citations through a real language server (issue 24 items 2 and 3): ``mnemon/runtime/mutate`` takes ``cites``,
``mnemon/runtime/snapshot`` shows each with its freshness, and the server's freshness cache (kept while a file's
size, mtime and inode are the same) is dropped for a file the client reports changed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from lsprotocol import types

from tests.gitrepo import commit_files, create_branch, switch
from tests.lsp.conftest import BRANCH_CHANGED, Launcher, uri

LIB = "def parse(text):\n    return text.split()\n"


async def test_snapshot_shows_freshness_and_a_reported_change_is_read_again(lsp: Launcher, repo, repo_dir: Path) -> None:
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace",
                                                               "runtimeUserScope": "storage"}})
    added = await client.call("mnemon/runtime/mutate", {"action": "add", "content": "parse splits words",
                                                        "cites": [{"path": "src/lib.py", "startLine": 1, "endLine": 2}]})
    cite = {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": hashlib.sha256(LIB.encode()).hexdigest()}
    assert added["cites"] == [cite | {"freshness": "fresh"}]

    async def cites() -> list:
        snapshot = await client.call("mnemon/runtime/snapshot", {})
        return [entry.get("cites") for entry in snapshot["entries"]]

    assert await cites() == [[cite | {"freshness": "fresh"}]]
    # Every git event drops the folder's cached files (a checkout rewrites the tree), the git watcher's first look
    # once armed too, late on a loaded machine: a branch switch of the same tree, once announced, has come after it.
    armed = client.expect(BRANCH_CHANGED)
    create_branch(repo, "same-tree")
    switch(repo, "same-tree")
    assert (await client.received(armed))["branch"] == "same-tree"
    assert await cites() == [[cite | {"freshness": "fresh"}]]
    target = repo_dir / "src" / "lib.py"
    info = os.stat(target)
    with open(target, "r+b") as handle:  # the same size, inode and mtime: the cache cannot tell
        handle.write(b"def PARSE")
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (os.stat(target).st_ino, os.stat(target).st_size) == (info.st_ino, info.st_size)
    assert await cites() == [[cite | {"freshness": "fresh"}]]  # cached
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=uri(target), type=types.FileChangeType.Changed)]))
    assert await cites() == [[cite | {"freshness": "changed"}]]  # the watcher's report dropped it

    error = await client.call_error("mnemon/runtime/mutate", {"action": "add", "content": "x",
                                                              "cites": [{"path": "src"}]})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "cites[0].path"
    assert error.message == "cites[0].path: is a directory, not a file (src)"
