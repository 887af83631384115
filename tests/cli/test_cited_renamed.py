"""``mnemon-ls cited NEW`` did not list the memories that still cite a renamed file by its OLD path (only
``cited OLD`` did, though that file is gone). It now uses git's rename table (:mod:`mnemon_ls.citations.renames`)
so ``cited NEW`` also lists them, marked as citing the old path (``renamedFrom``). Processes on a real git
repository, renamed with the real git (``git mv`` and a commit)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cite_renamed import git, two_cited_files
from tests.cli.test_cite_staleness import js, ok


def test_cited_new_path_lists_memories_citing_the_old_path(tmp_path: Path) -> None:
    workspace = two_cited_files(tmp_path)
    git(workspace, "mv", "src/retry.py", "src/backoff.py")
    git(workspace, "commit", "-q", "-m", "rename")
    ok(workspace, "runtime", "add", "--content", "backoff doubles", "--cite", "src/backoff.py:1")

    data = js(workspace, "cited", "src/backoff.py")
    listed = [(r["startLine"], r["endLine"], m["content"], m.get("renamedFrom"), m["freshness"])
              for r in data["ranges"] for m in r["memories"]]
    assert listed == [(1, 1, "backoff doubles", None, "fresh"),
                      (10, 14, "retry uses backoff", "src/retry.py", "renamed")], listed
    assert data["count"] == 2
    old = [m["cite"] for r in data["ranges"] for m in r["memories"] if m.get("renamedFrom")]
    assert [(c["path"], c["renamedTo"]) for c in old] == [("src/retry.py", "src/backoff.py")]
    text = ok(workspace, "cited", "src/backoff.py")
    [line] = [t for t in text.splitlines() if "retry uses backoff" in t]
    assert "(cites the old path `src/retry.py`: git renamed it to this file)" in line, text
    assert "old path" not in next(t for t in text.splitlines() if "backoff doubles" in t)

    # the old path still lists it as before; a file never renamed lists only its own
    assert [m["content"] for r in js(workspace, "cited", "src/retry.py")["ranges"] for m in r["memories"]] == [
        "retry uses backoff"]
    assert [(m["content"], m.get("renamedFrom")) for r in js(workspace, "cited", "src/other.py")["ranges"]
            for m in r["memories"]] == [("x is one", None)]
    assert json.loads(ok(workspace, "cited", "src/backoff.py", "--line", "12", "--json"))["count"] == 1
