"""The language server words a number past its range as every surface does (``errors.range_rule``, real
server in a subprocess): a ``mnemon/link`` weight of ``10**400`` (too large for a number) was "not an integer"
and a ``mnemon/citations/file`` line of 400 digits had no upper bound. Nothing refused changes a byte."""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.lsp.conftest import Launcher, tree_state


async def test_a_number_past_its_range_is_refused_in_the_range_wording(lsp: Launcher, repo: pygit2.Repository,
                                                                        repo_dir: Path, tmp_path: Path) -> None:
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "seed"})
    before = tree_state(tmp_path)
    for method, params, field, rule in (
            ("mnemon/link", {"spaceId": "default", "sourceId": "a", "targetId": "b", "weight": 10**400}, "weight",
             "must be a number in 0..1 (got 10000000000000000000000000000000...)"),
            ("mnemon/citations/file", {"path": "README.md", "line": int("9" * 400)}, "line",
             "must be an integer in 1..1000000000 (got 99999999999999999999999999999999...)")):
        error = await client.call_error(method, params)
        assert (error.code, error.data) == (-32602, {"code": "invalid-input", "field": field, "rule": rule}), method
    assert tree_state(tmp_path) == before
