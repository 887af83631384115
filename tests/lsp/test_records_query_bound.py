"""``mnemon/records/list`` ``text`` is bounded like every search query (an attack pass found it unbounded
while recall and Documents search refuse more than ``mnemon_ls.text.MAX_QUERY_CHARS`` characters), against
the real server in a subprocess: ``-32602`` naming the field, the limit and the length, nothing on disk changed."""

from __future__ import annotations

from pathlib import Path

import pygit2

from mnemon_ls.text import MAX_QUERY_CHARS
from tests.lsp.conftest import Launcher, tree_state


async def test_records_list_text_is_bounded_in_characters(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path,
                                                          tmp_path: Path) -> None:
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await client.call("mnemon/records/create", {"title": "Ruff", "content": "Lint with ruff"})
    before = tree_state(tmp_path)
    text = "\u6570" * (MAX_QUERY_CHARS + 1)  # CJK: 3 UTF-8 bytes each, counted as one character
    rule = f"must be at most {MAX_QUERY_CHARS} characters (Unicode code points; got {MAX_QUERY_CHARS + 1})"
    error = await client.call_error("mnemon/records/list", {"text": text})
    assert (error.code, error.message, error.data) == (-32602, f"text: {rule}", {
        "code": "invalid-input", "field": "text", "rule": rule, "length": MAX_QUERY_CHARS + 1})
    recall = await client.call_error("mnemon/recall", {"query": text})
    assert recall.data["rule"] == rule  # the one query rule of every search
    assert tree_state(tmp_path) == before
    assert (await client.call("mnemon/records/list", {"text": "\u6570" * MAX_QUERY_CHARS}))["records"] == []
    found = await client.call("mnemon/records/list", {"text": "ruff"})
    assert [r["title"] for r in found["records"]] == ["Ruff"]
