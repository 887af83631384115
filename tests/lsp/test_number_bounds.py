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


async def test_an_expected_document_revision_has_one_rule_for_every_request(lsp: Launcher, repo: pygit2.Repository,
                                                                            repo_dir: Path, tmp_path: Path) -> None:
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    source = repo_dir / "plan.md"
    source.write_text("# Plan\nship on Friday\n", encoding="utf-8")
    made = await client.command("mnemon.server.createDocumentFromFile", {"uri": source.as_uri()})
    doc_id = made["document"]["id"]
    before = tree_state(tmp_path)
    for revision in (0, -1, 2**53):
        rule = f"must be an integer in 1..9007199254740991 (got {revision})"
        for method, params in (("mnemon/documents/update", {"id": doc_id, "content": "ship on Monday"}),
                               ("mnemon/documents/archive", {"id": doc_id}),
                               ("mnemon/documents/restore", {"id": doc_id})):
            error = await client.call_error(method, params | {"documentRevision": revision})
            assert (error.code, error.data) == (-32602, {"code": "invalid-input", "field": "documentRevision",
                                                         "rule": rule, "value": revision}), method
        updated = await client.command("mnemon.server.updateDocumentFromFile",
                                       {"uri": source.as_uri(), "documentRevision": revision})
        assert updated["success"] is False and updated["error"]["code"] == "invalid-input", updated
        assert updated["error"]["message"].endswith(rule), updated
    assert tree_state(tmp_path) == before
