"""JSON numbers and ``null`` as the published schema reads them, against the real ``mnemon-ls mcp``: an
integral float (``1.0``, which JSON clients send for ``1``) for an integer argument was refused as "not a
number" while the schema said ``integer``; it is now that integer (nested ones too: ``cites[0].startLine``),
and ``1.5`` is refused naming the field. ``null`` was taken where the published type excludes it; it is now
refused naming the field and the type, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gitrepo import snapshot
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_server import args_for, files

REFUSED = [
    ("mnemon_recall", {"query": "x", "limit": 1.5}, "limit: must be an integer (got 1.5)"),
    ("mnemon_document_search", {"query": "x", "limit": 2.25}, "limit: must be an integer (got 2.25)"),
    ("mnemon_document_create", {"title": "t", "content": "c", "cites": [{"path": "f.py", "startLine": 1.5}]},
     "cites[0].startLine: must be an integer (got 1.5)"),
    ("mnemon_runtime_compact", {"drop": [1, 2.5]}, "drop[1]: must be an integer (got 2.5)"),
    ("mnemon_remember", {"content": "x", "space_id": None},
     "space_id: must be a string, not null (leave the argument out for its default)"),
    ("mnemon_remember", {"content": "x", "tags": None},
     "tags: must be an array, not null (leave the argument out for its default)"),
    ("mnemon_recall", {"query": None}, "query: must be a string, not null"),
    ("mnemon_document_create", {"title": None, "content": "c"}, "title: must be a string, not null"),
    ("mnemon_document_create", {"title": "t", "content": "c", "cites": [{"path": None}]},
     "cites[0].path: must be a string, not null"),
    ("mnemon_runtime_memory", {"action": "add", "content": "x", "importance": None},
     "importance: must be a string, not null (leave the argument out for its default)"),
    ("mnemon_document_search", {"query": "x", "include_archived": None},
     "include_archived: must be a boolean, not null (leave the argument out for its default)"),
]


async def test_integral_floats_are_integers_and_fractions_and_nulls_are_refused(workspace: Path,
                                                                                data_dir: Path) -> None:
    (workspace / "f.py").write_text("a = 1\nb = 2\n", encoding="utf-8")
    async with mcp_session(args_for(workspace, data_dir)) as session:
        for title in ("alpha one", "alpha two"):
            created = await session.call_tool("mnemon_document_create", {
                "title": title, "content": "alpha body", "cites": [{"path": "f.py", "startLine": 1.0, "endLine": 2.0}]})
            assert not created.is_error, text(created)
        before = files(snapshot(data_dir))
        refused = [(name, await session.call_tool(name, arguments)) for name, arguments, _ in REFUSED]
        after = files(snapshot(data_dir))
        found = await session.call_tool("mnemon_document_search", {"query": "alpha", "limit": 1.0})
        both = await session.call_tool("mnemon_document_search", {"query": "alpha", "limit": 2.0})
    for (name, result), (_, arguments, problem) in zip(refused, REFUSED):
        assert result.is_error and text(result) == f"Error executing tool {name}: invalid-input: {problem}", \
            (arguments, text(result))
    assert after == before
    assert text(found).endswith("\n1 result(s)") and text(both).endswith("\n2 result(s)"), (text(found), text(both))
    stored = json.loads((data_dir / "state" / "citations" / "documents.json").read_text())
    lines = [(c["startLine"], c["endLine"]) for cites in stored["citations"].values() for c in cites]
    assert lines == [(1, 2), (1, 2)] and all(type(n) is int for pair in lines for n in pair), stored
    assert lines == [(1, 2), (1, 2)], stored
