"""JSON numbers and ``null`` as the published schema reads them, against the real ``mnemon-ls mcp``: an
integral float (``1.0``, which JSON clients send for ``1``) for an integer argument was refused as "not a
number" while the schema said ``integer``; it is now that integer (nested ones too: ``cites[0].startLine``),
and ``1.5`` is refused naming the field. ``null`` where the published type excludes it is an optional argument
left out (clients that fill every argument send it for the ones they do not mean) and is refused, naming the
field and the type, for a required argument or inside an array or object; nothing is written."""

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
    ("mnemon_recall", {"query": None}, "query: must be a string, not null"),
    ("mnemon_runtime_compact", {"drop": [1, None]}, "drop[1]: must be an integer, not null"),
    ("mnemon_document_create", {"title": None, "content": "c"}, "title: must be a string, not null"),
    ("mnemon_document_create", {"title": "t", "content": "c", "cites": [{"path": None}]},
     "cites[0].path: must be a string, not null"),
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
        defaults = await session.call_tool("mnemon_document_search", {"query": "alpha", "limit": None,
                                                                      "include_archived": None})
        added = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "the build uses tox",
                                                                  "importance": None})
        woken = await session.call_tool("mnemon_wake", {"branch": None})
    for (name, result), (_, arguments, problem) in zip(refused, REFUSED):
        assert result.is_error and text(result) == f"Error executing tool {name}: invalid-input: {problem}", \
            (arguments, text(result))
    assert after == before
    assert text(found).endswith("\n1 result(s)") and text(both).endswith("\n2 result(s)"), (text(found), text(both))
    assert text(defaults).endswith("\n2 result(s)"), text(defaults)  # null optional arguments: their defaults
    assert not added.is_error and "the build uses tox" in text(woken), (text(added), text(woken))
    stored = json.loads((data_dir / "state" / "citations" / "documents.json").read_text())
    lines = [(c["startLine"], c["endLine"]) for cites in stored["citations"].values() for c in cites]
    assert lines == [(1, 2), (1, 2)] and all(type(n) is int for pair in lines for n in pair), stored
    assert lines == [(1, 2), (1, 2)], stored
