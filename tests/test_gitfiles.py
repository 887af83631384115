"""mnemon_ls.gitfiles: the common repository layouts read from their files give exactly libgit2's answer, the
unusual ones are left to libgit2, and a probe of a common layout does not import pygit2.

Each scenario is probed twice in this process: as the code runs (files first) and with
:func:`mnemon_ls.gitfiles.find` answering ``None`` (libgit2 alone, the code before the files path); the
:class:`~mnemon_ls.gitstate.BranchState`, :func:`~mnemon_ls.gitstate.main_worktree_root` and
:func:`~mnemon_ls.gitstate.working_tree_containing` must be equal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls import gitfiles, gitstate

try:
    from tests import gitrepo
except ImportError:  # tests/ on sys.path (pytest "prepend" import mode)
    import gitrepo


def answers(path: Path) -> tuple:
    return (gitstate.probe_branch(path), gitstate.main_worktree_root(path), gitstate.working_tree_containing(path))


def libgit2_answers(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    with monkeypatch.context() as patch:
        patch.setattr(gitfiles, "find", lambda start: None)
        return answers(path)


def _plain(tmp: Path) -> Path:
    gitrepo.make_repo(tmp / "repo")
    return tmp / "repo"


def _subdirectory(tmp: Path) -> Path:
    gitrepo.make_repo(tmp / "repo")
    (tmp / "repo" / "src" / "deep").mkdir(parents=True)
    return tmp / "repo" / "src" / "deep"


def _slashes(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo")
    gitrepo.create_branch(repo, "feature/x-1")
    gitrepo.switch(repo, "feature/x-1")
    return tmp / "repo"


def _unborn(tmp: Path) -> Path:
    gitrepo.init_repo(tmp / "repo", "trunk")
    return tmp / "repo"


def _detached(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo", commits=2)
    gitrepo.detach(repo)
    return tmp / "repo"


def _packed(tmp: Path) -> Path:
    gitrepo.make_repo(tmp / "repo")
    gitrepo.git_cli(tmp / "repo", "pack-refs", "--all")
    assert not (tmp / "repo" / ".git" / "refs" / "heads" / "main").exists()
    return tmp / "repo"


def _git_cli_repo(tmp: Path) -> Path:
    (tmp / "repo").mkdir()
    gitrepo.git_cli(tmp / "repo", "init", "-q", "-b", "dev")
    (tmp / "repo" / "a.txt").write_text("a\n")
    gitrepo.git_cli(tmp / "repo", "add", "a.txt")
    gitrepo.git_cli(tmp / "repo", "commit", "-qm", "a")
    return tmp / "repo"


def _worktree(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo")
    gitrepo.add_worktree(repo, "wt", tmp / "wt", "wtb")
    (tmp / "wt" / "sub").mkdir()
    return tmp / "wt" / "sub"


def _rebase(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo", commits=2)
    tip = repo.head.target
    gitrepo.detach(repo, tip)
    gitrepo.write_rebase_merge(Path(repo.path), "refs/heads/main", tip, tip)
    return tmp / "repo"


def _bisect(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo", commits=2)
    gitrepo.write_bisect_start(Path(repo.path), "main")
    gitrepo.detach(repo)
    return tmp / "repo"


def _not_a_repository(tmp: Path) -> Path:
    (tmp / "plain" / "sub").mkdir(parents=True)
    return tmp / "plain" / "sub"


COMMON = [_plain, _subdirectory, _slashes, _unborn, _detached, _packed, _git_cli_repo, _worktree, _rebase, _bisect]


def _bare(tmp: Path) -> Path:
    gitrepo.init_repo(tmp / "bare.git", bare=True)
    return tmp / "bare.git"


def _inside_git_dir(tmp: Path) -> Path:
    gitrepo.make_repo(tmp / "repo")
    return tmp / "repo" / ".git" / "refs"


def _core_worktree(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo")
    (tmp / "elsewhere").mkdir()
    repo.config["core.worktree"] = str(tmp / "elsewhere")
    return tmp / "repo"


def _corrupt_head(tmp: Path) -> Path:
    gitrepo.make_repo(tmp / "repo")
    (tmp / "repo" / ".git" / "HEAD").write_text("garbage\n")
    return tmp / "repo"


def _head_to_a_tag(tmp: Path) -> Path:
    repo = gitrepo.make_repo(tmp / "repo")
    (tmp / "repo" / ".git" / "refs" / "tags" / "v1").write_text(f"{repo.head.target}\n")
    (tmp / "repo" / ".git" / "HEAD").write_text("ref: refs/tags/v1\n")
    return tmp / "repo"


def _symlinked_dotgit(tmp: Path) -> Path:
    gitrepo.make_repo(tmp / "real")
    (tmp / "ws").mkdir()
    os.symlink(tmp / "real" / ".git", tmp / "ws" / ".git")
    return tmp / "ws"


def _broken_gitfile(tmp: Path) -> Path:
    (tmp / "ws").mkdir()
    (tmp / "ws" / ".git").write_text("gitdir: ../missing\n")
    return tmp / "ws"


UNUSUAL = [_bare, _inside_git_dir, _core_worktree, _corrupt_head, _head_to_a_tag, _symlinked_dotgit, _broken_gitfile]


@pytest.mark.parametrize("make", COMMON, ids=lambda f: f.__name__.strip("_"))
def test_common_layouts_are_read_from_the_files_with_libgit2s_answer(tmp_path, monkeypatch, make):
    path = make(tmp_path)
    found = gitfiles.find(os.path.realpath(path))
    assert found is not None and found is not gitfiles.NOT_A_REPOSITORY
    assert gitfiles.read_head(found) is not None
    assert answers(path) == libgit2_answers(path, monkeypatch)


def test_no_repository_is_known_without_libgit2(tmp_path, monkeypatch):
    path = _not_a_repository(tmp_path)
    if gitfiles.find(os.path.realpath(path)) is None:
        pytest.skip("the temp directory lies under a repository or a mount libgit2 would not cross")
    assert gitfiles.find(os.path.realpath(path)) is gitfiles.NOT_A_REPOSITORY
    assert answers(path) == libgit2_answers(path, monkeypatch) == (
        gitstate.BranchState(None, False, gitstate.REASON_NOT_A_REPO), None, None)


@pytest.mark.parametrize("make", UNUSUAL, ids=lambda f: f.__name__.strip("_"))
def test_unusual_layouts_are_left_to_libgit2(tmp_path, monkeypatch, make):
    path = make(tmp_path)
    found = gitfiles.find(os.path.realpath(path))
    assert found is None or gitfiles.read_head(found) is None
    assert answers(path) == libgit2_answers(path, monkeypatch)


@pytest.mark.parametrize("text, plain", [
    ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n", True),
    ("[core]\n\tbare = true\n", False),
    ("[core]\n\tbare\n", False),
    ("[core]\n\tworktree = /elsewhere\n", False),
    ("[extensions]\n\tworktreeConfig = true\n", False),
    ("[extensions]\n\trefStorage = reftable\n", False),
    ('[includeIf "gitdir:~/work/"]\n\tpath = ~/.gitconfig-work\n', False),
    ("# bare = true\n[core]\n\tbare = false ; comment\n", True),
])
def test_config_that_moves_the_tree_or_the_refs_is_left_to_libgit2(text, plain):
    assert gitfiles._plain_config(text) is plain


def test_a_probe_of_a_common_repository_does_not_import_pygit2(tmp_path):
    _git_cli_repo(tmp_path)
    code = ("import sys; from mnemon_ls import gitstate; "
            f"s = gitstate.probe_branch({str(tmp_path / 'repo')!r}); "
            f"m = gitstate.main_worktree_root({str(tmp_path / 'repo')!r}); "
            "print(s.branch, s.reason, m is not None, 'pygit2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["dev", "None", "True", "False"]
