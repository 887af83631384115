"""A person's compaction over the language server (issue 23 item 9): ``mnemon/runtime/compact`` with ``merge``
and ``drop`` (what VS Code's pick and Neovim's :MnemonCompact send) commits with the pending change of the
``mnemon/maintenanceRequired`` plan, reports ``$/progress`` and one ``mnemon/maintenanceCompleted`` from the
server's observers, and a broken rule names the person's field, changes nothing and notifies nothing.

Real servers (pytest-lsp) on a real repository, storageScope ``workspace`` (root ``<repo>/.mnemon``).
"""

from __future__ import annotations

from pathlib import Path

from tests.lsp.conftest import Launcher, tree_state
from tests.lsp.test_compact_cold import COMPACT, COMPLETED, SEP, SETTINGS, _full_user


async def test_merge_and_drop_with_the_pending_change(lsp: Launcher, repo, repo_dir: Path) -> None:
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    plan, required = await _full_user(client)
    assert required["plan"] == plan and [e["index"] for e in plan["entries"]] == [1, 2, 3]
    completed = client.expect(COMPLETED)
    client.progress_reports["person-1"] = []
    receipt = await client.call(COMPACT, {"revision": plan["revision"], "target": "user", "pending": plan["pending"],
                                          "workDoneToken": "person-1",
                                          "merge": [{"sourceIndexes": [1, 2], "content": "Go tabs; no force-push"}],
                                          "drop": [3]})
    note = await client.received(completed)
    maintenance = receipt["maintenance"]
    assert maintenance["entries"] == [{"content": "Go tabs; no force-push", "importance": "critical",
                                       "sourceIndexes": [1, 2]}]
    assert (maintenance["dropped"], maintenance["bytesBefore"], maintenance["bytesAfter"]) == ([3], 97, 46)
    assert note == {"workspace": repo_dir.as_uri(), "kind": "local-compaction", "receipt": maintenance,
                    "summary": "Compacted USER.md: 1 entry replace 2, 1 dropped (46/120 bytes); the replaced and "
                               "dropped text is kept in runtime/archived/"}
    runtime = repo_dir / ".mnemon" / "runtime"
    assert (runtime / "USER.md").read_text() == SEP.join(["Go tabs; no force-push", "works in UTC+2 hours"]) + "\n"
    assert "likes short commit subject li" in (runtime / "archived" / "memories.jsonl").read_text()
    reports = client.progress_reports["person-1"]
    assert [type(r).__name__ for r in reports] == ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]
    assert (reports[0].title, reports[0].message) == ("Compacting USER.md", "Checking the compaction against the plan")
    assert reports[1].message == note["summary"]
    # one notification for the one compaction
    await client.call("mnemon/status", {})
    assert len(client.notes_since(0, COMPLETED)) == 1


async def test_a_broken_rule_names_the_merge_and_changes_nothing(lsp: Launcher, repo, repo_dir: Path) -> None:
    client = await lsp.start("neovim@v0.7", [repo_dir], SETTINGS)
    plan, _ = await _full_user(client)
    before = tree_state(repo_dir / ".mnemon")
    mark = client.mark()
    error = await client.call_error(COMPACT, {"pending": plan["pending"], "merge": [
        {"sourceIndexes": [1, 2], "content": "merged", "importance": "low"}]})
    assert error.data == {"code": "invalid-input", "field": "merge[0].importance",
                          "rule": "lowers importance: entry 2 is critical, this merge low",
                          "problems": [{"field": "merge[0].importance",
                                        "rule": "lowers importance: entry 2 is critical, this merge low"}]}
    error = await client.call_error(COMPACT, {"merge": [{"sourceIndexes": [1, 2], "content": "m"}],
                                              "entries": []})
    assert (error.data["field"], error.data["rule"]) == (
        "merge", "cannot be combined with entries (entries rewrites the whole plan; merge and drop name only the "
                 "changes)")
    assert tree_state(repo_dir / ".mnemon") == before
    assert client.notes_since(mark) == []
