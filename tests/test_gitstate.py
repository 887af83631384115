"""Tests for mnemon_ls.gitstate against real repositories (no mocks).

Repositories are built with pygit2 in ``tmp_path`` (see ``gitrepo.py``). The
git CLI is used only where a state is produced by git itself and pygit2
cannot create it (a ``git rebase`` / ``git bisect`` stopped half-way); those
tests say so. Every probe goes through :func:`probe`, which also asserts that
nothing under ``tmp_path`` was created, removed or modified.
"""

from __future__ import annotations

import ast
import ctypes
import gc
import os
import pickle
import statistics
import sys
import time
from pathlib import Path

import pygit2
import pytest

from mnemon_ls import gitstate
from mnemon_ls.gitstate import BranchState, main_worktree_root, probe_branch

try:
    from tests import gitrepo
except ImportError:  # tests/ on sys.path (pytest "prepend" import mode)
    import gitrepo


def probe(path, root: Path) -> BranchState:
    """probe_branch(path), asserting it (and main_worktree_root) wrote nothing under root."""
    before = gitrepo.snapshot(root)
    state = probe_branch(path)
    main_worktree_root(path)
    after = gitrepo.snapshot(root)
    assert after == before, "probe wrote to disk"
    return state


def short(oid) -> str:
    return str(oid)[:7]


# --------------------------------------------------------------- plain branches


