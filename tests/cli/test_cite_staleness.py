"""Issue 24 items 4, 6 and 7 on the command line, as processes on real git repositories: the wake marks entries
whose citations are not fresh (changed, moved with the new range) and entries due for review, each counted in one
header line; recall and document search carry ``freshness`` and rank fresh above changed within a tier; a
document's sourcePaths are checked after the source file changes; ``reviewAfterDays`` marks ``review: "due"`` (old
timestamps written into the stores, no sleeps) and refuses bad input naming the field; a citing write names the
memories citing the same lines as ``possiblySuperseded``, a runtime replace records what it supersedes, and recall
ranks a superseded item below its successor."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import child_env, tree_snapshot
from tests.helpers.zygote import mnemon_command

RETRY = "".join(f"line {n}\n" for n in range(1, 31))


def run(workspace: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace), "--scope", "custom",
                           "--data-dir", str(workspace.parent / "root")],
                          capture_output=True, text=True, env=child_env(HOME=str(workspace.parent / "home"), **env),
                          cwd=str(workspace.parent), timeout=120)


def ok(workspace: Path, *args: str, **env: str) -> str:
    result = run(workspace, *args, **env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def js(workspace: Path, *args: str, **env: str) -> dict:
    return json.loads(ok(workspace, *args, "--json", **env))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/retry.py": RETRY}, "retry")
    (tmp_path / "home").mkdir()
    return Path(repo.workdir)


def space(workspace: Path) -> None:
    ok(workspace, "space", "create", "--name", "notes", "--description", "notes")
    ok(workspace, "space", "activate", "notes")


def test_wake_marks_changed_and_moved_citations_and_counts_them_once(workspace: Path) -> None:
    ok(workspace, "runtime", "add", "--content", "retry uses backoff", "--cite", "src/retry.py:10-14")
    ok(workspace, "runtime", "add", "--content", "retry max is 5", "--cite", "src/retry.py:20-22")
    ok(workspace, "runtime", "add", "--content", "the retry file starts with line 1", "--cite", "src/retry.py:1")
    ok(workspace, "runtime", "add", "--content", "no code here")
    wake = ok(workspace, "wake")
    assert "Citations:" not in wake and "cites src/" not in wake  # all fresh: the wake is as before
    (workspace / "src" / "retry.py").write_text("new a\nnew b\n" + RETRY.replace("line 21\n", "LINE 21\n"))
    wake = ok(workspace, "wake")
    lines = wake.splitlines()
    assert "[importance=normal; created=0d; updated=0d; cites src/retry.py:10-14: moved to 12-16]" in lines
    assert "[importance=normal; created=0d; updated=0d; cites src/retry.py:20-22: changed]" in lines
    assert "[importance=normal; created=0d; updated=0d; cites src/retry.py:1: moved to 3]" in lines
    assert lines[lines.index("no code here") - 1] == "[importance=normal; created=0d; updated=0d]"
    counted = [line for line in lines if line.startswith("Citations:")]
    assert counted == ["Citations: 3 cited code ranges of 3 entries below are not fresh (marked `cites ...: "
                       "changed|moved to|renamed to|gone|unknown`): the code changed since it was remembered, so "
                       "read it before relying on those entries, then replace or remove them."]
    assert lines.index(counted[0]) < lines.index('<runtime-memory-file name="USER.md">')
    (workspace / "src" / "retry.py").unlink()
    assert "cites src/retry.py:20-22: gone]" in ok(workspace, "wake")


def _age_entries(root: Path, days: int, contents: set[str]) -> None:
    """Write ``updated_at`` (and ``created_at``) ``days`` ago into memories.json for the entries ``contents`` (the
    storage root's, and the global root's that holds USER.md)."""
    old = (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    for path in (root / "runtime" / "memories.json", root.parent / "home" / ".mnemon" / "runtime" / "memories.json"):
        data = json.loads(path.read_text())
        for entry in data["entries"]:
            if entry["content"] in contents:
                entry["created_at"] = entry["updated_at"] = old
        path.write_text(json.dumps(data, indent=2) + "\n")


def test_review_after_days_marks_old_runtime_entries_in_the_wake_and_reads(workspace: Path) -> None:
    root = workspace.parent / "root"
    ok(workspace, "runtime", "add", "--content", "deploys go through staging")
    ok(workspace, "runtime", "add", "--content", "the ci runs on every push")
    ok(workspace, "runtime", "add", "--target", "user", "--content", "prefers short answers")
    _age_entries(root, 120, {"deploys go through staging", "prefers short answers"})
    lines = ok(workspace, "wake").splitlines()
    assert lines[lines.index("deploys go through staging") - 1] == \
        "[importance=normal; created=120d; updated=120d; review due]"
    assert lines[lines.index("the ci runs on every push") - 1] == "[importance=normal; created=0d; updated=0d]"
    assert lines[lines.index("prefers short answers") - 1].endswith("; review due]")
    assert [line for line in lines if line.startswith("Review:")] == [
        "Review: 2 entries below, not updated, recalled or confirmed for 90+ days, are marked `review due`: check "
        "they still hold before relying on them, then update, remove, or confirm still true (nothing is deleted by "
        "age)."]
    listed = {e["content"]: e.get("review") for e in js(workspace, "runtime", "list")["entries"]}
    assert listed == {"deploys go through staging": "due", "the ci runs on every push": None,
                      "prefers short answers": "due"}
    # a longer window, and 0, mark nothing; nothing was deleted
    assert "review due" not in ok(workspace, "wake", MNEMON_REVIEW_AFTER_DAYS="121")
    off = ok(workspace, "wake", MNEMON_REVIEW_AFTER_DAYS="0")
    assert "review due" not in off and "Review:" not in off and "deploys go through staging" in off


def test_review_after_days_refuses_bad_input_naming_the_field_and_writes_nothing(workspace: Path) -> None:
    root = workspace.parent / "root"
    ok(workspace, "runtime", "add", "--content", "something")
    before = tree_snapshot(root)
    for value, message in (("-1", "MNEMON_REVIEW_AFTER_DAYS (reviewAfterDays): must be an integer in 0..36500"),
                           ("36501", "MNEMON_REVIEW_AFTER_DAYS (reviewAfterDays): must be an integer in 0..36500"),
                           ("ninety", "MNEMON_REVIEW_AFTER_DAYS: must be an integer")):
        result = run(workspace, "runtime", "add", "--content", "other", MNEMON_REVIEW_AFTER_DAYS=value)
        assert result.returncode != 0 and message in result.stderr, result.stderr
    assert tree_snapshot(root) == before


def test_records_are_marked_for_review_by_their_updated_time(workspace: Path) -> None:
    record = js(workspace, "records", "create", "--record-scope", "project", "--type", "fact", "--title", "old fact",
                "--content", "x")
    assert "review" not in js(workspace, "records", "show", record["id"])
    records_file = next(p for p in workspace.parent.rglob("*.jsonl") if record["id"] in p.read_text())
    old_ms = int((datetime.now(timezone.utc) - timedelta(days=100)).timestamp() * 1000)
    rows = [json.loads(line) for line in records_file.read_text().splitlines() if line.strip()]
    for row in rows:
        if row.get("id") == record["id"]:
            row["createdAt"] = row["updatedAt"] = old_ms
    records_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert js(workspace, "records", "show", record["id"])["review"] == "due"
    assert [r.get("review") for r in js(workspace, "records", "list")["records"]] == ["due"]
    assert "review" not in js(workspace, "records", "show", record["id"], MNEMON_REVIEW_AFTER_DAYS="0")


def test_recall_carries_freshness_and_ranks_fresh_above_changed_in_its_tier(workspace: Path) -> None:
    space(workspace)
    changed = js(workspace, "remember", "retry backoff doubles each time", "--cite", "src/retry.py:20-22")["id"]
    fresh = js(workspace, "remember", "retry backoff doubles each attempt", "--cite", "src/retry.py:2-3")["id"]
    plain = js(workspace, "remember", "retry backoff doubles each round")["id"]
    before = js(workspace, "recall", "retry backoff doubles each time")["results"]
    assert before[0]["id"] == changed  # the best match while its code is as cited
    assert {r["id"]: r.get("freshness") for r in before} == {changed: "fresh", fresh: "fresh", plain: None}
    (workspace / "src" / "retry.py").write_text(RETRY.replace("line 21\n", "LINE 21\n"))
    after = js(workspace, "recall", "retry backoff doubles each time")["results"]
    assert {r["id"]: r.get("freshness") for r in after} == {changed: "changed", fresh: "fresh", plain: None}
    assert len({r["tier"] for r in after}) == 1  # one tier: the changed one goes last in it
    assert [r["id"] for r in after][-1] == changed
    assert [r["id"] for r in after][:2] == [r["id"] for r in before if r["id"] != changed]
    text = ok(workspace, "recall", "retry backoff doubles")
    assert "retry backoff doubles each time · cited code changed" in text


def test_document_search_and_get_report_citation_and_source_path_freshness(workspace: Path) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "design.md").write_text("# Design\nretry with backoff\n")
    root = workspace.parent / "root"
    created = js(workspace, "doc", "create", "--title", "Retry design", "--content", "how retry backoff works",
                 "--source", "docs/design.md", "--source", "docs/missing.md", "--cite", "src/retry.py:20-22")
    doc_id = created["document"]["id"]
    assert js(workspace, "doc", "get", doc_id)["sourcePathFreshness"] == [
        {"path": "docs/design.md", "freshness": "fresh"}, {"path": "docs/missing.md", "freshness": "unknown"}]
    side = json.loads((root / "state" / "citations" / "document-sources.json").read_text())
    assert list(side["documents"][doc_id]) == ["docs/design.md", "docs/missing.md"]
    assert "sourcePathFreshness" not in (root / "documents" / "index.json").read_text()  # the index stays the reference's
    plain = js(workspace, "doc", "create", "--title", "Retry notes", "--content", "retry backoff notes")["document"]["id"]
    hits = js(workspace, "doc", "search", "retry backoff")["results"]
    assert {h["id"]: h.get("freshness") for h in hits} == {doc_id: "fresh", plain: None}
    assert "sourcePathFreshness" not in next(h for h in hits if h["id"] == plain)
    (workspace / "docs" / "design.md").write_text("# Design\nretry without backoff\n")
    (workspace / "src" / "retry.py").write_text(RETRY.replace("line 21\n", "LINE 21\n"))
    got = js(workspace, "doc", "get", doc_id)
    assert got["sourcePathFreshness"] == [{"path": "docs/design.md", "freshness": "changed"},
                                          {"path": "docs/missing.md", "freshness": "unknown"}]
    hit = next(h for h in js(workspace, "doc", "search", "retry backoff")["results"] if h["id"] == doc_id)
    assert hit["freshness"] == "changed"
    assert hit["sourcePathFreshness"][0] == {"path": "docs/design.md", "freshness": "changed"}
    (workspace / "docs" / "design.md").unlink()
    assert js(workspace, "doc", "get", doc_id)["sourcePathFreshness"][0] == {"path": "docs/design.md",
                                                                          "freshness": "gone"}


def test_a_write_citing_the_same_lines_names_what_it_possibly_supersedes(workspace: Path) -> None:
    root = workspace.parent / "root"
    space(workspace)
    old_item = js(workspace, "remember", "retry gives up after five tries", "--cite", "src/retry.py:20-22")["id"]
    ok(workspace, "runtime", "add", "--content", "max retries is five", "--cite", "src/retry.py:18-22")
    unrelated = js(workspace, "remember", "logging is at line one", "--cite", "src/retry.py:1")
    assert "possiblySuperseded" not in unrelated
    new = js(workspace, "remember", "retry gives up after seven tries", "--cite", "src/retry.py:21-24")
    runtime_key = next(iter(json.loads((root / "state" / "citations" / "runtime.json").read_text())["citations"]))
    assert new["possiblySuperseded"] == [
        {"source": "runtime", "key": runtime_key, "preview": "max retries is five"},
        {"source": "spaces", "key": f"default/{old_item}", "spaceId": "default", "id": old_item,
         "preview": "retry gives up after five tries"}]
    lineage = json.loads((root / "state" / "citations" / "lineage.json").read_text())
    assert lineage["supersedes"][f"spaces default/{new['id']}"] == [
        {"source": "runtime", "key": runtime_key}, {"source": "spaces", "key": f"default/{old_item}"}]
    text = ok(workspace, "records", "create", "--record-scope", "project", "--type", "fact", "--title", "retry limit",
              "--content", "seven", "--cite", "src/retry.py:22")
    assert "possibly superseded (cites the same lines; check it and update or remove it): runtime MEMORY.md " \
           "\"max retries is five\"; spaces default/" in text
    # recall: the superseded item ranks below its successor, though it matches the query better (it did rank
    # above it without the lineage)
    ranked = [r["id"] for r in js(workspace, "recall", "retry gives up after five tries")["results"]]
    assert ranked.index(new["id"]) < ranked.index(old_item)
    (root / "state" / "citations" / "lineage.json").unlink()
    ranked = [r["id"] for r in js(workspace, "recall", "retry gives up after five tries")["results"]]
    assert ranked.index(old_item) < ranked.index(new["id"])


def test_runtime_replace_records_what_the_new_entry_supersedes(workspace: Path) -> None:
    root = workspace.parent / "root"
    ok(workspace, "runtime", "add", "--content", "max retries is five", "--cite", "src/retry.py:20-22")
    replaced = js(workspace, "runtime", "replace", "--old-text", "max retries is five", "--content",
                  "max retries is seven")
    keys = {c: "memory:" + __import__("hashlib").sha256(c.encode()).hexdigest()
            for c in ("max retries is five", "max retries is seven")}
    assert replaced["supersedes"] == {"source": "runtime", "key": keys["max retries is five"],
                                      "preview": "max retries is five"}
    assert "possiblySuperseded" not in replaced  # the entry it replaced is not named twice
    lineage = json.loads((root / "state" / "citations" / "lineage.json").read_text())
    assert lineage == {"version": 1, "supersedes": {
        f"runtime {keys['max retries is seven']}": [{"source": "runtime", "key": keys["max retries is five"]}]}}
    entries = json.loads((root / "runtime" / "memories.json").read_text())["entries"]
    assert list(entries[0]) == ["content", "created_at", "updated_at", "target", "importance"]  # plugin's keys only


def test_a_recalled_space_item_is_due_when_neither_updated_nor_accessed_for_the_window(workspace: Path) -> None:
    import sqlite3

    space(workspace)
    old = js(workspace, "remember", "the wombat cache holds 64 entries")["id"]
    seen = js(workspace, "remember", "the wombat cache is flushed hourly")["id"]
    database = next((workspace.parent / "root").rglob("mnemon.db"))
    long_ago = (datetime.now(timezone.utc) - timedelta(days=100)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recently = (datetime.now(timezone.utc) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def age() -> None:  # as if written 100 days ago; the second one recalled 2 days ago
        db = sqlite3.connect(database)
        with db:
            db.execute("UPDATE insights SET updated_at = ?, last_accessed_at = ?", (long_ago, long_ago))
            db.execute("UPDATE insights SET last_accessed_at = ? WHERE id = ?", (recently, seen))
        db.close()

    age()
    assert "the wombat cache holds 64 entries · review due" in ok(workspace, "recall", "wombat cache")
    age()
    assert {r["id"]: r.get("review") for r in js(workspace, "recall", "wombat cache",
                                                 MNEMON_REVIEW_AFTER_DAYS="101")["results"]} == {old: None, seen: None}
    age()
    first = {r["id"]: r.get("review") for r in js(workspace, "recall", "wombat cache")["results"]}
    assert first == {old: "due", seen: None}
    # that recall accessed it: the next one does not mark it
    assert {r["id"]: r.get("review") for r in js(workspace, "recall", "wombat cache")["results"]} == {old: None,
                                                                                                   seen: None}


def test_documents_are_marked_for_review_by_their_updated_time(workspace: Path) -> None:
    index = workspace.parent / "root" / "documents" / "index.json"
    old = js(workspace, "doc", "create", "--title", "Old wombat notes", "--content", "wombat words")["document"]
    new = js(workspace, "doc", "create", "--title", "New wombat notes", "--content", "wombat words")["document"]
    assert "review" not in js(workspace, "doc", "get", old["id"])
    long_ago = (datetime.now(timezone.utc) - timedelta(days=91)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    index.write_text(index.read_text().replace(f'"updatedAt": "{old["updatedAt"]}"', f'"updatedAt": "{long_ago}"'))
    assert js(workspace, "doc", "get", old["id"])["review"] == "due"
    assert "review" not in js(workspace, "doc", "get", new["id"])
    hits = {h["id"]: h.get("review") for h in js(workspace, "doc", "search", "wombat")["results"]}
    assert hits == {old["id"]: "due", new["id"]: None}
    assert "review" not in js(workspace, "doc", "get", old["id"], MNEMON_REVIEW_AFTER_DAYS="92")
