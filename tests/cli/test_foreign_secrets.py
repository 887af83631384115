"""A credential another program stored reaches the assistant redacted under ``secrets: redact``, and the files are
left as they are (mnemon_ls/runtime/foreign.py, mnemon_ls/spaces/foreign.py).

Every write path of mnemon-ls redacts, but ``memories.json`` has other writers (a person's editor, the plugin, a
script) and a native space's ``mnemon.db`` another one too (the Mnemon CLI: the same file format, no redaction).
Each test writes such a value the way that writer would (the JSON file by hand; a row with raw SQLite as the Go CLI
inserts it, with its oplog row), then runs the real command line in a real git repository.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.helpers.procs import child_env
from tests.helpers.zygote import mnemon_command
from tests.redact_samples import AWS_ID, GITHUB

SECRET = GITHUB["ghp"]
#: What a read must leave as it is in a row.
STORED = "SELECT id, content, category, tags, entities, source FROM insights ORDER BY id"


def run(repo: Path, root: Path, *argv: str, check: bool = True, secrets: str | None = None,
        stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``mnemon-ls <argv>`` on the custom root ``root`` in ``repo``, USER.md in it too (``secrets``:
    ``MNEMON_SECRETS``)."""
    extra = {"MNEMON_SEMANTIC": "off", "MNEMON_RUNTIME_USER_SCOPE": "storage"}
    if secrets:
        extra["MNEMON_SECRETS"] = secrets
    done = subprocess.run([*mnemon_command(), *argv, "--workspace", str(repo), "--scope", "custom", "--data-dir",
                           str(root)], capture_output=True, text=True, cwd=repo, input=stdin, timeout=120,
                          env=child_env(**extra))
    assert not check or done.returncode == 0, done.stderr
    return done


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, Path]:
    """``(repository, root)``: two MEMORY.md entries and one USER.md entry written by mnemon-ls."""
    repo, root = tmp_path / "repo", tmp_path / "root"
    make_repo(repo)
    run(repo, root, "runtime", "add", "--target", "user", "--content", "prefers short answers")
    run(repo, root, "runtime", "add", "--target", "memory", "--content", "the suite runs with pytest -n 2")
    run(repo, root, "runtime", "add", "--target", "memory", "--content", "releases are tagged from main")
    return repo, root


def write_by_hand(root: Path, content: str, target: str = "memory") -> bytes:
    """Add an entry to ``memories.json`` as another program would (the file only; no last-good copy, no
    projection); returns the bytes written."""
    path = root / "runtime" / "memories.json"
    document = json.loads(path.read_text())
    entry = dict(next(e for e in document["entries"] if e["target"] == target))
    entry["content"] = content
    document["entries"].append(entry)
    data = (json.dumps(document, indent=2) + "\n").encode()
    path.write_bytes(data)
    return data


def test_wake_and_session_start_show_a_hand_written_credential_redacted_and_leave_the_file(store):
    repo, root = store
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    write_by_hand(root, f"my AWS key id {AWS_ID}", target="user")
    written = (root / "runtime" / "memories.json").read_bytes()
    memories = root / "runtime" / "memories.json"
    wake = run(repo, root, "wake").stdout
    hook = run(repo, root, "hook", "session-start", stdin=json.dumps({"cwd": str(repo)})).stdout
    for out in (wake, hook):
        assert SECRET not in out and AWS_ID not in out
        assert "deploy token is [redacted:github-token] for the staging box" in out
        assert "my AWS key id [redacted:aws-access-key-id]" in out
        assert "the suite runs with pytest -n 2" in out  # the other entries as they are
        assert (f"{memories}: MEMORY.md entry 3 holds what looks like a credential (github-token) that another "
                "program wrote; shown redacted, the file is unchanged: `mnemon-ls redact --apply` replaces it") in out
        assert f"{memories}: USER.md entry 2 holds what looks like a credential (aws-access-key-id)" in out
    listed = run(repo, root, "runtime", "list")
    assert SECRET not in listed.stdout + listed.stderr
    assert "3. [" in listed.stdout and "] deploy token is [redacted:github-token] for the staging box" in listed.stdout
    assert f"{memories}: MEMORY.md entry 3 holds what looks like a credential (github-token)" in listed.stderr
    data = json.loads(run(repo, root, "runtime", "list", "--json").stdout)
    assert SECRET not in json.dumps(data) and AWS_ID not in json.dumps(data)
    assert [e["content"] for e in data["entries"] if "redacted" in e["content"]] == [
        "my AWS key id [redacted:aws-access-key-id]", "deploy token is [redacted:github-token] for the staging box"]
    assert any("MEMORY.md entry 3 holds" in p for p in data["problems"])
    assert memories.read_bytes() == written  # no data lost: the person fixes the file
    assert not (root / "runtime" / ".memories.unscrubbed").exists()  # a read writes no marker


