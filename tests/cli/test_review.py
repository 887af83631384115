"""``mnemon-ls cited FILE``, ``review`` and ``reanchor SOURCE KEY`` (issue 24 item 5) as processes on a real git
repository, with a memory of every citing Source (a MEMORY.md entry, a Memory Space item, a record, a document):
the memories citing a file by the range they cite now, the ones whose cited code changed or is gone, "still
true" re-anchoring a changed one (hashed as the lines are now) and a moved one (to its new lines), a gone one
left as it is, and bad input named with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cite import LIB, ok, run, sha
from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import tree_snapshot

NOTHING = "No memory needs review: every citation is fresh or moved, and no memory is due for review."


@pytest.fixture
def repo(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB, "src/old.py": "x = 1\n"}, "lib")
    (tmp_path / "home").mkdir()
    return repo


def test_cited_review_and_reanchor_across_every_source(repo) -> None:
    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    ok(workspace, "runtime", "add", "--content", "parse splits on whitespace", "--cite", "src/lib.py:1-2")
    ok(workspace, "space", "create", "--name", "Project", "--description", "facts", "--active")
    item = json.loads(ok(workspace, "remember", "the renderer joins with spaces", "--cite", "src/lib.py:5-6",
                         "--json"))
    record = json.loads(ok(workspace, "records", "create", "--title", "Parser", "--content", "returns a list",
                           "--cite", "src/lib.py:1-2", "--json"))
    document = json.loads(ok(workspace, "doc", "create", "--title", "Old", "--content", "# Old\nx is one",
                             "--cite", "src/old.py", "--json"))["document"]

    cited = json.loads(ok(workspace, "cited", "src/lib.py", "--json"))
    assert [(r["startLine"], r["endLine"], [(m["source"], m["preview"], m["freshness"]) for m in r["memories"]])
            for r in cited["ranges"]] == [
        (1, 2, [("runtime", "parse splits on whitespace", "fresh"), ("records", "Parser: returns a list", "fresh")]),
        (5, 6, [("spaces", "the renderer joins with spaces", "fresh")])]
    assert cited["count"] == 3
    only = json.loads(ok(workspace, "cited", str(workspace / "src" / "lib.py"), "--line", "6", "--json"))
    assert [m["key"] for r in only["ranges"] for m in r["memories"]] == [f"{item['spaceId']}/{item['id']}"]
    assert ok(workspace, "review") == NOTHING + "\n"

    # The parser changes in place, the renderer moves down, old.py goes.
    (workspace / "src" / "lib.py").write_text(LIB.replace("text.split()", "text.split(',')").replace(
        "\n\ndef render", "\n\n\n\ndef render"))
    (workspace / "src" / "old.py").unlink()
    review = json.loads(ok(workspace, "review", "--json"))
    assert [(m["source"], m["preview"], [c["freshness"] for c in m["cites"]]) for m in review["memories"]] == [
        ("runtime", "parse splits on whitespace", ["changed"]),
        ("documents", "Old", ["gone"]),
        ("records", "Parser: returns a list", ["changed"])]
    text = ok(workspace, "review")
    assert text.splitlines()[:5] == ["3 memories need review:", "- MEMORY.md (0d) parse splits on whitespace",
                                     "  why: cited code changed",
                                     "  source=runtime key=memory:" + sha("parse splits on whitespace"),
                                     "  cites src/lib.py:1-2 (changed)"]
    cited = json.loads(ok(workspace, "cited", "src/lib.py", "--json"))
    assert [(r["startLine"], r["endLine"]) for r in cited["ranges"]] == [(1, 2), (7, 8)]  # the moved one's new lines

    # Bad input: named, nothing written.
    before = tree_snapshot(root)
    for args, line in (
            (("reanchor", "runtime", "memory:nope"),
             "KEY: names no memory of runtime ('memory:nope'; `review` lists the keys)"),
            (("reanchor", "notes", "x"), "SOURCE: must be one of runtime, spaces, documents, records (got 'notes') "
                                         "(see `mnemon-ls reanchor --help`)"),
            (("cited", "/etc/passwd"), f"FILE: must be a file inside the workspace {workspace} (got '/etc/passwd')")):
        result = run(workspace, *args)
        assert result.returncode != 0 and result.stderr.splitlines()[-1].endswith(line), result.stderr
    assert tree_snapshot(root) == before

    key = review["memories"][0]["key"]
    done = json.loads(ok(workspace, "reanchor", "runtime", key, "--json"))
    new_lines = "def parse(text):\n    return text.split(',')\n"
    assert done["reanchored"] == 1 and done["left"] == []
    assert done["cites"] == [{"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": sha(new_lines),
                              "freshness": "fresh"}]
    moved = json.loads(ok(workspace, "reanchor", "spaces", f"{item['spaceId']}/{item['id']}", "--json"))
    assert [(c["startLine"], c["endLine"], c["freshness"]) for c in moved["cites"]] == [(7, 8, "fresh")]
    gone = ok(workspace, "reanchor", "documents", document["id"])
    assert gone.splitlines() == [f"Re-anchored 0 citations of documents {document['id']} to the current code.",
                                 "cites src/old.py:1 (gone)",
                                 "Left as they are (the file is gone or cannot be read; edit or remove the memory): "
                                 "src/old.py:1 (gone)",
                                 "Confirmed still true: due for review again in 90 days unless updated or recalled "
                                 "first."]
    review = json.loads(ok(workspace, "review", "--json"))
    assert [(m["source"], m["key"]) for m in review["memories"]] == [
        ("documents", document["id"]), ("records", f"project/{record['id']}")]
    side = json.loads((root / "state" / "citations" / "runtime.json").read_text())["citations"]
    assert side == {"memory:" + sha("parse splits on whitespace"): [
        {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": sha(new_lines)}]}


def test_a_memory_no_longer_there_is_left_out_and_cannot_be_reanchored(repo) -> None:
    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    record = json.loads(ok(workspace, "records", "create", "--title", "Parser", "--content", "returns a list",
                           "--cite", "src/lib.py:1-2", "--json"))
    ok(workspace, "records", "forget", record["id"])
    (workspace / "src" / "lib.py").write_text("changed\n")
    assert json.loads(ok(workspace, "review", "--json"))["memories"] == []  # forgotten: nothing to review
    assert json.loads(ok(workspace, "cited", "src/lib.py", "--json"))["ranges"] == []
    before = tree_snapshot(root)
    result = run(workspace, "reanchor", "records", f"project/{record['id']}")
    assert result.returncode == 2 and result.stderr.splitlines()[-1] == (
        f"mnemon-ls: error: KEY: names no memory of records ('project/{record['id']}'; `review` lists the keys)")
    assert tree_snapshot(root) == before


def test_a_space_item_nobody_updated_or_recalled_is_due_and_reanchor_confirms_it(repo) -> None:
    """Issue 24 item 6 through the CLI: a Memory Space item without citations, its row made 120 days old by hand
    in mnemon.db, is listed by ``review`` with why; ``reanchor spaces KEY`` confirms it (the row is unchanged) and
    ``review`` has nothing left."""
    import sqlite3
    from datetime import datetime, timedelta, timezone

    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    ok(workspace, "space", "create", "--name", "Project", "--description", "facts", "--active")
    item = json.loads(ok(workspace, "remember", "the HERON queue drains at night", "--json"))
    key = f"{item['spaceId']}/{item['id']}"
    assert ok(workspace, "review") == NOTHING + "\n"
    (db_path,) = root.glob("data/*/mnemon.db")
    old = (datetime.now(timezone.utc) - timedelta(days=120)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with sqlite3.connect(db_path) as db:
        assert db.execute("UPDATE insights SET created_at = ?, updated_at = ?", (old, old)).rowcount == 1
        row = db.execute("SELECT * FROM insights").fetchall()
    db.close()

    text = ok(workspace, "review")
    assert text.startswith("1 memory needs review:\n- Memory Space (120d) the HERON queue drains at night\n"
                           "  why: not updated or confirmed for reviewAfterDays, due since ")
    assert f"source=spaces key={key}" in text
    (listed,) = json.loads(ok(workspace, "review", "--json"))["memories"]
    assert (listed["key"], listed["reasons"], listed["cites"]) == (key, ["review-due"], [])
    ok(workspace, "reanchor", "spaces", key)
    assert ok(workspace, "review") == NOTHING + "\n"
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT * FROM insights").fetchall() == row  # confirmed in a side file; nothing deleted
    db.close()
