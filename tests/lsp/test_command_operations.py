"""The ``workspace/executeCommand`` commands run operations (issue 29 item 1): what each command's operation
answers over its own ``mnemon/*`` request, and the command answering the same.

- "Update document from file" is the operation ``documents.updateFromFile``, also ``mnemon/documents/updateFromFile``
  ``{workspace?, file, id?, documentRevision?}``;
- "Remember selection in space" is ``spaces.remember`` with ``branch`` (``mnemon/remember {branch}``: a
  ``branch:<name>`` tag for a named branch, where ``scopeToBranch`` takes the checked-out one);
- "Show wake snapshot" is ``workspace.wake``: the same text ``mnemon/wake`` answers.

Real server, real repository (``storageScope: workspace``: the root is ``<repo>/.mnemon``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lsp.conftest import Launcher, MnemonClient, uri

UPDATE = "mnemon.server.updateDocumentFromFile"
REMEMBER = "mnemon.server.rememberSelection"
SHOW_WAKE = "mnemon.server.showWakeSnapshot"
GUIDE = "# Release guide\nTag the commit, then run the release workflow.\n"


@pytest.fixture
async def server(lsp: Launcher, repo, repo_dir: Path) -> MnemonClient:
    return await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})


async def test_update_from_file_is_one_operation_for_the_request_and_the_command(server: MnemonClient,
                                                                                 repo_dir: Path):
    source = repo_dir / "docs" / "release.md"
    source.parent.mkdir()
    source.write_text(GUIDE, encoding="utf-8")
    created = await server.call("mnemon/documents/create", {"file": str(source)})
    doc = created["document"]
    assert (doc["revision"], doc["sourcePaths"]) == (1, ["docs/release.md"])

    source.write_text(GUIDE + "Then announce it.\n", encoding="utf-8")
    updated = await server.call("mnemon/documents/updateFromFile", {"file": str(source), "documentRevision": 1})
    assert updated["action"] == "updated" and updated["workspace"] == uri(repo_dir)
    assert (updated["document"]["id"], updated["document"]["revision"]) == (doc["id"], 2)
    assert updated["document"]["content"] == GUIDE + "Then announce it."

    # The command runs the same operation: a stale revision is the operation's revision-conflict, in its words.
    refused = await server.command(UPDATE, {"uri": uri(source), "documentRevision": 1})
    assert refused["success"] is False and refused["error"]["code"] == "revision-conflict"
    stale = await server.call_error("mnemon/documents/updateFromFile", {"file": str(source), "documentRevision": 1})
    assert (stale.code, stale.data["code"], stale.message) == (-32011, "revision-conflict", refused["error"]["message"])
    source.write_text(GUIDE + "Then tell the team.\n", encoding="utf-8")
    done = await server.command(UPDATE, {"uri": uri(source), "id": doc["id"], "documentRevision": 2})
    assert done["success"] is True and done["document"]["revision"] == 3
    assert (repo_dir / ".mnemon" / done["document"]["relativePath"]).read_text(encoding="utf-8").endswith(
        "Then tell the team.\n")

    missing = await server.call_error("mnemon/documents/updateFromFile", {"documentRevision": 3})
    assert (missing.data["code"], missing.data["field"], missing.message) == ("invalid-input", "file",
                                                                              "file: is required")
    notes = repo_dir / "notes.txt"
    notes.write_text("loose notes\n", encoding="utf-8")
    nobody = await server.call_error("mnemon/documents/updateFromFile", {"file": str(notes)})
    assert (nobody.data["code"], nobody.data["field"]) == ("not-found", "path")
    assert nobody.message == f"path: no active document names {notes} in its sourcePaths; create one instead"


async def test_remember_names_a_branch_and_the_space_command_uses_it(server: MnemonClient, repo_dir: Path):
    await server.call("mnemon/spaces/create", {"name": "Project", "description": "Facts", "active": True})
    named = await server.call("mnemon/remember", {"content": "The feature branch renames the cache",
                                                  "branch": "feature"})
    assert named["status"] == "committed" and named["tags"] == ["branch:feature"]

    both = await server.call_error("mnemon/remember", {"content": "x", "branch": "feature", "scopeToBranch": True})
    assert (both.data["code"], both.data["field"]) == ("invalid-input", "branch")
    bad = await server.call_error("mnemon/remember", {"content": "x", "branch": "bad..name"})
    assert (bad.data["code"], bad.data["field"]) == ("invalid-input", "branch")

    source = repo_dir / "app.py"
    source.write_text("# the cache keeps 64 entries\n", encoding="utf-8")
    remembered = await server.command(REMEMBER, {"uri": uri(source), "text": "# the cache keeps 64 entries",
                                                 "spaceId": "default", "branches": ["topic"], "importance": "critical",
                                                 "languageId": "python", "quiet": True})
    assert remembered["success"] is True and remembered["tags"] == ["branch:topic"]
    # On main the items of the feature and topic branches are hidden from recall (branch filter), the
    # unscoped one is not; each was remembered as the command's text, by the user.
    plain = await server.command(REMEMBER, {"uri": uri(source), "text": "// the cache shards by key",
                                            "spaceId": "default", "languageId": "c", "quiet": True})
    assert plain["success"] is True and plain["tags"] == []
    found = await server.call("mnemon/recall", {"query": "cache", "mode": "basic"})
    assert [(r["id"], r["content"], r["source"]) for r in found["results"]] == [
        (plain["id"], "the cache shards by key", "user")]
    assert found["sources"][0]["stats"]["branchHidden"] == 2
    # Two branches stay the command's own refusal (its argument names them), before the operation runs.
    two = await server.command(REMEMBER, {"uri": uri(source), "text": "x", "spaceId": "default",
                                          "branches": ["a", "b"], "quiet": True})
    assert two == {"success": False, "error": {
        "code": "invalid-input", "message": "branches: a Memory Space item is scoped to one branch (got several)",
        "field": "branches", "rule": "a Memory Space item is scoped to one branch (got several)"}}


async def test_show_wake_answers_the_wake_request_text(server: MnemonClient, repo_dir: Path):
    await server.call("mnemon/runtime/mutate", {"action": "add", "target": "memory", "content": "Build with make"})
    wake = await server.call("mnemon/wake", {})
    shown = await server.command(SHOW_WAKE, {"uri": uri(repo_dir)})
    assert shown["success"] is True
    assert (shown["text"], shown["revision"], shown["storeRevision"]) == (wake["text"], wake["revision"],
                                                                          wake["storeRevision"])
    assert Path(shown["path"]).read_text(encoding="utf-8") == wake["text"] + "\n"
