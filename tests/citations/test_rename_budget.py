"""The rename table (:mod:`mnemon_ls.citations.renames`) walked up to 200 commits with no time bound, on the wake
path whenever a cited file is missing (over a second on a 3,000-file, 220-commit history: bench/results/
rename_table.md). It is now bounded by :data:`~mnemon_ls.citations.renames.BUDGET` (100 ms, 200 commits; the first
10 commits always searched); a table cut short says after how many commits, and a missing cited file found in no
rename of them reads ``gone (git's renames searched in the last N commits only)`` in the wake. Shown with a commit
budget (no timing) on a real repository renamed with the real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mnemon_ls.citations import freshness, renames
from mnemon_ls.citations.model import Citation, freshness_words, hash_lines
from mnemon_ls.citations.wakemarks import cite_mark
from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import child_env

BODY = "".join(f"line {n}\n" for n in range(1, 21))


def git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *args], cwd=workspace,
                   check=True, capture_output=True, env=child_env(HOME=str(workspace.parent / "home")), timeout=60)


@pytest.fixture()
def renamed_three_commits_ago(tmp_path: Path) -> Path:
    """A repository whose ``a.py`` became ``b.py`` in the 4th commit from HEAD (3 commits since edit ``c.py``)."""
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"a.py": BODY, "c.py": "c = 0\n"}, "files")
    (tmp_path / "home").mkdir()
    workspace = Path(repo.workdir)
    git(workspace, "mv", "a.py", "b.py")
    git(workspace, "commit", "-q", "-m", "rename")
    for n in range(1, 4):
        (workspace / "c.py").write_text(f"c = {n}\n")
        git(workspace, "commit", "-q", "-am", f"edit {n}")
    renames.clear()
    yield workspace
    renames.clear()


def test_a_commit_budget_cuts_the_table_short_and_the_wake_says_so(renamed_three_commits_ago: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = renamed_three_commits_ago
    cite = Citation("a.py", 2, 4, hash_lines(BODY.splitlines()[1:4]), None)

    monkeypatch.setattr(renames, "BUDGET", renames.Budget(seconds=3600, commits=3))
    assert renames.lookup(workspace, "a.py") == (None, 3)  # the rename is the 4th commit: not searched
    view = freshness.view(workspace, cite)
    assert (view["freshness"], view["renameSearchCut"]) == ("gone", 3), view
    assert cite_mark(view) == "a.py:2-4: gone (git's renames searched in the last 3 commits only)"

    monkeypatch.setattr(renames, "BUDGET", renames.Budget(seconds=3600, commits=4))  # a new budget: built again
    assert renames.lookup(workspace, "a.py") == ("b.py", 4)  # found; older history (2 commits) not searched
    view = freshness.view(workspace, cite)
    assert (view["freshness"], view["renamedTo"], "renameSearchCut" in view) == ("renamed", "b.py", False), view

    monkeypatch.setattr(renames, "BUDGET", renames.Budget(seconds=0, commits=200, always=1))  # no time: 1 commit
    assert renames.lookup(workspace, "a.py") == (None, 1)
    monkeypatch.setattr(renames, "BUDGET", renames.Budget(seconds=0, commits=200))  # the first 10 whatever the time
    assert renames.lookup(workspace, "a.py") == ("b.py", None)  # 6 commits: a loaded machine answers the same
    assert freshness_words({"freshness": "gone", "renameSearchCut": 1}) == (
        "gone (git's renames searched in the last 1 commit only)")


def test_the_whole_history_is_not_cut_short(renamed_three_commits_ago: Path) -> None:
    assert renames.BUDGET == renames.Budget(seconds=0.1, commits=renames.HISTORY, always=10)
    assert renames.lookup(renamed_three_commits_ago, "a.py") == ("b.py", None)
    assert renames.lookup(renamed_three_commits_ago, "never.py") == (None, None)  # 6 commits: all searched
    assert freshness_words({"freshness": "gone"}) == "gone"
