"""Branch changes made by real git operations on a real repository while the server runs.

Each change must arrive as exactly one ``mnemon/branchChanged {workspace, branch, detached, reason}``
(the server also sends ``previous``): the test waits for the notification announcing the state the git
operation leaves (the event itself, whatever the machine's load), then keeps counting for a bounded
window (:data:`WINDOW` seconds, a measurement) so a duplicate would show. The wake text afterwards must
follow the branch.

A git CLI operation passes through states a watcher can see: ``git rebase`` creates ``rebase-merge/``
while HEAD is still on the branch, then detaches HEAD; ``git rebase --abort`` attaches HEAD again, then
removes ``rebase-merge/``. Whether the server's short debounce sees such a state depends only on how fast
git runs (on a loaded machine it does), so those states are allowed, each at most once and in git's order,
before the final one; any other state, a repeated one or one after the final state fails the test.

Operations use pygit2 (``tests/gitrepo.py``), except the rebase: pygit2 1.21 exposes no rebase, and
hand-written ``rebase-merge/`` files would not reproduce what the watcher actually has to coalesce (git
writes the rebase state, detaches HEAD, rewrites the index and working tree and leaves conflict stages,
in several steps), so that test drives the git CLI in the isolated environment of ``git_cli``.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Callable

import pygit2
import pytest
from lsprotocol import types

from tests.gitrepo import add_worktree, commit_files, create_branch, detach, git_cli, make_repo, switch
from tests.lsp.conftest import BRANCH_CHANGED, REQUEST_TIMEOUT, Launcher, MnemonClient, folder, uri

WINDOW = 0.75
WORKSPACE = {"mnemon": {"storageScope": "workspace"}}


async def _one_change(client: MnemonClient, trigger: Callable[[], object]) -> dict:
    """Run ``trigger`` with the wait armed; return the single branchChanged it caused (fails on 0 or 2+)."""
    mark = client.mark()
    armed = client.expect(BRANCH_CHANGED)
    trigger()
    first = await client.received(armed)
    await client.quiet_window(WINDOW)
    assert client.notes_since(mark, BRANCH_CHANGED) == [first], "exactly one branchChanged per change"
    return first


async def _git_change(client: MnemonClient, trigger: Callable[[], object], final: dict,
                      passing: tuple[dict, ...] = ()) -> None:
    """Run ``trigger`` (a git CLI operation); wait for the branchChanged announcing ``final``, the state it
    leaves. Before it only states of ``passing`` (what git passes through, in git's order) may have been
    announced, each once; after it, nothing within :data:`WINDOW` (module doc)."""
    mark = client.mark()
    trigger()
    await client.note(BRANCH_CHANGED, lambda note: note == final, since=mark)
    await client.quiet_window(WINDOW)
    notes = client.notes_since(mark, BRANCH_CHANGED)
    allowed = [[*states, final] for n in range(len(passing) + 1) for states in itertools.combinations(passing, n)]
    assert notes in allowed, f"branchChanged {notes}; allowed: {allowed}"


async def _seed(client: MnemonClient) -> None:
    for content, branches in (("Shared fact", None), ("Main only fact", ["main"]), ("Topic only fact", ["topic"])):
        params = {"action": "add", "content": content}
        if branches:
            params["branches"] = branches
        await client.call("mnemon/runtime/mutate", params)


def _visible(wake: dict) -> list[str]:
    return [c for c in ("Shared fact", "Main only fact", "Topic only fact") if c in wake["text"]]


def _branch_line(wake: dict) -> str:
    """The ``Git branch:`` line (after the title, ``Revision:`` and ``Store revision:``)."""
    return wake["text"].splitlines()[3]


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim@v0.7"])
async def test_checkout_existing_branch(lsp: Launcher, caps: str, repo: pygit2.Repository, repo_dir: Path):
    create_branch(repo, "topic")
    client = await lsp.start(caps, [repo_dir], WORKSPACE)
    await _seed(client)
    note = await _one_change(client, lambda: switch(repo, "topic"))
    assert note == {"workspace": uri(repo_dir), "branch": "topic", "detached": False, "reason": None,
                    "previous": "main"}
    wake = await client.call("mnemon/wake", {})
    assert (wake["branch"], wake["hidden"], _visible(wake)) == ("topic", 1, ["Shared fact", "Topic only fact"])
    assert _branch_line(wake) == "Git branch: topic (1 branch-scoped entry hidden)"
    assert (await client.status())["workspaces"][0]["branch"] == "topic"

    back = await _one_change(client, lambda: switch(repo, "main"))
    assert (back["branch"], back["previous"]) == ("main", "topic")
    assert _visible(await client.call("mnemon/wake", {})) == ["Shared fact", "Main only fact"]


async def test_create_and_checkout_new_branch(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    await _seed(client)

    def create_and_switch() -> None:
        create_branch(repo, "feature/login")
        switch(repo, "feature/login")

    note = await _one_change(client, create_and_switch)
    assert note == {"workspace": uri(repo_dir), "branch": "feature/login", "detached": False, "reason": None,
                    "previous": "main"}
    wake = await client.call("mnemon/wake", {})
    assert _visible(wake) == ["Shared fact"]
    assert _branch_line(wake) == "Git branch: feature/login (2 branch-scoped entries hidden)"


async def test_detached_checkout(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    await _seed(client)
    sha7 = str(repo.head.target)[:7]
    note = await _one_change(client, lambda: detach(repo))
    assert note == {"workspace": uri(repo_dir), "branch": None, "detached": True,
                    "reason": f"detached at {sha7}", "previous": "main"}
    wake = await client.call("mnemon/wake", {})
    assert (wake["branch"], wake["branchReason"], _visible(wake)) == (None, f"detached at {sha7}", ["Shared fact"])
    assert _branch_line(wake) == (
        f"Git branch: none (detached at {sha7}; 2 branch-scoped entries hidden until a branch is known)")


async def test_rebase_stopped_on_a_conflict(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    base = repo.head.target
    commit_files(repo, {"file.txt": "changed on main\n"}, "main change")
    create_branch(repo, "topic", base)
    switch(repo, "topic")
    commit_files(repo, {"file.txt": "changed on topic\n"}, "topic change")
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    await _seed(client)

    topic = {"workspace": uri(repo_dir), "branch": "topic", "previous": "topic"}
    # rebase-merge/ exists while HEAD is still on topic: git's first step, and the last one of --abort
    on_topic_rebasing = topic | {"detached": False, "reason": "rebase in progress"}
    outcome: list = []
    await _git_change(client, lambda: outcome.append(git_cli(repo_dir, "rebase", "main", check=False)),
                      topic | {"detached": True, "reason": "rebase in progress"}, passing=(on_topic_rebasing,))
    assert outcome[0].returncode == 1 and "CONFLICT" in outcome[0].stdout + outcome[0].stderr
    assert (repo_dir / ".git" / "rebase-merge").is_dir()
    wake = await client.call("mnemon/wake", {})
    assert _visible(wake) == ["Shared fact", "Topic only fact"]
    assert _branch_line(wake) == "Git branch: topic (rebase in progress; 1 branch-scoped entry hidden)"

    await _git_change(client, lambda: git_cli(repo_dir, "rebase", "--abort"),
                      topic | {"detached": False, "reason": None}, passing=(on_topic_rebasing,))


async def test_worktree_added_then_opened(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path, tmp_path: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE)
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Feature only fact",
                                                "branches": ["feature"]})
    worktree = tmp_path / "feature-wt"

    mark = client.mark()
    add_worktree(repo, "feature-wt", worktree, "feature")
    await client.quiet_window(WINDOW)  # the main folder's HEAD did not move: nothing to announce
    assert client.notes_since(mark) == []

    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
        event=types.WorkspaceFoldersChangeEvent(added=[folder(worktree)], removed=[])))
    status = await client.eventually("mnemon/status", {}, lambda s: len(s["workspaces"]) == 2)
    await client.status()
    row = {r["uri"]: r for r in status["workspaces"]}[uri(worktree)]
    assert (row["branch"], row["root"]) == ("feature", str(repo_dir / ".mnemon")), "worktrees share the root"
    wake = await client.call("mnemon/wake", {"workspace": uri(worktree)})
    assert _branch_line(wake) == "Git branch: feature" and "Feature only fact" in wake["text"]
    assert "Feature only fact" not in (await client.call("mnemon/wake", {"workspace": uri(repo_dir)}))["text"]
    assert client.notes_since(mark) == [], "opening a folder is not a branch change"

    linked = pygit2.Repository(str(worktree))
    create_branch(linked, "feature-2")
    note = await _one_change(client, lambda: switch(linked, "feature-2"))
    assert note == {"workspace": uri(worktree), "branch": "feature-2", "detached": False, "reason": None,
                    "previous": "feature"}
    assert (await client.call("mnemon/wake", {"workspace": uri(repo_dir)}))["branch"] == "main"


async def test_git_init_in_plain_folder(lsp: Launcher, tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    client = await lsp.start("visual-studio-code", [plain], WORKSPACE)
    assert (await client.status())["workspaces"][0]["branchReason"] == "not a git repository"
    staging = tmp_path / "staging"
    make_repo(staging, "main")  # the repository appears whole (a rename): on a loaded machine the probe could
    # land between pygit2 creating .git and writing HEAD, a transient "has no HEAD" state this test is not about
    note = await _one_change(client, lambda: (staging / ".git").rename(plain / ".git"))
    assert note == {"workspace": uri(plain), "branch": "main", "detached": False, "reason": None, "previous": None}


async def test_checkout_before_watchers_are_armed(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    """A checkout between ``initialize`` (which probes the branch) and the watchers being armed (after the
    client answered ``workspace/configuration``, held back here) is still announced, once."""
    create_branch(repo, "topic")
    client = await lsp.start("visual-studio-code", [repo_dir], WORKSPACE, ready=False, hold_configuration=True)
    await asyncio.wait_for(client.config_asked.wait(), REQUEST_TIMEOUT)
    mark = client.mark()
    armed = client.expect(BRANCH_CHANGED)
    switch(repo, "topic")  # after initialize probed "main", before the watchers exist
    client.config_gate.set()
    note = await client.received(armed)
    assert note == {"workspace": uri(repo_dir), "branch": "topic", "detached": False, "reason": None,
                    "previous": "main"}
    await client.quiet_window(WINDOW)
    assert client.notes_since(mark, BRANCH_CHANGED) == [note]
    assert (await client.status())["workspaces"][0]["branch"] == "topic"


async def test_status_and_code_actions_follow_a_checkout(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    """The branch the server tracks follows git without any notification being involved."""
    create_branch(repo, "topic")
    client = await lsp.start("neovim@v0.7", [repo_dir], WORKSPACE)
    switch(repo, "topic")
    status = await client.eventually("mnemon/status", {}, lambda s: s["workspaces"][0]["branch"] == "topic")
    assert (status["workspaces"][0]["detached"], status["workspaces"][0]["branchReason"]) == (False, None)
    source = repo_dir / "notes.md"
    source.write_text("remember this line\n")
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri(source), language_id="markdown", version=1, text="remember this line\n")))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri(source)), types.Range(types.Position(0, 0), types.Position(0, 18)),
        types.CodeActionContext(diagnostics=[])))
    assert [a.title for a in actions][:3] == ["Remember selection", "Remember selection for branch topic",
                                              "Show wake snapshot"]
    detach(repo)
    status = await client.eventually("mnemon/status", {}, lambda s: s["workspaces"][0]["detached"])
    assert status["workspaces"][0]["branch"] is None


async def test_exit_after_git_init_in_plain_folder(lsp: Launcher, tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    client = await lsp.start("visual-studio-code", [plain], WORKSPACE)
    make_repo(plain, "main")
    await client.eventually("mnemon/status", {}, lambda s: s["workspaces"][0]["branch"] == "main")
    await asyncio.wait_for(client.shutdown_async(None), REQUEST_TIMEOUT)
    client.exit(None)
    client.exited = True
    try:  # a server stuck on its watcher after `exit` never ends: waited for with the safety bound (the
        # editors give it 2 s, which a loaded machine exceeds; the bound only says "hung")
        code = await asyncio.wait_for(client._server.wait(), REQUEST_TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"the server did not exit within {REQUEST_TIMEOUT} s of `exit`") from None
    assert code == 0