def test_branch_main(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo")
    top = str(tmp_path / "repo")
    assert probe(top, tmp_path) == BranchState(
        branch="main",
        detached=False,
        reason=None,
        head=short(repo.head.target),
        git_dir=os.path.join(top, ".git"),
        common_dir=os.path.join(top, ".git"),
        workdir=top,
    )
    assert probe(Path(top), tmp_path).describe() == "main"


def test_branch_name_with_slashes(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo")
    gitrepo.create_branch(repo, "feature/deep/x")
    gitrepo.switch(repo, "feature/deep/x")
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == ("feature/deep/x", False, None)
    assert state.describe() == "feature/deep/x"


def test_subdirectory_of_working_tree(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo")
    gitrepo.commit_files(repo, {"src/pkg/mod.py": "x = 1\n"}, "add module")
    state = probe(tmp_path / "repo" / "src" / "pkg", tmp_path)
    assert state.branch == "main"
    assert state.head == short(repo.head.target)
    assert state.workdir == str(tmp_path / "repo")
    assert state.git_dir == str(tmp_path / "repo" / ".git")


def test_file_path_uses_its_directory(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    state = probe(tmp_path / "repo" / "file.txt", tmp_path)
    assert (state.branch, state.workdir) == ("main", str(tmp_path / "repo"))


def test_path_inside_git_dir(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    state = probe(tmp_path / "repo" / ".git" / "refs", tmp_path)
    assert (state.branch, state.reason) == ("main", None)


def test_symlinked_workspace_reports_real_paths(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    (tmp_path / "link").symlink_to(tmp_path / "repo")
    state = probe(tmp_path / "link", tmp_path)
    assert (state.branch, state.workdir) == ("main", str(tmp_path / "repo"))


def test_unborn_branch(tmp_path):
    gitrepo.init_repo(tmp_path / "fresh", initial_head="trunk")
    state = probe(tmp_path / "fresh", tmp_path)
    assert (state.branch, state.detached, state.reason, state.head) == ("trunk", False, "unborn", None)
    assert state.describe() == "trunk (unborn)"
    assert state.workdir == str(tmp_path / "fresh")


def test_detached_head(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo", commits=2)
    first = repo.head.peel(pygit2.Commit).parents[0].id
    repo.set_head(first)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason, state.head) == (
        None,
        True,
        f"detached at {short(first)}",
        short(first),
    )
    assert state.describe() == f"no branch: detached at {short(first)}"


def test_bare_repository(tmp_path):
    repo = gitrepo.init_repo(tmp_path / "bare.git", bare=True)
    tree = repo.TreeBuilder().write()
    oid = repo.create_commit("refs/heads/main", gitrepo.SIG, gitrepo.SIG, "c", tree, [])
    state = probe(tmp_path / "bare.git", tmp_path)
    assert (state.branch, state.reason, state.head) == ("main", None, short(oid))
    assert (state.workdir, state.git_dir) == (None, str(tmp_path / "bare.git"))
    assert main_worktree_root(tmp_path / "bare.git") is None


# ------------------------------------------------------------------- rebases


def _topic_and_main(path: Path) -> tuple[pygit2.Repository, pygit2.Oid, pygit2.Oid]:
    """main and topic diverge on file.txt; HEAD on topic. Returns (repo, main_tip, topic_tip)."""
    repo = gitrepo.make_repo(path)
    gitrepo.create_branch(repo, "topic")
    main_tip = gitrepo.commit_files(repo, {"file.txt": "main side\n"}, "main change")
    gitrepo.switch(repo, "topic")
    topic_tip = gitrepo.commit_files(repo, {"file.txt": "topic side\n"}, "topic change")
    return repo, main_tip, topic_tip


def test_rebase_merge_state_as_git_writes_it(tmp_path):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    gitrepo.detach(repo, main_tip)
    gitrepo.write_rebase_merge(Path(repo.path), "refs/heads/topic", main_tip, topic_tip)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason, state.head) == (
        "topic",
        True,
        "rebase in progress",
        short(main_tip),
    )
    assert state.describe() == "topic (rebase in progress)"


def test_rebase_apply_state_as_git_writes_it(tmp_path):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    gitrepo.create_branch(repo, "feature/x", topic_tip)
    gitrepo.detach(repo, main_tip)
    gitrepo.write_rebase_apply(Path(repo.path), "refs/heads/feature/x", main_tip, topic_tip)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == ("feature/x", True, "rebase in progress")
    assert state.describe() == "feature/x (rebase in progress)"


def test_rebase_of_a_detached_head_has_no_branch(tmp_path):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    gitrepo.detach(repo, main_tip)
    gitrepo.write_rebase_merge(Path(repo.path), "detached HEAD", main_tip, topic_tip)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == (None, True, "rebase in progress")
    assert state.describe() == "no branch: rebase in progress"


def test_git_am_state_is_not_a_rebase(tmp_path):
    # `git am` also uses rebase-apply/, marked by an `applying` file; HEAD stays on the branch.
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    gitrepo.write_rebase_apply(Path(repo.path), "", main_tip, topic_tip, am=True)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == ("topic", False, None)


def test_rebase_state_with_head_attached_keeps_heads_branch(tmp_path):
    # Documented policy: an attached HEAD is authoritative for the branch,
    # the rebase only shows in the reason.
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    gitrepo.write_rebase_merge(Path(repo.path), "refs/heads/main", main_tip, topic_tip)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == ("topic", False, "rebase in progress")


def test_probe_never_mixes_head_and_rebase_state_read_on_both_sides_of_a_git_command(tmp_path, monkeypatch):
    """A probe reads HEAD, then rebase-merge/: a git command landing between the two reads must not
    yield a state the repository never was in. ``git rebase --abort`` attaches HEAD, then removes
    rebase-merge/; read across it, the detached HEAD of the stopped rebase and the missing rebase state
    gave ``(None, detached, "detached at <sha>")`` (the language server announced it as a branch change).
    The real git command runs at exactly that point of the probe (the language server's watcher probes
    while git runs; this only fixes the moment)."""
    _topic_and_main(tmp_path / "repo")
    result = gitrepo.git_cli(tmp_path / "repo", "rebase", "--merge", "main", check=False)
    assert result.returncode != 0, result.stdout + result.stderr
    real_rebase_state = gitstate._rebase_state
    ran: list = []

    def abort_in_between(gitdir: str):
        if not ran:  # the first read of the rebase state only: HEAD was read just before
            ran.append(gitrepo.git_cli(tmp_path / "repo", "rebase", "--abort"))
        return real_rebase_state(gitdir)

    monkeypatch.setattr(gitstate, "_rebase_state", abort_in_between)
    state = probe_branch(tmp_path / "repo")
    assert ran and ran[0].returncode == 0, ran
    assert (state.branch, state.detached, state.reason) == ("topic", False, None)


@pytest.mark.parametrize(("backend_flag", "state_dir"), [("--merge", "rebase-merge"), ("--apply", "rebase-apply")])
def test_real_git_rebase_stopped_on_conflict(tmp_path, backend_flag, state_dir):
    # git CLI on purpose: pygit2's Rebase API keeps its state in memory and on
    # its own terms; only git itself can produce a genuine stopped `git rebase`.
    repo, main_tip, _topic_tip = _topic_and_main(tmp_path / "repo")
    result = gitrepo.git_cli(tmp_path / "repo", "rebase", backend_flag, "main", check=False)
    assert result.returncode != 0, result.stdout + result.stderr
    assert (Path(repo.path) / state_dir / "head-name").read_text() == "refs/heads/topic\n"
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason, state.head) == (
        "topic",
        True,
        "rebase in progress",
        short(main_tip),
    )
    gitrepo.git_cli(tmp_path / "repo", "rebase", "--abort")
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == ("topic", False, None)


# -------------------------------------------------------------------- bisect


def test_bisect_started_from_branch(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo", commits=3)
    middle = repo.head.peel(pygit2.Commit).parents[0].id
    gitrepo.write_bisect_start(Path(repo.path), "main")
    gitrepo.detach(repo, middle)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason, state.head) == (
        "main",
        True,
        "bisect in progress",
        short(middle),
    )
    assert state.describe() == "main (bisect in progress)"


def test_bisect_started_from_detached_head(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo", commits=3)
    tip = repo.head.target
    middle = repo.head.peel(pygit2.Commit).parents[0].id
    gitrepo.write_bisect_start(Path(repo.path), str(tip))
    gitrepo.detach(repo, middle)
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == (None, True, f"detached at {short(middle)}")


def test_bisect_started_head_still_on_branch(tmp_path):
    # `git bisect start` without revisions leaves HEAD on the branch.
    repo = gitrepo.make_repo(tmp_path / "repo")
    gitrepo.write_bisect_start(Path(repo.path), "main")
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.reason) == ("main", False, "bisect in progress")


def test_real_git_bisect(tmp_path):
    # git CLI on purpose: bisection is a git porcelain feature pygit2 does not have.
    repo = gitrepo.make_repo(tmp_path / "repo", commits=5)
    first = list(repo.walk(repo.head.target))[-1].id
    work = tmp_path / "repo"
    gitrepo.git_cli(work, "bisect", "start")
    gitrepo.git_cli(work, "bisect", "bad")
    gitrepo.git_cli(work, "bisect", "good", str(first))
    assert (Path(repo.path) / "BISECT_START").read_text() == "main\n"
    head = (Path(repo.path) / "HEAD").read_text().strip()
    state = probe(work, tmp_path)
    assert (state.branch, state.detached, state.reason, state.head) == ("main", True, "bisect in progress", head[:7])
    gitrepo.git_cli(work, "bisect", "reset")
    assert (probe(work, tmp_path).branch, probe(work, tmp_path).reason) == ("main", None)


# ----------------------------------------------------------------- worktrees


def test_linked_worktree(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "main")
    gitrepo.add_worktree(repo, "wt1", tmp_path / "wt", "feature/wt")
    state = probe(tmp_path / "wt", tmp_path)
    common = str(tmp_path / "main" / ".git")
    assert state == BranchState(
        branch="feature/wt",
        detached=False,
        reason=None,
        head=short(repo.head.target),
        git_dir=os.path.join(common, "worktrees", "wt1"),
        common_dir=common,
        workdir=str(tmp_path / "wt"),
    )
    (tmp_path / "wt" / "sub").mkdir()
    assert probe(tmp_path / "wt" / "sub", tmp_path).branch == "feature/wt"
    # the main working tree is unaffected
    assert probe(tmp_path / "main", tmp_path).branch == "main"


def test_main_worktree_root(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "main")
    (tmp_path / "main" / "sub").mkdir()
    gitrepo.add_worktree(repo, "wt1", tmp_path / "wt", "other")
    assert main_worktree_root(tmp_path / "wt") == tmp_path / "main"
    assert main_worktree_root(str(tmp_path / "wt")) == tmp_path / "main"
    assert main_worktree_root(tmp_path / "main" / "sub") == tmp_path / "main"
    assert main_worktree_root(tmp_path / "main") == tmp_path / "main"
    (tmp_path / "plain").mkdir()
    assert main_worktree_root(tmp_path / "plain") is None
    assert main_worktree_root(None) is None
    assert main_worktree_root(tmp_path / "missing") is None


def test_worktree_of_bare_repository_has_no_main_root(tmp_path):
    bare = gitrepo.init_repo(tmp_path / "bare.git", bare=True)
    tree = bare.TreeBuilder().write()
    bare.create_commit("refs/heads/main", gitrepo.SIG, gitrepo.SIG, "c", tree, [])
    bare.add_worktree("w", str(tmp_path / "w"), bare.branches.local["main"])
    state = probe(tmp_path / "w", tmp_path)
    assert (state.branch, state.workdir, state.common_dir) == ("main", str(tmp_path / "w"), str(tmp_path / "bare.git"))
    assert main_worktree_root(tmp_path / "w") is None


def test_worktree_rebase_state_comes_from_its_own_git_dir(tmp_path):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "main")
    gitrepo.switch(repo, "main")
    gitrepo.add_worktree(repo, "wt1", tmp_path / "wt", "topic")
    wt_repo = pygit2.Repository(str(tmp_path / "wt"))
    wt_git_dir = Path(wt_repo.path)
    assert wt_git_dir == tmp_path / "main" / ".git" / "worktrees" / "wt1"
    gitrepo.detach(wt_repo, main_tip)
    gitrepo.write_rebase_merge(wt_git_dir, "refs/heads/topic", main_tip, topic_tip)
    wt_state = probe(tmp_path / "wt", tmp_path)
    assert (wt_state.branch, wt_state.detached, wt_state.reason) == ("topic", True, "rebase in progress")
    main_state = probe(tmp_path / "main", tmp_path)
    assert (main_state.branch, main_state.reason) == ("main", None)


def test_main_repo_rebase_state_does_not_leak_into_worktree(tmp_path):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "main")
    gitrepo.switch(repo, "main")
    gitrepo.add_worktree(repo, "wt1", tmp_path / "wt", "topic")
    gitrepo.detach(repo, main_tip)
    gitrepo.write_rebase_apply(Path(repo.path), "refs/heads/main", main_tip, main_tip)
    gitrepo.write_bisect_start(Path(repo.path), "main")
    assert probe(tmp_path / "main", tmp_path).describe() == "main (rebase in progress)"
    wt_state = probe(tmp_path / "wt", tmp_path)
    assert (wt_state.branch, wt_state.detached, wt_state.reason) == ("topic", False, None)


# ------------------------------------------------------------ freshness


def test_head_changes_are_visible_on_the_next_call(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo")
    gitrepo.create_branch(repo, "other")
    top = tmp_path / "repo"
    assert probe(top, tmp_path).branch == "main"
    # checkout by "another process": a different Repository object
    other_process = pygit2.Repository(str(top))
    other_process.checkout("refs/heads/other")
    assert probe(top, tmp_path).branch == "other"
    # raw write of HEAD, same size as before would not matter either
    (top / ".git" / "HEAD").write_text(f"{repo.head.target}\n")
    assert probe(top, tmp_path).reason == f"detached at {short(repo.head.target)}"
    (top / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert probe(top, tmp_path).branch == "main"
    # a commit made elsewhere moves HEAD's sha
    new = gitrepo.commit_files(other_process, {"new.txt": "n\n"}, "elsewhere")
    assert probe(top, tmp_path).head == short(new)


def test_packed_ref_changes_are_visible(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo", commits=2)
    top = tmp_path / "repo"
    tip = repo.head.target
    parent = repo.head.peel(pygit2.Commit).parents[0].id
    repo.compress_references()  # git pack-refs --all
    packed = top / ".git" / "packed-refs"
    assert not (top / ".git" / "refs" / "heads" / "main").exists()
    assert probe(top, tmp_path).head == short(tip)
    packed.write_text(packed.read_text().replace(str(tip), str(parent)))
    assert probe(top, tmp_path).head == short(parent)


def test_rebase_and_bisect_state_rechecked_every_call(tmp_path):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    top = tmp_path / "repo"
    assert probe(top, tmp_path).describe() == "topic"
    gitrepo.detach(repo, main_tip)
    state_dir = gitrepo.write_rebase_merge(Path(repo.path), "refs/heads/topic", main_tip, topic_tip)
    assert probe(top, tmp_path).describe() == "topic (rebase in progress)"
    for child in state_dir.iterdir():
        child.unlink()
    state_dir.rmdir()
    assert probe(top, tmp_path).describe() == f"no branch: detached at {short(main_tip)}"
    gitrepo.write_bisect_start(Path(repo.path), "topic")
    assert probe(top, tmp_path).describe() == "topic (bisect in progress)"
    (Path(repo.path) / "BISECT_START").unlink()
    repo.set_head("refs/heads/topic")
    assert probe(top, tmp_path).describe() == "topic"


# ------------------------------------------------------------ failures


def test_not_a_repository(tmp_path):
    (tmp_path / "plain" / "deeper").mkdir(parents=True)
    for path in (tmp_path / "plain", tmp_path / "plain" / "deeper"):
        assert probe(path, tmp_path) == BranchState(branch=None, detached=False, reason="not a git repository")
    assert probe(tmp_path / "plain", tmp_path).describe() == "no branch: not a git repository"


def test_path_that_does_not_exist(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    for missing in (tmp_path / "nope", tmp_path / "repo" / "not" / "yet", tmp_path / "repo" / "file.txt" / "x"):
        state = probe(missing, tmp_path)
        assert (state.branch, state.reason) == (None, "not a git repository")


@pytest.mark.parametrize("empty", [None, ""])
def test_no_workspace_path(tmp_path, empty):
    assert probe(empty, tmp_path) == BranchState(branch=None, detached=False, reason="no workspace path")
    assert probe_branch(empty).describe() == "no branch: no workspace path"
    assert main_worktree_root(empty) is None


def test_corrupt_head_contents(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    (tmp_path / "repo" / ".git" / "HEAD").write_text("this is not a ref\n")
    state = probe(tmp_path / "repo", tmp_path)
    assert (state.branch, state.detached, state.head) == (None, False, None)
    assert state.reason == "corrupt repository: HEAD: corrupted loose reference file: HEAD"
    assert state.describe().startswith("no branch: corrupt repository: ")


def test_corrupt_branch_ref(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    (tmp_path / "repo" / ".git" / "refs" / "heads" / "main").write_text("garbage\n")
    state = probe(tmp_path / "repo", tmp_path)
    assert state.branch is None
    assert state.reason.startswith("corrupt repository: ")
    assert "refs/heads/main" in state.reason


def test_gitfile_pointing_nowhere(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {tmp_path / 'vanished' / '.git'}\n")
    state = probe(work, tmp_path)
    assert state == BranchState(
        branch=None,
        detached=False,
        reason=f"corrupt repository: {work / '.git'} points to missing git dir {tmp_path / 'vanished' / '.git'}",
    )


def test_gitfile_malformed(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text("not a gitfile\n")
    state = probe(work, tmp_path)
    assert state.branch is None
    assert state.reason.startswith("corrupt repository: ")
    assert "malformed" in state.reason


def test_git_dir_without_head(tmp_path):
    gitrepo.make_repo(tmp_path / "repo")
    (tmp_path / "repo" / ".git" / "HEAD").unlink()
    (tmp_path / "repo" / "sub").mkdir()
    expected = f"corrupt repository: {tmp_path / 'repo' / '.git'} has no HEAD"
    assert probe(tmp_path / "repo", tmp_path).reason == expected
    assert probe(tmp_path / "repo" / "sub", tmp_path).reason == expected


def test_broken_nested_gitfile_is_not_attributed_to_the_enclosing_repo(tmp_path):
    gitrepo.make_repo(tmp_path / "outer")
    inner = tmp_path / "outer" / "inner"
    inner.mkdir()
    (inner / ".git").write_text("gitdir: ../../nowhere\n")
    state = probe(inner, tmp_path)
    assert state == BranchState(
        branch=None,
        detached=False,
        reason=f"corrupt repository: {inner / '.git'} points to missing git dir {tmp_path / 'nowhere'}",
    )
    assert main_worktree_root(inner) is None


def test_broken_nested_git_dir_is_not_attributed_to_the_enclosing_repo(tmp_path):
    # libgit2 (like git) silently skips a .git directory without HEAD and
    # would report the enclosing repository's branch for the inner workspace.
    gitrepo.make_repo(tmp_path / "outer")
    inner = tmp_path / "outer" / "inner"
    gitrepo.make_repo(inner)
    (inner / ".git" / "HEAD").unlink()
    (inner / "src").mkdir()
    expected = BranchState(branch=None, detached=False, reason=f"corrupt repository: {inner / '.git'} has no HEAD")
    assert probe(inner, tmp_path) == expected
    assert probe(inner / "src", tmp_path) == expected
    assert main_worktree_root(inner / "src") is None
    assert probe(tmp_path / "outer", tmp_path).branch == "main"


# ---------------------------------------------------------- permissions

_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2


def _drop_dac_capabilities() -> None:
    """Make file permission bits apply to root (capset(2) on this process only)."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    libc = ctypes.CDLL(None, use_errno=True)
    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    mask = ~((1 << _CAP_DAC_OVERRIDE) | (1 << _CAP_DAC_READ_SEARCH)) & 0xFFFFFFFF
    data[0].effective &= mask
    data[0].permitted &= mask
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def run_subject_to_permissions(fn):
    """Call fn() where chmod bits are enforced.

    Not root: in-process. Root bypasses permission bits, so as root fn runs in
    a forked child that first drops CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH; the
    (pickled) result comes back through a pipe. Skips only if the capability
    drop itself is impossible.
    """
    if os.geteuid() != 0:
        return fn()
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root and capability dropping is Linux-only; root ignores chmod")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_fd)
            try:
                _drop_dac_capabilities()
            except Exception as exc:
                payload = ("skip", f"running as root and cannot drop DAC capabilities: {exc}")
            else:
                payload = ("ok", fn())
        except BaseException as exc:
            payload = ("error", repr(exc))
        data = pickle.dumps(payload)
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
        os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "skip":
        pytest.skip(value)
    assert kind == "ok", value
    return value


@pytest.fixture
def restore_modes():
    changed: list[tuple[Path, int]] = []

    def chmod(path: Path, mode: int) -> None:
        changed.append((path, path.stat().st_mode & 0o7777))
        path.chmod(mode)

    yield chmod
    for path, mode in reversed(changed):
        path.chmod(mode)


def test_permission_denied_on_git_dir(tmp_path, restore_modes):
    gitrepo.make_repo(tmp_path / "repo")
    (tmp_path / "repo" / "sub").mkdir()
    restore_modes(tmp_path / "repo" / ".git", 0)
    before = gitrepo.snapshot(tmp_path)
    states = run_subject_to_permissions(
        lambda: [probe_branch(tmp_path / "repo"), probe_branch(tmp_path / "repo" / "sub"), main_worktree_root(tmp_path / "repo")]
    )
    assert gitrepo.snapshot(tmp_path) == before
    expected = f"permission denied: {tmp_path / 'repo' / '.git' / 'HEAD'}: Permission denied"
    assert states[0] == BranchState(branch=None, detached=False, reason=expected)
    assert states[1] == states[0]
    assert states[2] is None


def test_permission_denied_on_head_file(tmp_path, restore_modes):
    gitrepo.make_repo(tmp_path / "repo")
    restore_modes(tmp_path / "repo" / ".git" / "HEAD", 0)
    before = gitrepo.snapshot(tmp_path)
    state = run_subject_to_permissions(lambda: probe_branch(tmp_path / "repo"))
    assert gitrepo.snapshot(tmp_path) == before
    assert state.branch is None
    assert state.reason.startswith("permission denied: ")
    assert "HEAD" in state.reason


def test_permission_denied_on_workspace_dir(tmp_path, restore_modes):
    gitrepo.make_repo(tmp_path / "repo")
    restore_modes(tmp_path / "repo", 0o600)  # readable bits but not searchable
    state = run_subject_to_permissions(lambda: probe_branch(tmp_path / "repo"))
    assert state == BranchState(
        branch=None,
        detached=False,
        reason=f"permission denied: {tmp_path / 'repo' / '.git'}: Permission denied",
    )


def test_permission_denied_on_rebase_state(tmp_path, restore_modes):
    repo, main_tip, topic_tip = _topic_and_main(tmp_path / "repo")
    gitrepo.detach(repo, main_tip)
    state_dir = gitrepo.write_rebase_merge(Path(repo.path), "refs/heads/topic", main_tip, topic_tip)
    restore_modes(state_dir / "head-name", 0)
    state = run_subject_to_permissions(lambda: probe_branch(tmp_path / "repo"))
    assert state.branch is None
    assert state.reason == f"permission denied: {state_dir / 'head-name'}: Permission denied"
    assert state.git_dir == repo.path.rstrip("/")


def _safe_directory_configured() -> bool:
    for getter in (pygit2.Config.get_global_config, pygit2.Config.get_system_config):
        try:
            config = getter()
        except (OSError, pygit2.GitError):
            continue
        if "safe.directory" in config:
            return True
    return False


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a repository owned by another user")
def test_repository_owned_by_someone_else(tmp_path):
    if _safe_directory_configured():
        pytest.skip("safe.directory is configured globally, libgit2 would accept the repository")
    gitrepo.make_repo(tmp_path / "repo")
    for dirpath, dirnames, filenames in os.walk(tmp_path / "repo"):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.chown(name, 65534, 65534)
    state = probe(tmp_path / "repo", tmp_path)
    assert state.branch is None
    assert state.reason.startswith("permission denied: ")
    assert "not owned by current user" in state.reason


# --------------------------------------------------------------- misc


@pytest.mark.parametrize(
    ("state", "text"),
    [
        (BranchState("main", False, None), "main"),
        (BranchState("feature/x", True, "rebase in progress"), "feature/x (rebase in progress)"),
        (BranchState(None, True, "detached at abc1234"), "no branch: detached at abc1234"),
        (BranchState(None, False, None), "no branch"),
    ],
)
def test_describe(state, text):
    assert state.describe() == text


def test_branch_state_is_frozen():
    state = BranchState("main", False, None)
    with pytest.raises(AttributeError):
        state.branch = "other"  # type: ignore[misc]


@pytest.mark.parametrize("name", ["gitstate.py", "gitlocate.py", "gitworktree.py"])
def test_module_never_spawns_processes(name):
    tree = ast.parse((Path(gitstate.__file__).parent / name).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported.isdisjoint({"subprocess", "multiprocessing", "pty", "shutil"})
    called = {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    assert called.isdisjoint({"system", "popen", "spawnv", "execv", "fork"})


def test_no_refcount_damage_to_none(tmp_path):
    # pygit2 1.21's discover_repository() returns None without a new
    # reference; calling it on every miss eventually crashes CPython 3.11
    # ("none_dealloc"). Guard against reintroducing it.
    (tmp_path / "plain").mkdir()
    gitrepo.make_repo(tmp_path / "repo")
    paths = [tmp_path / "plain", tmp_path / "repo", tmp_path / "missing", None]
    gc.collect()
    before = sys.getrefcount(None)
    for _ in range(1000):
        for path in paths:
            probe_branch(path)
            main_worktree_root(path)
    gc.collect()
    assert sys.getrefcount(None) - before > -100


def test_probe_is_fast(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "repo", commits=3)
    gitrepo.add_worktree(repo, "wt", tmp_path / "wt", "wtb")
    for path in (tmp_path / "repo", tmp_path / "wt"):
        probe_branch(path)
        samples = []
        for _ in range(200):
            start = time.perf_counter_ns()
            probe_branch(path)
            samples.append(time.perf_counter_ns() - start)
        assert statistics.median(samples) < 1_000_000, f"median {statistics.median(samples) / 1000:.0f} us"