def test_under_allow_the_wake_is_what_it_was_and_under_reject_it_is_redacted(store):
    repo, root = store
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    out = run(repo, root, "wake", secrets="allow").stdout
    assert f"deploy token is {SECRET} for the staging box" in out
    assert "another program wrote" not in out
    out = run(repo, root, "wake", secrets="reject").stdout  # reject wants no credential in memory: never shown
    assert SECRET not in out and "deploy token is [redacted:github-token] for the staging box" in out


def test_a_commit_that_carries_the_value_forward_keeps_it_redacted_until_redact_apply(store):
    repo, root = store
    runtime = root / "runtime"
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    run(repo, root, "runtime", "add", "--target", "memory", "--content", "docs live in docs/reference")
    # our commit wrote both files alike: the bytes no longer tell another writer's value apart; the marker does
    assert (runtime / "memories.json").read_bytes() == (runtime / ".memories.last-good.json").read_bytes()
    assert SECRET in (runtime / "memories.json").read_text()
    assert (runtime / ".memories.unscrubbed").is_file()
    out = run(repo, root, "wake").stdout
    assert SECRET not in out and "deploy token is [redacted:github-token]" in out
    assert "docs live in docs/reference" in out
    run(repo, root, "redact", "--apply")
    assert SECRET not in (runtime / "memories.json").read_text()
    assert not (runtime / ".memories.unscrubbed").exists()
    out = run(repo, root, "wake").stdout
    assert "deploy token is [redacted:github-token]" in out and "another program wrote" not in out


def test_a_commit_after_a_clean_hand_edit_leaves_no_marker(store):
    repo, root = store
    write_by_hand(root, "the staging box is staging.example.invalid")
    run(repo, root, "runtime", "add", "--target", "memory", "--content", "docs live in docs/reference")
    assert not (root / "runtime" / ".memories.unscrubbed").exists()
    out = run(repo, root, "wake").stdout
    assert "the staging box is staging.example.invalid" in out and "another program wrote" not in out


def cli_remember(db_path: Path, ident: str, content: str, tags: list[str] | None = None) -> None:
    """An insert as the Mnemon CLI writes one (shared/reference/mnemon-cli.md: the row, then its oplog row)."""
    now = "2026-12-01T10:00:00Z"
    with sqlite3.connect(db_path) as db:
        db.execute("INSERT INTO insights(id, content, category, importance, tags, entities, source, access_count, "
                   "created_at, updated_at) VALUES(?, ?, 'fact', 3, ?, '[]', 'user', 0, ?, ?)",
                   (ident, content, json.dumps(tags or []), now, now))
        db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('remember', ?, ?, ?)",
                   (ident, content, now))
    db.close()


