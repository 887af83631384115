"""``git init`` of an open workspace folder while the server runs, then the first commit (real pygit2, no
rename trick): an attack pass found the server announcing the transient ``.git has no HEAD`` state it saw
between libgit2 creating ``.git`` and writing ``HEAD`` and never announcing anything again, because the folder
was watched for ``.git`` appearing but nothing inside ``.git`` was watched until a probe found a whole
repository.

The branch of an unborn repository is the name ``HEAD`` points at (``git status``: "No commits yet on main"),
announced with reason ``unborn``; the first commit (``refs/heads/main`` appears, ``HEAD`` is unchanged)
clears the reason. Synchronisation is on ``mnemon/branchChanged`` with a timeout, never a sleep.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

from tests.gitrepo import commit_files, init_repo
from tests.lsp.conftest import BRANCH_CHANGED, NOTIFY_TIMEOUT, Launcher, MnemonClient, uri


async def _announced(client: MnemonClient, predicate: Callable[[dict[str, Any]], bool],
                     timeout: float = NOTIFY_TIMEOUT) -> dict[str, Any]:
    """The latest ``mnemon/branchChanged`` once it satisfies ``predicate`` (the state the server settled on);
    fails after ``timeout`` seconds naming the last state announced."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        armed = client.expect(BRANCH_CHANGED)  # armed before looking, so nothing arrives unseen
        notes = client.notes_since(0, BRANCH_CHANGED)
        if notes and predicate(notes[-1]):
            return notes[-1]
        try:
            await asyncio.wait_for(armed, max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            raise AssertionError(f"the branch never settled; announced: {notes}") from None


async def test_git_init_then_first_commit_is_announced_with_the_real_branch(lsp: Launcher, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    client = await lsp.start("visual-studio-code", [plain], {"mnemon": {"storageScope": "workspace"}})
    assert (await client.status())["workspaces"][0]["branchReason"] == "not a git repository"

    repo = init_repo(plain, "trunk")  # `git init --initial-branch=trunk` in the open folder
    unborn = await _announced(client, lambda n: n["reason"] != "not a git repository"
                              and not str(n["reason"]).startswith("corrupt repository"))
    assert unborn == {"workspace": uri(plain), "branch": "trunk", "detached": False, "reason": "unborn",
                      "previous": unborn["previous"]}
    status = (await client.status())["workspaces"][0]
    assert (status["branch"], status["branchReason"]) == ("trunk", "unborn")

    commit_files(repo, {"README.md": "first\n"}, "first commit")  # HEAD unchanged, refs/heads/trunk appears
    first = await _announced(client, lambda n: n["reason"] is None)
    assert first == {"workspace": uri(plain), "branch": "trunk", "detached": False, "reason": None,
                     "previous": "trunk"}
    status = (await client.status())["workspaces"][0]
    assert (status["branch"], status["branchReason"], status["detached"]) == ("trunk", None, False)
    wake = await client.call("mnemon/wake", {})
    assert wake["branch"] == "trunk"


async def test_a_probe_that_saw_git_init_half_done_is_followed_by_the_real_branch(lsp: Launcher,
                                                                                  tmp_path: Path) -> None:
    """The transient state made deterministic: ``.git`` exists but holds nothing yet (where a probe lands
    between libgit2 creating the directory and writing ``HEAD``), announced as it is, then ``git init``
    completes in that directory: the server must follow to the unborn branch and then to the first commit."""
    plain = tmp_path / "plain"
    plain.mkdir()
    client = await lsp.start("neovim@v0.7", [plain], {"mnemon": {"storageScope": "workspace"}})
    (plain / ".git").mkdir()
    half = await _announced(client, lambda n: str(n["reason"]).endswith("has no HEAD"))
    assert half["reason"] == f"corrupt repository: {plain / '.git'} has no HEAD" and half["branch"] is None

    repo = init_repo(plain, "main")  # fills the existing .git
    unborn = await _announced(client, lambda n: n["reason"] == "unborn")
    assert (unborn["branch"], unborn["detached"]) == ("main", False)
    commit_files(repo, {"README.md": "first\n"}, "first commit")
    first = await _announced(client, lambda n: n["reason"] is None)
    assert (first["branch"], first["previous"]) == ("main", "main")
    assert (await client.status())["workspaces"][0]["branch"] == "main"
