"""A long-lived process keeps its last branch probe of a workspace (:func:`mnemon_ls.gitstate.probe_branch`) while
the stat signature (:mod:`mnemon_ls.statsig`) of every file the probe read is the same, and never longer: a
``git checkout``, a commit, a detach, a rebase or bisect starting and ending, a branch packed away by ``git
pack-refs`` are each seen by the very next probe. Real repositories, the git CLI for what git does; ``RACY_NS`` is
0 here so that the memo is used on files git wrote moments ago (by default a file changed less than a second
ago is never trusted to keep its signature)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls import gitfiles, gitstate, statsig
from mnemon_ls.gitstate import probe_branch

try:
    from tests import gitrepo
except ImportError:  # tests/ on sys.path (pytest "prepend" import mode)
    import gitrepo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(statsig, "RACY_NS", 0)
    monkeypatch.setattr(gitstate, "_probes", {})
    return gitrepo.cli_repo(tmp_path / "work")


def kept(path: Path, monkeypatch: pytest.MonkeyPatch) -> gitstate.BranchState:
    """A probe that must answer from the memo (finding the repository again would raise)."""
    with monkeypatch.context() as patch:
        patch.setattr(gitfiles, "find", lambda _start: (_ for _ in ()).throw(AssertionError("probed again")))
        return probe_branch(path)


def test_the_probe_is_kept_while_nothing_changed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = probe_branch(repo)
    assert first.branch == "main" and kept(repo, monkeypatch) == first


def test_checkout_commit_detach_and_pack_refs_are_each_seen_next(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert probe_branch(repo).branch == "main"
    assert kept(repo, monkeypatch).branch == "main"
    gitrepo.git_cli(repo, "checkout", "-q", "-b", "topic")
    assert probe_branch(repo).branch == "topic"
    before = kept(repo, monkeypatch).head
    (repo / "a.txt").write_text("two\n")
    gitrepo.git_cli(repo, "commit", "-q", "-am", "second")
    moved = probe_branch(repo)
    assert moved.branch == "topic" and moved.head != before
    gitrepo.git_cli(repo, "pack-refs", "--all")  # the loose ref goes into packed-refs
    assert probe_branch(repo) == moved
    gitrepo.git_cli(repo, "checkout", "-q", "--detach")
    detached = probe_branch(repo)
    assert detached.detached and detached.branch is None
    gitrepo.git_cli(repo, "checkout", "-q", "main")
    assert probe_branch(repo).branch == "main"


def test_a_rebase_or_bisect_starting_and_ending_is_seen_next(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert probe_branch(repo).branch == "main" and kept(repo, monkeypatch).branch == "main"
    gitrepo.git_cli(repo, "bisect", "start")
    assert probe_branch(repo).reason == gitstate.REASON_BISECT
    assert kept(repo, monkeypatch).reason == gitstate.REASON_BISECT
    gitrepo.git_cli(repo, "bisect", "reset")
    assert probe_branch(repo).reason is None
    head = gitrepo.git_cli(repo, "rev-parse", "HEAD").stdout.strip()
    gitrepo.git_cli(repo, "checkout", "-q", "--detach")
    assert probe_branch(repo).branch is None
    gitrepo.write_rebase_merge(repo / ".git", "refs/heads/main", head, head)
    rebasing = probe_branch(repo)
    assert rebasing.reason == gitstate.REASON_REBASE and rebasing.branch == "main"
    (repo / ".git" / "rebase-merge" / "head-name").write_text("refs/heads/other\n")  # rewritten in place
    assert probe_branch(repo).branch == "other"
