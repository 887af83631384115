"""Read-only probe of "which git branch is this workspace on?".

Memory entries in mnemon-ls can be scoped to a git branch. This module answers,
for any directory inside a working tree, which branch that scope is, plus the
paths a file watcher needs to notice when the answer changes.

Sources of truth (all read, never written):

* ``HEAD`` of the worktree's git dir, read from the files for the common layouts
  (:mod:`mnemon_ls.gitfiles`: importing pygit2 costs more than the rest of an
  assistant's hook) and through pygit2/libgit2 for every other one (never a
  ``git`` subprocess). ``ref: refs/heads/<name>`` means on branch ``<name>``
  (possibly unborn: the ref does not exist yet); a bare object id means a
  detached HEAD.
* ``rebase-merge/head-name`` (merge/interactive backend of ``git rebase``) and
  ``rebase-apply/head-name`` (apply backend) in the worktree's git dir. Both hold
  the full ref being rebased (``refs/heads/topic``) or ``detached HEAD``. As in
  git's ``wt_status_get_state``, a ``rebase-apply`` directory that contains an
  ``applying`` file belongs to ``git am``, not to a rebase, and is ignored.
* ``BISECT_START`` in the worktree's git dir: git writes the short name of the
  branch ``git bisect start`` was run from (``main``), or the full hex object id
  when it was started from a detached HEAD.
* ``commondir`` in a linked worktree's git dir (``.git/worktrees/<name>``): path
  (relative to that git dir, or absolute) of the shared repository directory.

Every call re-reads these files, except that a probe of a common layout is kept
(``_probes``) while the stat signature of every file and directory it read is
unchanged (:mod:`mnemon_ls.statsig`), so a checkout made by another process is
visible on the very next call. Opening a repository with libgit2 costs a few
tens of microseconds, far below the 1 ms budget, so caching ``Repository``
objects was not worth its staleness risk.

Discovery walks upward from the given directory like git does (libgit2
``git_repository_open_ext`` search; it does not cross filesystem boundaries).
``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_CEILING_DIRECTORIES`` are deliberately
ignored: the workspace path is authoritative, not the server's environment.

Where the parts live: this module holds :class:`BranchState`, :func:`probe_branch`
and its memo, and the reading of HEAD, rebase and bisect state;
:mod:`mnemon_ls.gitlocate` finds and opens (libgit2) the repository containing a
directory; :mod:`mnemon_ls.gitworktree` answers the working-tree questions
(:func:`main_worktree_root`, :func:`working_tree_containing`,
:func:`tracked_files_under`, :func:`ignored_by_git`), re-exported here.

Errors never escape :func:`probe_branch`: a missing path, a directory outside
any repository, a broken repository or an unreadable one all come back as a
:class:`BranchState` with ``branch=None`` and a ``reason``.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass

from . import gitfiles, statsig
from .gitlocate import (
    REASON_NO_PATH,
    REASON_NOT_A_REPO,
    _classify,
    _common_dir,
    _locate,
    _Located,
    _Problem,
    _read_text,
    _repo_errors,
    _start,
    _strip_sep,
)
from .gitworktree import ignored_by_git, main_worktree_root, tracked_files_under, working_tree_containing

__all__ = [
    "BranchState",
    "probe_branch",
    "main_worktree_root",
    "working_tree_containing",
    "tracked_files_under",
    "ignored_by_git",
    "REASON_UNBORN",
    "REASON_REBASE",
    "REASON_BISECT",
    "REASON_NOT_A_REPO",
    "REASON_NO_PATH",
]

REASON_UNBORN = "unborn"
REASON_REBASE = "rebase in progress"
REASON_BISECT = "bisect in progress"

_HEADS = "refs/heads/"
_SHORT = 7
_HEX_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class BranchState:
    """Result of :func:`probe_branch`.

    Attributes:
        branch: short branch name memory is scoped to (``"main"``,
            ``"feature/x"``), or ``None`` when no branch can be known.
        detached: HEAD is detached (the normal case during a rebase or a
            bisect, which detach HEAD; ``False`` with reason
            ``"bisect in progress"`` right after ``git bisect start``, before
            git has checked anything out).
        reason: ``None`` for a plain branch, otherwise exactly one of
            ``"unborn"`` (branch has no commit yet; ``branch`` is set),
            ``"rebase in progress"`` (``branch`` is the branch being rebased,
            ``None`` when a detached HEAD is being rebased),
            ``"bisect in progress"`` (``branch`` is the branch the bisect
            started from), ``"detached at <sha7>"`` (``branch`` is ``None``;
            also used for a bisect started from a detached HEAD),
            ``"not a git repository"`` (also for a path that does not exist),
            ``"corrupt repository: <detail>"``, ``"permission denied: <detail>"``,
            ``"no workspace path"``.
        head: 7-character short id of HEAD's commit, ``None`` when unborn or
            unknown.
        git_dir: absolute path of this worktree's git dir (``<repo>/.git`` or,
            for a linked worktree, ``<repo>/.git/worktrees/<name>``); HEAD,
            rebase and bisect state live here. Watch it to notice changes.
        common_dir: absolute path of the shared git dir (the main repository's
            ``.git``; equal to ``git_dir`` outside linked worktrees).
        workdir: absolute path of this working tree's top level; ``None`` for
            a bare repository or when no repository was found.

    The three paths carry no trailing separator. They are filled whenever the
    repository could be opened, including when HEAD itself turned out to be
    corrupt or unreadable, so a watcher can notice the repository being
    repaired.
    """

    branch: str | None
    detached: bool
    reason: str | None
    head: str | None = None
    git_dir: str | None = None
    common_dir: str | None = None
    workdir: str | None = None

    def describe(self) -> str:
        """One human line: ``"main"``, ``"feature/x (rebase in progress)"``,
        ``"trunk (unborn)"`` or ``"no branch: detached at abc1234"``."""
        if self.branch is None:
            return f"no branch: {self.reason}" if self.reason else "no branch"
        if self.reason:
            return f"{self.branch} ({self.reason})"
        return self.branch


def _branch_from_refname(refname: str) -> str | None:
    """``refs/heads/x`` -> ``x``; ``detached HEAD`` / junk -> ``None``."""
    refname = refname.strip()
    if refname.startswith(_HEADS) and len(refname) > len(_HEADS):
        return refname[len(_HEADS) :]
    return None


def _rebase_state(gitdir: str) -> tuple[bool, str | None]:
    """``(in_progress, branch)`` from rebase-merge/ or rebase-apply/ in ``gitdir``."""
    merge_dir = os.path.join(gitdir, "rebase-merge")
    if os.path.isdir(merge_dir):
        head_name = _read_text(os.path.join(merge_dir, "head-name"))
        return True, _branch_from_refname(head_name) if head_name else None
    apply_dir = os.path.join(gitdir, "rebase-apply")
    if os.path.isdir(apply_dir) and not os.path.exists(os.path.join(apply_dir, "applying")):
        head_name = _read_text(os.path.join(apply_dir, "head-name"))
        return True, _branch_from_refname(head_name) if head_name else None
    return False, None


def probe_branch(path: str | os.PathLike[str] | None) -> BranchState:
    """Tell which branch the working tree containing ``path`` is on.

    ``path`` may be any directory inside a working tree (or a file, whose
    directory is used); the repository is discovered upward like git does.
    Linked worktrees are handled: HEAD, rebase and bisect state are read from
    the worktree's own git dir.

    Branch rules, in order:

    * a rebase in progress (``rebase-merge/`` or ``rebase-apply/`` without
      ``applying``): reason ``"rebase in progress"``; while HEAD is detached the
      branch comes from ``head-name`` (``refs/heads/`` stripped; ``None`` for
      ``detached HEAD``);
    * a bisect in progress (``BISECT_START``): reason ``"bisect in progress"``;
      while HEAD is detached the branch is ``BISECT_START``'s content, unless
      that is an object id (bisect started detached): then no branch and reason
      ``"detached at <sha7>"``;
    * HEAD names a branch with no commit: that branch, reason ``"unborn"``;
    * detached HEAD: no branch, reason ``"detached at <sha7>"``;
    * otherwise HEAD's branch with reason ``None``.

    When HEAD is attached to a branch during a rebase/bisect, HEAD's branch
    wins and only the reason reports the operation.

    Never raises for repository problems (missing path, not a repository,
    corrupt or unreadable repository): those come back as ``branch=None`` with
    a reason. Never writes to disk (no lock files, no config writes). An
    argument that is not a path at all raises ``TypeError`` (a caller bug).
    """
    try:
        start = _start(path)
    except _Problem as problem:
        return BranchState(branch=None, detached=False, reason=problem.reason)
    kept = _probes.get(start)
    if kept is not None and statsig.signature(kept[1]) == kept[2]:
        return kept[0]  # not one file the probe read has changed since
    files = gitfiles.find(start)
    if files is gitfiles.NOT_A_REPOSITORY:
        return BranchState(branch=None, detached=False, reason=REASON_NOT_A_REPO)
    located: _Located | None = None
    if files is None:
        try:
            located = _locate(start)
        except _Problem as problem:
            return BranchState(branch=None, detached=False, reason=problem.reason)
    # HEAD and the rebase/bisect state are separate files a running git command changes one after the
    # other (`git rebase --abort` attaches HEAD, then removes rebase-merge/): a state is only kept when
    # HEAD read the same before and after it, so it held at the moment the other files were read.
    head_path = os.path.join(files.gitdir if files is not None else located.gitdir, "HEAD")  # type: ignore[union-attr]
    memo = _memo_paths(start, files)  # (HEAD's bytes, the files a probe reads, their signature) or None
    for _attempt in range(_CONSISTENT_READS):
        before = _head_bytes(head_path)
        state = _probe_files(files, before) if files is not None else None
        if state is None:  # a HEAD only libgit2 reads right (it may have changed since the walk)
            if located is None:
                try:
                    located = _locate(start)
                except _Problem as problem:
                    return BranchState(branch=None, detached=False, reason=problem.reason)
            files = None
            state = _probe_located(located)
        if _head_bytes(head_path) == before:
            break
    if memo is not None and files is not None and memo[0] == before:
        with _probes_lock:
            if len(_probes) > 64:
                _probes.clear()
            _probes[start] = (state, memo[1], memo[2])
    return state


#: A long-lived process's last probe of each start directory: ``(state, the files it read, their stat signature
#: taken before reading them)`` (:mod:`mnemon_ls.statsig`); given again while the signature is the same.
_probes: dict[str, tuple[BranchState, tuple[str, ...], "statsig.Signature"]] = {}
_probes_lock = threading.Lock()


def _memo_paths(start: str,
                files: gitfiles.Repository | None) -> tuple[bytes, tuple[str, ...], "statsig.Signature"] | None:
    """``(HEAD's bytes, paths, signature)`` of every file and directory a probe of ``start`` by
    :mod:`mnemon_ls.gitfiles` reads or looks at (``start`` and its ``.git``, the git dir and its ``HEAD``, the
    common dir, its ``config``, ``objects``, ``refs``, ``packed-refs``, the branch's loose ref, the rebase and
    bisect files), with their signature taken before the probe reads them; ``None`` when the probe is not kept
    (the repository is not ``start``'s own ``.git``, libgit2 must read it, or a file changed moments ago)."""
    if files is None or files.workdir != start:
        return None
    gitdir, common = files.gitdir, files.common
    head = _head_bytes(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    # A file or directory created in or removed from a directory changes the directory's times: the git dir
    # stands for a rebase or bisect starting or ending, the common dir for objects/, refs/ and packed-refs.
    paths = [start, os.path.join(start, ".git"), gitdir, os.path.join(gitdir, "HEAD"),
             os.path.join(gitdir, "commondir"), os.path.join(gitdir, "BISECT_START"), common,
             os.path.join(common, "config"), os.path.join(common, "packed-refs")]
    for name in ("rebase-merge", "rebase-apply"):
        if os.path.isdir(os.path.join(gitdir, name)):
            paths += [os.path.join(gitdir, name), os.path.join(gitdir, name, "head-name"),
                      os.path.join(gitdir, name, "applying")]
    text = head.decode("utf-8", "replace")
    if text.startswith("ref: "):
        refname = text[len("ref: "):].strip()
        if not gitfiles._safe_ref(refname):
            return None
        paths.append(os.path.join(common, *refname.split("/")))
    signature = statsig.signature(paths)
    return None if signature is None else (head, tuple(paths), signature)


#: Reads of one probe while HEAD keeps changing under it (git is still running: its watcher probes again).
_CONSISTENT_READS = 5


def _head_bytes(path: str) -> bytes | None:
    """The raw content of a HEAD file (``None`` when unreadable), to tell whether HEAD moved."""
    try:
        return gitfiles.read_small(path)
    except OSError:
        return None


def _probe_files(repo: gitfiles.Repository, head: bytes | None) -> BranchState | None:
    """One read of :func:`probe_branch`'s state from the files (:mod:`mnemon_ls.gitfiles`); ``None`` when
    libgit2 must read HEAD."""
    if head is None:
        return None
    try:
        read = gitfiles.read_head(repo, head)
    except OSError:
        return None
    if read is None:
        return None
    detached, branch, oid, unborn = read
    return _with_operations(repo.gitdir, repo.common, repo.workdir, detached, branch, oid, unborn)


def _probe_located(located: _Located) -> BranchState:
    """One read of :func:`probe_branch`'s state for a repository libgit2 opened."""
    from pygit2.enums import ReferenceType

    repo = located.repo
    gitdir = located.gitdir
    workdir = None if repo.workdir is None else _strip_sep(repo.workdir)
    common = None
    try:
        common = _common_dir(gitdir)
        head_ref = repo.lookup_reference("HEAD")
        unborn = False
        oid = None
        if head_ref.type == ReferenceType.SYMBOLIC:
            refname = head_ref.target
            detached = False
            branch = refname[len(_HEADS) :] if refname.startswith(_HEADS) else refname
            try:
                oid = head_ref.resolve().target
            except KeyError:  # pygit2.NotFoundError: the branch ref does not exist yet
                unborn = True
        else:
            detached = True
            branch = None
            oid = head_ref.target
    except _repo_errors() as exc:
        return BranchState(branch=None, detached=False, reason=_classify(exc), git_dir=gitdir, common_dir=common,
                           workdir=workdir)
    return _with_operations(gitdir, common, workdir, detached, branch, None if oid is None else str(oid), unborn)


def _with_operations(gitdir: str, common: str, workdir: str | None, detached: bool, branch: str | None,
                     oid: str | None, unborn: bool) -> BranchState:
    """The state for a HEAD read as ``(detached, branch, oid, unborn)``, with the rebase and bisect rules of
    :func:`probe_branch` applied (their files read from ``gitdir``)."""
    short = None if oid is None else oid[:_SHORT]
    try:
        reason: str | None = None
        rebasing, rebase_branch = _rebase_state(gitdir)
        if rebasing:
            reason = REASON_REBASE
            if detached:
                branch = rebase_branch
        else:
            bisect_start = _read_text(os.path.join(gitdir, "BISECT_START"))
            if bisect_start is not None:
                started_from = bisect_start.strip()
                if not detached:
                    reason = REASON_BISECT
                elif started_from and not _HEX_OID.fullmatch(started_from):
                    branch = _branch_from_refname(started_from) or started_from
                    reason = REASON_BISECT
                else:
                    reason = f"detached at {short}"
            elif unborn:
                reason = REASON_UNBORN
            elif detached:
                reason = f"detached at {short}"
    except (OSError, ValueError) as exc:
        return BranchState(branch=None, detached=False, reason=_classify(exc), git_dir=gitdir, common_dir=common,
                           workdir=workdir)
    return BranchState(branch=branch, detached=detached, reason=reason, head=short, git_dir=gitdir,
                       common_dir=common, workdir=workdir)
