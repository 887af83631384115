"""A real ``mnemon-ls mcp`` (the SDK's stdio client) words bad input as the command line does
(tests/cli/test_error_fields.py): the field, then the rule; a pydantic rule in the same words
(``input should be ...``; a number out of its range ``must be an integer in 1..12 (got 0)``), a document that does not exist names ``id``, a stale document revision the tool's
``revision`` argument; the error codes are unchanged."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import tree_snapshot
from tests.mcp.conftest import answer, mcp_session, text


def server_args(tmp_path: Path) -> tuple[list[str], Path]:
    """``(mnemon-ls mcp arguments, the storage root)`` for a real repository with one committed file."""
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": "def parse(text):\n    return text.split()\n"}, "lib")
    data_dir = tmp_path / "root"
    return ["--workspace", str(Path(repo.workdir)), "--scope", "custom", "--data-dir", str(data_dir)], data_dir


async def test_document_and_citation_errors_name_the_argument(tmp_path: Path) -> None:
    args, data_dir = server_args(tmp_path)
    async with mcp_session(args) as session:
        made = await answer(session, "mnemon_document_create", {"title": "Deploy", "content": "blue-green"})
        doc = made.split("(id: ", 1)[1].split(")", 1)[0]  # "Document created: Deploy (id: <id>), revision 1, ..."
        before = tree_snapshot(data_dir)
        cited = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "parse splits",
                                                                  "cites": [{"path": "src/lib.py", "startLine": 0}]})
        assert cited.is_error and text(cited) == ("Error executing tool mnemon_runtime_memory: invalid-input: "
                                                  "cites[0].startLine: must be an integer in 1..1000000000 (got 0)")
        missing = await session.call_tool("mnemon_document_manage", {"action": "get", "id": "nosuchdocument"})
        assert missing.is_error and text(missing) == ('Error executing tool mnemon_document_manage: not-found: '
                                                      'id: document "nosuchdocument" does not exist')
        stale = await session.call_tool("mnemon_document_manage", {"action": "update", "id": doc, "content": "canary",
                                                                   "revision": 4})
        assert stale.is_error and text(stale) == (
            f"Error executing tool mnemon_document_manage: revision-conflict: revision: expected revision 4, the "
            f"document is at 1 (document {doc}: re-read it and retry; the stored copy was kept as it is)")
        assert tree_snapshot(data_dir) == before


async def test_a_citation_that_is_not_an_object_is_named_in_json_words(tmp_path: Path) -> None:
    # pydantic's "a valid dictionary or instance of CiteParam" names a Python class: the rule says "an object"
    args, data_dir = server_args(tmp_path)
    async with mcp_session(args) as session:
        await answer(session, "mnemon_runtime_memory", {"action": "add", "content": "deploys go through staging"})
        before = tree_snapshot(data_dir)
        cited = await session.call_tool("mnemon_runtime_memory", {"action": "add", "content": "parse splits",
                                                                  "cites": [["src/lib.py", 1]]})
        assert cited.is_error and text(cited) == ("Error executing tool mnemon_runtime_memory: invalid-input: "
                                                  "cites[0]: input should be an object, not an array "
                                                  "(got ['src/lib.py', 1])")
        assert tree_snapshot(data_dir) == before


def stored(snapshot: dict) -> dict:
    """A :func:`tree_snapshot` without SQLite's shared-memory index (``-shm``: a read of the open store
    touches it; it holds no content)."""
    return {name: entry for name, entry in snapshot.items() if not name.endswith("-shm")}


async def test_ranges_unknown_items_and_revisions_read_as_on_the_command_line(tmp_path: Path) -> None:
    # tests/cli/test_error_wording.py: one range wording, an id naming no item is no-match, a revision named
    args, data_dir = server_args(tmp_path)
    async with mcp_session(args) as session:
        await answer(session, "mnemon_memory_spaces", {"action": "create", "name": "Project", "description": "facts"})
        made = await answer(session, "mnemon_remember", {"content": "deploys go through staging"})
        item = made.split("id: ", 1)[1].split()[0]
        await answer(session, "mnemon_runtime_memory", {"action": "add", "target": "user", "content": "one"})
        await answer(session, "mnemon_runtime_memory", {"action": "add", "target": "user", "content": "two"})
        before = tree_snapshot(data_dir)
        expected = (
            ("mnemon_recall", {"query": "deploy", "limit": 0},
             "invalid-input: limit: must be an integer in 1..12 (got 0)"),
            ("mnemon_document_search", {"query": "deploy", "limit": 51},
             "invalid-input: limit: must be an integer in 1..50 (got 51)"),
            ("mnemon_link", {"space_id": "default", "source_id": item, "target_id": item, "weight": 1.5},
             "invalid-input: weight: must be a number in 0..1 (got 1.5)"),
            ("mnemon_related", {"space_id": "default", "id": "nosuch"},
             "no-match: id: no active item with this id in the space (missing or forgotten) (got nosuch)"),
            ("mnemon_link", {"space_id": "default", "source_id": item, "target_id": "nosuch"},
             "no-match: target_id: no active item with this id in the space (missing or forgotten) (got nosuch)"),
            ("mnemon_runtime_compact", {"drop": [1], "revision": "0" * 64},
             "revision-conflict: revision: runtime memory changed since revision 000000000000; re-read and retry"))
        for tool, arguments, said in expected:
            result = await session.call_tool(tool, arguments)
            assert result.is_error and text(result) == f"Error executing tool {tool}: {said}", text(result)
        malformed = await session.call_tool("mnemon_runtime_compact", {"drop": [1], "revision": "abc"})
        assert malformed.is_error and text(malformed).startswith(
            "Error executing tool mnemon_runtime_compact: invalid-input: revision: must be a revision: 12 to 64 "
            "lowercase hex digits"), text(malformed)
        assert stored(tree_snapshot(data_dir)) == stored(before)