@pytest.fixture
def space(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``(repository, root, mnemon.db)``: an active native space with one item of ours and one the Mnemon CLI
    wrote holding a credential."""
    repo, root = tmp_path / "repo", tmp_path / "root"
    make_repo(repo)
    run(repo, root, "space", "create", "--name", "Project", "--description", "facts", "--active")
    run(repo, root, "remember", "the staging deploy runs make release")
    db_path = root / "data" / "default" / "mnemon.db"
    cli_remember(db_path, "c0ffee00-0000-4000-8000-000000000001", f"the staging deploy token is {SECRET}")
    return repo, root, db_path


def test_recall_sends_a_credential_the_mnemon_cli_stored_redacted_and_leaves_the_store(space):
    repo, root, db_path = space
    out = run(repo, root, "recall", "staging deploy token").stdout
    assert SECRET not in out
    assert "the staging deploy token is [redacted:github-token]" in out
    assert ("space Project (default) item c0ffee00-0000-4000-8000-000000000001 holds what looks like a credential "
            "(github-token) that another program stored; sent redacted, the store is unchanged") in out
    data = json.loads(run(repo, root, "recall", "staging deploy token", "--json").stdout)
    assert SECRET not in json.dumps(data)
    with sqlite3.connect(db_path) as db:
        stored = db.execute("SELECT content FROM insights WHERE id = 'c0ffee00-0000-4000-8000-000000000001'"
                            ).fetchone()[0]
    db.close()
    assert stored == f"the staging deploy token is {SECRET}"  # the person fixes it (`mnemon-ls redact --apply`)


def test_recall_without_redact_is_what_it_was(space):
    repo, root, _ = space
    out = run(repo, root, "recall", "staging deploy token", secrets="allow").stdout
    assert f"the staging deploy token is {SECRET}" in out and "another program stored" not in out


def test_related_sends_a_credential_the_mnemon_cli_stored_redacted(space):
    repo, root, db_path = space
    ours = json.loads(run(repo, root, "recall", "make release", "--json").stdout)["results"][0]["id"]
    foreign = "c0ffee00-0000-4000-8000-000000000001"
    run(repo, root, "space", "link", ours, foreign, "--space", "default")
    out = run(repo, root, "space", "related", ours, "--space", "default").stdout
    assert SECRET not in out
    assert f"{foreign}: the staging deploy token is [redacted:github-token]" in out
    assert (f"note: space Project (default) item {foreign} holds what looks like a credential (github-token) that "
            "another program stored; sent redacted, the store is unchanged") in out
    data = json.loads(run(repo, root, "space", "related", ours, "--space", "default", "--json").stdout)
    assert SECRET not in json.dumps(data) and len(data["notices"]) == 1
    assert f"{foreign}: the staging deploy token is {SECRET}" in run(repo, root, "space", "related", ours, "--space",
                                                                    "default", secrets="allow").stdout


def test_review_lists_a_credential_the_mnemon_cli_stored_redacted(space):
    repo, root, db_path = space
    old = "2020-01-01T10:00:00Z"  # neither updated nor accessed for years: due for review
    ident = "c0ffee00-0000-4000-8000-000000000002"
    with sqlite3.connect(db_path) as db:
        db.execute("INSERT INTO insights(id, content, category, importance, tags, entities, source, access_count, "
                   "created_at, updated_at) VALUES(?, ?, 'fact', 3, '[]', '[]', 'user', 0, ?, ?)",
                   (ident, f"the old deploy token is {SECRET}", old, old))
        db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('remember', ?, 'x', ?)",
                   (ident, old))
    db.close()
    out = run(repo, root, "review").stdout
    assert SECRET not in out and "the old deploy token is [redacted:github-token]" in out, out
    data = json.loads(run(repo, root, "review", "--json").stdout)
    assert SECRET not in json.dumps(data)
    assert f"the old deploy token is {SECRET}" in run(repo, root, "review", secrets="allow").stdout


def test_a_credential_the_cli_stored_as_source_or_category_reaches_recall_and_related_redacted(space):
    """``source`` and ``category`` are free strings in ``mnemon.db``: another writer's value there is sent redacted
    too (it was sent whole in the JSON of recall and space related), and the rows are left as they are."""
    repo, root, db_path = space
    ours = json.loads(run(repo, root, "recall", "make release", "--json").stdout)["results"][0]["id"]
    now = "2026-12-01T10:00:00Z"
    with sqlite3.connect(db_path) as db:
        for ident, category, source in (("c0ffee00-0000-4000-8000-00000000000a", "fact", SECRET),
                                        ("c0ffee00-0000-4000-8000-00000000000b", AWS_ID, "user")):
            db.execute("INSERT INTO insights(id, content, category, importance, tags, entities, source, access_count, "
                       "created_at, updated_at) VALUES(?, 'the staging deploy notes', ?, 3, '[]', '[]', ?, 0, ?, ?)",
                       (ident, category, source, now, now))
            db.execute("INSERT INTO oplog(operation, insight_id, detail, created_at) VALUES('remember', ?, 'x', ?)",
                       (ident, now))
        before = db.execute(STORED).fetchall()
    db.close()
    for ident in ("c0ffee00-0000-4000-8000-00000000000a", "c0ffee00-0000-4000-8000-00000000000b"):
        run(repo, root, "space", "link", ours, ident, "--space", "default")
    recalled = json.loads(run(repo, root, "recall", "staging deploy notes", "--limit", "50", "--json").stdout)
    related = json.loads(run(repo, root, "space", "related", ours, "--space", "default", "--json").stdout)
    for items in (recalled["results"], related["items"]):
        assert SECRET not in json.dumps(items) and AWS_ID not in json.dumps(items)
        by_id = {i["id"]: i for i in items}
        assert by_id["c0ffee00-0000-4000-8000-00000000000a"]["source"] == "[redacted:github-token]"
        assert by_id["c0ffee00-0000-4000-8000-00000000000b"]["category"] == "[redacted:aws-access-key-id]"
    assert any("item c0ffee00-0000-4000-8000-00000000000a holds what looks like a credential (github-token)" in n
               for n in related["notices"])
    with sqlite3.connect(db_path) as db:
        assert db.execute(STORED).fetchall() == before  # a recall counts an access, nothing more
    db.close()
    allowed = json.loads(run(repo, root, "recall", "staging deploy notes", "--limit", "50", "--json",
                             secrets="allow").stdout)
    assert SECRET in json.dumps(allowed["results"]) and AWS_ID in json.dumps(allowed["results"])
