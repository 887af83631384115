"""Build real git repositories for tests, with pygit2 only.

Everything here writes the same files git itself would write: commits go
through the index so the working tree, index and HEAD agree (a later
``git rebase`` from the CLI sees a clean tree), and the rebase/bisect state
helpers reproduce the files ``git rebase`` (merge and apply backends) and
``git bisect start`` leave in the worktree's git dir (file names and
newline-terminated contents checked against git 2.39).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pygit2

SIG = pygit2.Signature("Test Author", "author@example.com", 1_700_000_000, 0)

# Environment for the few tests that must drive the git CLI: no user or
# system config can change git's behaviour, and commits get a fixed identity.
GIT_ENV_OVERRIDES = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "LC_ALL": "C",
}


def init_repo(path: Path, initial_head: str = "main", *, bare: bool = False) -> pygit2.Repository:
    """``git init --initial-branch=<initial_head>`` (no commits: HEAD is unborn)."""
    return pygit2.init_repository(str(path), bare=bare, initial_head=initial_head)


def commit_files(repo: pygit2.Repository, files: dict[str, str], message: str) -> pygit2.Oid:
    """Write ``files`` into the working tree, stage them and commit on HEAD.

    Like ``git add <files> && git commit -m <message>``: the current branch
    (or the detached HEAD) advances and index/working tree match the commit.
    """
    workdir = Path(repo.workdir)
    for rel, content in files.items():
        target = workdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        repo.index.add(rel)
    repo.index.write()
    tree = repo.index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return repo.create_commit("HEAD", SIG, SIG, message, tree, parents)


def make_repo(path: Path, initial_head: str = "main", commits: int = 1) -> pygit2.Repository:
    """Non-bare repository on ``initial_head`` with ``commits`` commits."""
    repo = init_repo(path, initial_head)
    for n in range(commits):
        commit_files(repo, {"file.txt": f"version {n}\n"}, f"commit {n}")
    return repo


def create_branch(repo: pygit2.Repository, name: str, target: pygit2.Oid | None = None) -> pygit2.Branch:
    """``git branch <name> [<target>]`` (HEAD unchanged)."""
    commit = repo[target] if target is not None else repo.head.peel(pygit2.Commit)
    return repo.branches.local.create(name, commit)


def switch(repo: pygit2.Repository, name: str) -> None:
    """``git switch <name>``: update working tree, index and HEAD."""
    repo.checkout(f"refs/heads/{name}")


def detach(repo: pygit2.Repository, target: pygit2.Oid | None = None) -> pygit2.Oid:
    """``git switch --detach [<target>]``: HEAD becomes the bare commit id."""
    oid = target if target is not None else repo.head.target
    repo.checkout_tree(repo[oid])
    repo.set_head(oid)
    return oid


def add_worktree(repo: pygit2.Repository, name: str, path: Path, branch: str) -> pygit2.Worktree:
    """``git worktree add <path> <branch>`` (branch created from HEAD if missing)."""
    ref = repo.branches.local.get(branch) or create_branch(repo, branch)
    return repo.add_worktree(name, str(path), ref)


def _write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


def write_rebase_merge(git_dir: Path, head_name: str, onto: pygit2.Oid, orig_head: pygit2.Oid) -> Path:
    """State ``git rebase`` (merge backend, the default) leaves when it stops.

    ``head_name`` is the full ref being rebased (``refs/heads/topic``) or
    ``detached HEAD``. The caller detaches HEAD, as git does.
    """
    state = git_dir / "rebase-merge"
    state.mkdir()
    _write(state / "head-name", f"{head_name}\n")
    _write(state / "onto", f"{onto}\n")
    _write(state / "orig-head", f"{orig_head}\n")
    _write(state / "interactive", "")
    _write(state / "drop_redundant_commits", "")
    _write(state / "no-reschedule-failed-exec", "")
    _write(state / "git-rebase-todo", "")
    _write(state / "done", f"pick {orig_head} topic\n")
    _write(state / "msgnum", "1\n")
    _write(state / "end", "1\n")
    _write(state / "stopped-sha", f"{orig_head}\n")
    return state


def write_rebase_apply(git_dir: Path, head_name: str, onto: pygit2.Oid, orig_head: pygit2.Oid, *, am: bool = False) -> Path:
    """State of ``git rebase --apply`` (``rebasing`` marker) or of ``git am``
    (``applying`` marker, with ``am=True``) stopped on a patch."""
    state = git_dir / "rebase-apply"
    state.mkdir()
    if not am:
        _write(state / "head-name", f"{head_name}\n")
        _write(state / "onto", f"{onto}\n")
        _write(state / "orig-head", f"{orig_head}\n")
        _write(state / "abort-safety", f"{onto}\n")
    _write(state / ("applying" if am else "rebasing"), "")
    _write(state / "next", "1\n")
    _write(state / "last", "1\n")
    _write(state / "utf8", "t\n")
    _write(state / "keep", "f\n")
    _write(state / "quiet", "f\n")
    _write(state / "sign", "\n")
    _write(state / "threeway", "t\n")
    return state


def write_bisect_start(git_dir: Path, started_from: str) -> None:
    """Files ``git bisect start`` writes: BISECT_START holds the short branch
    name it was started from, or the full commit id when HEAD was detached."""
    _write(git_dir / "BISECT_START", f"{started_from}\n")
    _write(git_dir / "BISECT_NAMES", "\n")
    _write(git_dir / "BISECT_LOG", "git bisect start\n")


def git_cli(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the git CLI in isolation (tests only: for states pygit2 cannot make)."""
    git = shutil.which("git")
    if git is None:  # pragma: no cover - depends on the machine
        import pytest

        pytest.skip("git CLI not installed")
    env = {**os.environ, **GIT_ENV_OVERRIDES, "HOME": str(cwd)}
    return subprocess.run([git, *args], cwd=cwd, env=env, check=check, capture_output=True, text=True)


def cli_repo(path: Path) -> Path:
    """``path`` (created) as a repository the git CLI made: branch ``main`` and one commit of ``a.txt``
    (``"one\n"``); returns ``path``."""
    path.mkdir()
    git_cli(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("one\n")
    git_cli(path, "add", "a.txt")
    git_cli(path, "commit", "-q", "-m", "first")
    return path


def snapshot(root: Path) -> dict[str, tuple[int, int, int, int]]:
    """Every entry below ``root`` (and ``root`` itself) -> (mode, size, mtime_ns, ctime_ns).

    Directory mtimes catch created-then-deleted files (lock files); ctime
    catches chmod/rewrites. Access times are deliberately left out.
    """
    result: dict[str, tuple[int, int, int, int]] = {}

    def record(path: str) -> None:
        st = os.lstat(path)
        size = 0 if stat.S_ISDIR(st.st_mode) else st.st_size
        result[os.path.relpath(path, root)] = (st.st_mode, size, st.st_mtime_ns, st.st_ctime_ns)

    record(str(root))
    for dirpath, dirnames, filenames in os.walk(root, onerror=None):
        for name in dirnames + filenames:
            try:
                record(os.path.join(dirpath, name))
            except PermissionError:  # pragma: no cover - unreadable test dirs
                pass
    return result
