"""A cited file that git reports renamed reads ``renamed`` with ``renamedTo`` (it read ``gone``): staged (``git mv``)
and committed, the lines moved in the new file too, and "still true" re-anchors the citation to the new path.
Processes on a real git repository, renamed with the real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_cite_staleness import RETRY, js, ok
from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import child_env


def git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *args], cwd=workspace,
                   check=True, capture_output=True, env=child_env(HOME=str(workspace.parent / "home")), timeout=60)


def two_cited_files(tmp_path: Path) -> Path:
    """A real repository under ``tmp_path`` with ``src/retry.py`` and ``src/other.py`` committed and two Runtime
    entries citing them ("retry uses backoff" at ``src/retry.py:10-14``, "x is one" at ``src/other.py:1``);
    returns its work tree."""
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/retry.py": RETRY, "src/other.py": "x = 1\n"}, "retry")
    (tmp_path / "home").mkdir()
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "retry uses backoff", "--cite", "src/retry.py:10-14")
    ok(workspace, "runtime", "add", "--content", "x is one", "--cite", "src/other.py:1")
    return workspace


def test_a_renamed_cited_file_reads_renamed_with_its_new_path(tmp_path: Path) -> None:
    workspace = two_cited_files(tmp_path)

    git(workspace, "mv", "src/retry.py", "src/backoff.py")  # staged: `git status` says renamed
    git(workspace, "rm", "-q", "src/other.py")  # deleted, no rename: still gone
    wake = ok(workspace, "wake").splitlines()
    assert "[importance=normal; created=0d; updated=0d; cites src/retry.py:10-14: renamed to src/backoff.py]" in wake
    assert "[importance=normal; created=0d; updated=0d; cites src/other.py:1: gone]" in wake
    [entry] = [e for e in js(workspace, "runtime", "list")["entries"] if e["content"] == "retry uses backoff"]
    [cite] = entry["cites"]
    assert (cite["path"], cite["freshness"], cite["renamedTo"]) == ("src/retry.py", "renamed", "src/backoff.py")

    git(workspace, "commit", "-q", "-m", "rename")  # committed: found in HEAD's history
    (workspace / "src" / "backoff.py").write_text("new a\nnew b\n" + RETRY)
    wake = ok(workspace, "wake").splitlines()
    assert "[importance=normal; created=0d; updated=0d; cites src/retry.py:10-14: renamed to src/backoff.py:12-16]" \
        in wake
    review = js(workspace, "review")
    assert [[c["freshness"] for c in m["cites"]] for m in review["memories"]] == [["gone"]]  # renamed is not stale

    [key] = [m["key"] for r in js(workspace, "cited", "src/retry.py")["ranges"] for m in r["memories"]]
    done = json.loads(ok(workspace, "reanchor", "runtime", key, "--json"))
    assert done["reanchored"] == 1 and done["left"] == []
    assert [(c["path"], c["startLine"], c["endLine"], c["freshness"]) for c in done["cites"]] == [
        ("src/backoff.py", 12, 16, "fresh")]

    (workspace / "src" / "backoff.py").write_text("all new\n")  # renamed and the lines are nowhere in it
    ok(workspace, "runtime", "add", "--content", "retry max", "--cite", "src/backoff.py:1")
    git(workspace, "mv", "src/backoff.py", "src/policy.py")
    assert "cites src/backoff.py:1: renamed to src/policy.py]" in ok(workspace, "wake")
