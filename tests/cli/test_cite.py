"""``--cite PATH[:START[-END]]`` on the command line (issue 24 items 1, 2, 3 and 8), as processes on real git
repositories: what is stored (only the place and the hash, in ``state/citations/``, never in a format another
tool reads), what reads show (freshness per branch, the new range of moved text, re-anchored at the next write),
and every bad citation refused naming the field and the rule with no byte changed on disk."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import commit_files, create_branch, make_repo, switch
from tests.helpers.procs import child_env, tree_snapshot
from tests.helpers.zygote import mnemon_command

LIB = "def parse(text):\n    return text.split()\n\n\ndef render(items):\n    return ' '.join(items)\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


PARSE_SHA = sha("def parse(text):\n    return text.split()\n")


def run(workspace: Path, *args: str, scope: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    scope = scope or ("--scope", "custom", "--data-dir", str(workspace.parent / "root"))
    return subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace), *scope],
                          capture_output=True, text=True, env=child_env(HOME=str(workspace.parent / "home")),
                          cwd=str(workspace.parent), timeout=120)


def ok(workspace: Path, *args: str, **options: tuple[str, ...]) -> str:
    result = run(workspace, *args, **options)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def repo(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    (tmp_path / "home").mkdir()
    return repo


def test_runtime_add_stores_the_place_and_hash_beside_memories_json_whose_bytes_stay_the_plugins(repo) -> None:
    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    added = json.loads(ok(workspace, "runtime", "add", "--content", "parse splits on whitespace",
                          "--cite", "src/lib.py:1-2", "--json"))
    assert added["cites"] == [{"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": PARSE_SHA,
                               "freshness": "fresh"}]
    entries = json.loads((root / "runtime" / "memories.json").read_text())["entries"]
    assert list(entries[0]) == ["content", "created_at", "updated_at", "target", "importance"]  # the plugin's keys
    assert (root / "runtime" / "MEMORY.md").read_bytes() == b"parse splits on whitespace\n"
    side = json.loads((root / "state" / "citations" / "runtime.json").read_text())
    assert side == {"version": 1, "citations": {"memory:" + sha("parse splits on whitespace"): [
        {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": PARSE_SHA}]}}
    assert "return text.split()" not in (root / "state" / "citations" / "runtime.json").read_text()  # never the text
    text = ok(workspace, "runtime", "list", "--target", "memory")
    assert text.splitlines()[-1] == "     cites src/lib.py:1-2 (fresh)"


def test_list_shows_freshness_per_branch_and_replace_re_anchors_what_moved(repo) -> None:
    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    ok(workspace, "runtime", "add", "--content", "render joins with spaces", "--cite", "src/lib.py:5-6")
    create_branch(repo, "feature")
    switch(repo, "feature")
    commit_files(repo, {"src/lib.py": "import os\n\n" + LIB}, "moved")

    def cites() -> list[dict]:
        return json.loads(ok(workspace, "runtime", "list", "--json"))["entries"][0]["cites"]

    render = {"path": "src/lib.py", "startLine": 5, "endLine": 6, "sha256": sha("def render(items):\n    return ' '.join(items)\n")}
    assert cites() == [render | {"freshness": "moved", "movedTo": {"startLine": 7, "endLine": 8}}]
    assert ok(workspace, "runtime", "list").splitlines()[-1] == "     cites src/lib.py:5-6 (moved to 7-8)"
    switch(repo, "main")
    assert cites() == [render | {"freshness": "fresh"}]  # the branch decides
    switch(repo, "feature")
    replaced = json.loads(ok(workspace, "runtime", "replace", "--old-text", "render joins",
                             "--content", "render joins items with single spaces", "--json"))
    anchored = render | {"startLine": 7, "endLine": 8}
    assert replaced["cites"] == [anchored | {"freshness": "fresh"}]  # carried over to the new text, re-anchored
    side = json.loads((root / "state" / "citations" / "runtime.json").read_text())["citations"]
    assert side == {"memory:" + sha("render joins items with single spaces"): [anchored]}
    (workspace / "src" / "lib.py").write_text("import os\n\ndef render(items):\n    return ','.join(items)\n")
    assert cites() == [anchored | {"freshness": "changed"}]
    (workspace / "src" / "lib.py").unlink()
    assert cites() == [anchored | {"freshness": "gone"}]
    ok(workspace, "runtime", "remove", "--old-text", "render joins")
    assert json.loads((root / "state" / "citations" / "runtime.json").read_text())["citations"] == {}


def test_replace_with_cite_replaces_the_citations_and_user_entries_cannot_cite(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "the parser", "--cite", "src/lib.py:1")
    replaced = json.loads(ok(workspace, "runtime", "replace", "--old-text", "the parser", "--content", "the renderer",
                             "--cite", "src/lib.py:5-6", "--cite", "src/lib.py:1", "--json"))
    assert [(c["startLine"], c["endLine"]) for c in replaced["cites"]] == [(5, 6), (1, 1)]
    before = tree_snapshot(workspace.parent / "root")
    user = run(workspace, "runtime", "add", "--target", "user", "--content", "likes tea", "--cite", "src/lib.py")
    assert (user.returncode, user.stderr) == (2, "mnemon-ls: error: --cite: only MEMORY.md entries (target memory) "
                                                 "cite code; USER.md is about the person\n")
    assert tree_snapshot(workspace.parent / "root") == before


def test_remember_recall_records_and_documents_carry_their_citations(repo) -> None:
    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    ok(workspace, "space", "create", "--name", "Project", "--description", "facts", "--active")
    remembered = json.loads(ok(workspace, "remember", "the quokka parser splits on whitespace", "--cite",
                               "src/lib.py:1-2", "--json"))
    parse = {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": PARSE_SHA}
    assert remembered["cites"] == [parse | {"freshness": "fresh"}]
    recall = json.loads(ok(workspace, "recall", "quokka parser", "--json"))
    assert [item["cites"] for item in recall["results"]] == [[parse | {"freshness": "fresh"}]]
    assert "      cites src/lib.py:1-2 (fresh)" in ok(workspace, "recall", "quokka parser").splitlines()
    columns = {row[1] for row in sqlite3.connect(root / "data" / remembered["spaceId"] / "mnemon.db").execute(
        "PRAGMA table_info(insights)")}
    assert not any("cite" in column for column in columns)  # the Mnemon CLI's schema is untouched
    spaces = json.loads((root / "state" / "citations" / "spaces.json").read_text())["citations"]
    assert spaces == {f"{remembered['spaceId']}/{remembered['id']}": [parse]}
    other = json.loads(ok(workspace, "remember", "the renderer joins", "--cite", "src/lib.py:5", "--json"))
    ok(workspace, "space", "forget", other["id"], "--space", other["spaceId"])
    spaces = json.loads((root / "state" / "citations" / "spaces.json").read_text())["citations"]
    assert spaces == {f"{remembered['spaceId']}/{remembered['id']}": [parse]}  # a forgotten item's left with it

    created = json.loads(ok(workspace, "records", "create", "--title", "Parser", "--content", "splits on spaces",
                            "--cite", "src/lib.py:1-2", "--json"))
    assert created["cites"] == [parse | {"freshness": "fresh"}]
    proposed = json.loads(ok(workspace, "records", "propose", "--title", "Renderer", "--content", "joins",
                             "--source-ref", "file:src/lib.py", "--cite", "src/lib.py:5-6", "--json"))
    assert proposed["cites"][0]["startLine"] == 5
    listed = {r["id"]: r.get("cites") for r in json.loads(ok(workspace, "records", "list", "--json"))["records"]}
    assert listed[created["id"]] == [parse | {"freshness": "fresh"}]
    records_file = workspace / ".dsh" / "workspace-memory" / "records.jsonl"
    assert "cites" not in records_file.read_text() and "sha256\": \"" + PARSE_SHA not in records_file.read_text()
    shown = ok(workspace, "records", "show", created["id"])
    assert "  cites src/lib.py:1-2 (fresh)" in shown.splitlines()

    document = json.loads(ok(workspace, "doc", "create", "--title", "Lib", "--content", "# Lib\nnotes",
                             "--cite", "src/lib.py", "--json"))
    whole = {"path": "src/lib.py", "startLine": 1, "endLine": 6, "sha256": sha(LIB)}
    assert document["cites"] == [whole | {"freshness": "fresh"}]
    got = json.loads(ok(workspace, "doc", "get", document["document"]["id"], "--json"))
    assert got["cites"] == [whole | {"freshness": "fresh"}]
    index = (root / "documents" / "index.json").read_text()
    assert "cites" not in index and "sha256" not in index


def _bad_cases(workspace: Path) -> list[tuple[str, str, str]]:
    """(``--cite`` value, the error line after ``mnemon-ls: error: ``) for each rule of item 8."""
    outside = workspace.parent / "outside.py"
    return [
        ("../outside.py", f"cites[0].path: must be a file inside the workspace {workspace} (got '../outside.py')"),
        (str(outside), f"cites[0].path: must be a file inside the workspace {workspace} (got '{outside}')"),
        (".mnemon/runtime/memories.json", "cites[0].path: must not be inside the storage root "
                                          f"{workspace / '.mnemon'}: memory is not a source (got "
                                          "'.mnemon/runtime/memories.json')"),
        (".git/HEAD", "cites[0].path: must not be inside a .git directory (got '.git/HEAD')"),
        ("src", "cites[0].path: is a directory, not a file (src)"),
        ("blob.bin", "cites[0].path: is a binary file (it contains a NUL byte): only text files can be cited"),
        ("latin1.txt", "cites[0].path: is a binary file (not UTF-8: invalid continuation byte at byte 3): only "
                       "text files can be cited"),
        ("big.txt", f"cites[0].path: is over 2 MiB ({2 * 1024 * 1024 + 1} bytes; at most {2 * 1024 * 1024})"),
        ("escape.py", f"cites[0].path: is a symbolic link that leaves the workspace (escape.py -> {outside})"),
        ("src/lib.py:5-2", "cites[0].endLine: must not be before startLine (2 < 5)"),
        ("src/lib.py:7", "cites[0].startLine: is past the end of src/lib.py (7 > 6 lines)"),
        ("src/lib.py:2-9", "cites[0].endLine: is past the end of src/lib.py (9 > 6 lines)"),
        ("missing.py", "cites[0].path: does not exist in the workspace (missing.py)"),
        ("empty.txt", "cites[0].path: is empty: there are no lines to cite (empty.txt)"),
    ]


@pytest.mark.parametrize("command", [
    ("runtime", "add", "--content", "a fact"),
    ("remember", "a fact", "--space", "Project"),
    ("records", "create", "--title", "T", "--content", "a fact"),
    ("records", "propose", "--title", "T", "--content", "a fact", "--source-ref", "file:src/lib.py"),
    ("doc", "create", "--title", "T", "--content", "a body"),
])
def test_every_bad_citation_is_refused_naming_the_field_and_the_rule_and_nothing_changes(repo, command) -> None:
    workspace = Path(repo.workdir)
    scope = ("--scope", "workspace")
    (workspace / "blob.bin").write_bytes(b"ab\x00cd\n")
    (workspace / "latin1.txt").write_bytes(b"caf\xe9 \xe9t\xe9\n")
    (workspace / "big.txt").write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    (workspace / "empty.txt").write_bytes(b"")
    (workspace.parent / "outside.py").write_text("secret = 1\n")
    os.symlink(workspace.parent / "outside.py", workspace / "escape.py")
    ok(workspace, "space", "create", "--name", "Project", "--description", "facts", "--active", scope=scope)
    ok(workspace, "runtime", "add", "--content", "already here", scope=scope)
    before = tree_snapshot(workspace)
    home = tree_snapshot(workspace.parent / "home")
    for value, error in _bad_cases(workspace):
        result = run(workspace, *command, "--cite", "src/lib.py:1", "--cite", value, scope=scope)
        field, rule = error.split(": ", 1)  # cites[0].path: named by the option as typed (--cite VALUE (path))
        expected = f"--cite {value} ({field.split('.')[1]}): {rule}"
        assert (result.returncode, result.stderr) == (2, f"mnemon-ls: error: {expected}\n"), value
    assert tree_snapshot(workspace) == before  # the root (inside the workspace), the records, the side files
    assert tree_snapshot(workspace.parent / "home") == home


def test_a_record_edit_and_a_document_update_re_anchor_their_moved_citations(repo) -> None:
    workspace = Path(repo.workdir)
    root = workspace.parent / "root"
    record = json.loads(ok(workspace, "records", "create", "--title", "Parser", "--content", "splits",
                           "--cite", "src/lib.py:1-2", "--json"))
    document = json.loads(ok(workspace, "doc", "create", "--title", "Lib", "--content", "# Lib",
                             "--cite", "src/lib.py:1-2", "--json"))
    (workspace / "src" / "lib.py").write_text("import re\n" + LIB)
    moved = {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": PARSE_SHA, "freshness": "moved",
             "movedTo": {"startLine": 2, "endLine": 3}}
    shown = json.loads(ok(workspace, "records", "show", record["id"], "--json"))
    assert shown["cites"] == [moved]  # a read reports the new range and stores nothing
    assert json.loads((root / "state" / "citations" / "records.json").read_text())["citations"] == {
        f"project/{record['id']}": [{"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": PARSE_SHA}]}
    anchored = {"path": "src/lib.py", "startLine": 2, "endLine": 3, "sha256": PARSE_SHA}
    edited = json.loads(ok(workspace, "records", "edit", record["id"], "--content", "splits on spaces", "--json"))
    assert edited["cites"] == [anchored | {"freshness": "fresh"}]
    assert json.loads((root / "state" / "citations" / "records.json").read_text())["citations"] == {
        f"project/{record['id']}": [anchored]}
    updated = json.loads(ok(workspace, "doc", "update", document["document"]["id"], "--content", "# Lib\nmore",
                            "--json"))
    assert updated["cites"] == [anchored | {"freshness": "fresh"}]
    assert json.loads((root / "state" / "citations" / "documents.json").read_text())["citations"] == {
        document["document"]["id"]: [anchored]}


def test_a_path_past_the_one_path_rule_is_refused_alike_by_cited_and_cite_and_never_repeated(repo) -> None:
    workspace = Path(repo.workdir)
    long = "a" * 40_000
    rule = "must be a path of at most 4096 characters without NUL"
    before = tree_snapshot(workspace.parent / "root")
    for args in (("cited", long), ("cited", "/" + long), ("cited", "src/" + "x" * 4093)):
        refused = run(workspace, *args)
        assert refused.returncode == 2 and refused.stderr == f"mnemon-ls: error: FILE: {rule}\n", refused.stderr[:300]
    cite = run(workspace, "runtime", "add", "--content", "c", "--cite", long)
    assert cite.returncode == 2 and cite.stderr.endswith(f"(path): {rule}\n") and len(cite.stderr) < 400
    outside = run(workspace, "cited", "/" + "b" * 4000)  # within the rule, outside the workspace: repeated short
    assert outside.returncode == 2 and "must be a file inside the workspace" in outside.stderr
    assert len(outside.stderr) < 600, len(outside.stderr)
    assert "No memory cites this file: src/x" in ok(workspace, "cited", "src/" + "x" * 4092)  # 4096 characters: taken
    assert tree_snapshot(workspace.parent / "root") == before


def _cited(workspace: Path, cwd: Path, *args: str) -> str:
    """``mnemon-ls cited ARGS`` run from ``cwd`` (the other tests run from outside the workspace)."""
    done = subprocess.run([*mnemon_command(), "cited", *args, "--workspace", str(workspace), "--scope", "custom",
                           "--data-dir", str(workspace.parent / "root")], capture_output=True, text=True,
                          env=child_env(HOME=str(workspace.parent / "home")), cwd=str(cwd), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cited_takes_file_from_the_current_directory_and_names_a_directory_or_missing_path(repo) -> None:
    """``cited FILE`` took FILE relative to the workspace root wherever it ran, and a directory or a path where
    nothing is got "No memory cites this file" with no hint. In the workspace FILE is now taken from the current
    directory (in the root, as before); outside it, from the workspace; a directory and a missing path are said so."""
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "parse splits on whitespace", "--cite", "src/lib.py:1-2")
    listed = "# Memories citing src/lib.py\n\n## lines 1-2\n\n- MEMORY.md"
    assert _cited(workspace, workspace / "src", "lib.py").startswith(listed)  # from src/
    assert _cited(workspace, workspace / "src", "../src/./lib.py").startswith(listed)
    assert _cited(workspace, workspace, "src/lib.py").startswith(listed)  # from the root: as before
    assert _cited(workspace, workspace.parent, "src/lib.py").startswith(listed)  # outside: from the workspace
    data = json.loads(_cited(workspace, workspace / "src", "lib.py", "--json"))
    assert (data["path"], data["pathKind"], data["count"]) == ("src/lib.py", "file", 1)
    directory = _cited(workspace, workspace, "src")
    assert directory == ("# src\n\nsrc is a directory: citations name files, so give a file in it (a relative path "
                         "is taken from the workspace; on the command line from the current directory inside "
                         "it).\n"), directory
    assert json.loads(_cited(workspace, workspace, "src", "--json"))["pathKind"] == "directory"
    missing = _cited(workspace, workspace / "src", "nope.py")
    assert missing.startswith("# src/nope.py\n\nNo memory cites this file: src/nope.py does not exist in the "
                              "workspace"), missing
    (workspace / "src" / "lib.py").unlink()  # a cited file gone: its memories are still listed, and it is said
    gone = _cited(workspace, workspace, "src/lib.py")
    assert gone.startswith("# Memories citing src/lib.py\n\nsrc/lib.py no longer exists in the workspace: these "
                           "memories cite it still.\n\n## lines 1-2\n"), gone
