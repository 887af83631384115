"""The cited-file watch of a long-lived host (issue 24 items 3 and 9), in process on real files with the real
watch (watchfiles, inotify): a citation view is trusted (answered with no system call) only once the watch stands
behind its directory, and a change the watch reports drops it, so the next view, and the next wake, see the
change. Each test waits for the watch's own events (armed, a change reported), never a fixed time."""

from __future__ import annotations

import os
import sys
import shutil
import threading
from pathlib import Path
from typing import Iterator

import pytest

from mnemon_ls.citations import freshness, trust
from mnemon_ls.citations.model import resolve
from mnemon_ls.citations.store import runtime_key
from mnemon_ls.citations.watch import CitedWatch
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.settings import load_settings
from tests.gitrepo import commit_files, make_repo

CODE = "".join(f"def step_{n}():\n    return {n}\n" for n in range(10))
#: Seconds a test waits for the watch's event at most (a loaded machine is slow; the debounce is 0.08 s).
DEADLINE = 60.0


class Seen:
    """The batches the watch reported (``on_change``) and an event per batch."""

    def __init__(self) -> None:
        self.batches: list[set[str]] = []
        self._event = threading.Condition()

    def __call__(self, paths: set[str]) -> None:
        with self._event:
            self.batches.append(paths)
            self._event.notify_all()

    def mark(self) -> int:
        """How many batches were reported so far (for :meth:`wait_for`'s ``after``)."""
        with self._event:
            return len(self.batches)

    def wait_for(self, path: Path, after: int = 0) -> bool:
        """Wait until a batch reported after the first ``after`` names ``path`` (its real path)."""
        real = os.path.realpath(path)
        with self._event:
            return self._event.wait_for(lambda: any(real in b for b in self.batches[after:]), DEADLINE)


@pytest.fixture
def watch() -> Iterator[tuple[CitedWatch, Seen]]:
    freshness.clear()
    seen = Seen()
    cited = CitedWatch(on_change=seen)
    cited.start()
    yield cited, seen
    cited.stop()
    freshness.clear()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/steps.py": CODE, "lib/pkg/deep.py": CODE}, "code")
    return Path(repo.workdir).resolve()


def trusted_view(cited: CitedWatch, workspace: Path, citation) -> dict:
    """View ``citation`` until it is trusted: the first view asks the watch for its directory; once the watch
    stands there, the next view is computed afresh and trusted."""
    first = freshness.view(workspace, citation)
    directory = os.path.dirname(os.path.join(workspace, citation.path))
    assert cited.wait_armed([directory], DEADLINE), trust.state()
    second = freshness.view(workspace, citation)
    assert freshness.trusted(workspace, citation), trust.state()
    assert second == first
    return second


def test_a_watched_view_is_trusted_until_the_watch_reports_a_change(watch, workspace: Path) -> None:
    cited, seen = watch
    [citation] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 3, "endLine": 4}])
    assert trusted_view(cited, workspace, citation)["freshness"] == "fresh"
    reads = freshness.reads
    assert freshness.view(workspace, citation)["freshness"] == "fresh" and freshness.reads == reads
    (workspace / "src" / "steps.py").write_text("# a header\n" + CODE)
    assert seen.wait_for(workspace / "src" / "steps.py")
    assert not freshness.trusted(workspace, citation)
    moved = freshness.view(workspace, citation)
    assert moved["freshness"] == "moved" and moved["movedTo"] == {"startLine": 4, "endLine": 5}
    assert freshness.reads == reads + 1
    assert freshness.trusted(workspace, citation)  # the moved view is trusted in its turn
    mark = seen.mark()
    (workspace / "src" / "steps.py").write_text("nothing of it\n")
    assert seen.wait_for(workspace / "src" / "steps.py", after=mark)
    assert freshness.view(workspace, citation)["freshness"] == "changed"


def test_a_change_in_another_directory_keeps_the_trust(watch, workspace: Path) -> None:
    cited, seen = watch
    [steps] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 1}])
    [deep] = resolve(workspace, workspace / ".root", [{"path": "lib/pkg/deep.py", "startLine": 1}])
    trusted_view(cited, workspace, steps)
    trusted_view(cited, workspace, deep)  # lib/pkg/ wanted: the watch was replaced, which dropped every trust
    trusted_view(cited, workspace, steps)
    (workspace / "lib" / "pkg" / "deep.py").write_text("other\n")
    assert seen.wait_for(workspace / "lib" / "pkg" / "deep.py")
    assert freshness.trusted(workspace, steps) and not freshness.trusted(workspace, deep)
    assert freshness.view(workspace, deep)["freshness"] == "changed"


def test_a_deleted_directory_makes_the_view_gone(watch, workspace: Path) -> None:
    cited, seen = watch
    [deep] = resolve(workspace, workspace / ".root", [{"path": "lib/pkg/deep.py", "startLine": 1}])
    trusted_view(cited, workspace, deep)
    shutil.rmtree(workspace / "lib" / "pkg")
    assert seen.wait_for(workspace / "lib" / "pkg" / "deep.py")
    assert freshness.view(workspace, deep)["freshness"] == "gone"


def test_an_invalidation_drops_the_trust_at_once(watch, workspace: Path) -> None:
    """``textDocument/didSave`` (:func:`freshness.invalidate`) and a branch switch (``invalidate_under``) do not
    wait for the watch."""
    cited, _seen = watch
    [citation] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 1}])
    trusted_view(cited, workspace, citation)
    freshness.invalidate(workspace / "src" / "steps.py")
    assert not freshness.trusted(workspace, citation)
    trusted_view(cited, workspace, citation)
    freshness.invalidate_under(workspace)
    assert not freshness.trusted(workspace, citation)


def test_a_file_reached_through_a_symlink_is_never_trusted(watch, workspace: Path) -> None:
    """A change to the link's target is reported in the target's directory, not the link's: such a view keeps its
    ``stat``."""
    cited, _seen = watch
    (workspace / "src" / "alias.py").symlink_to(workspace / "lib" / "pkg" / "deep.py")
    [citation] = resolve(workspace, workspace / ".root", [{"path": "src/alias.py", "startLine": 1}])
    freshness.view(workspace, citation)
    [steps] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 1}])
    trusted_view(cited, workspace, steps)  # src/ is watched now
    assert freshness.view(workspace, citation)["freshness"] == "fresh"
    assert not freshness.trusted(workspace, citation)


def test_a_view_computed_before_the_watch_stood_is_not_trusted(tmp_path: Path) -> None:
    """A change made before the watch's inotify watches were in place is never reported: a view whose ``stat``
    came before the arming must not be trusted."""
    freshness.clear()
    directory = str(tmp_path)
    since = trust.generation()
    trust.arm([directory])
    try:
        trust.offer(("w", "c"), directory, {"freshness": "fresh"}, since)
        assert trust.get(("w", "c")) is None
        trust.offer(("w", "c"), directory, {"freshness": "fresh"}, trust.generation())
        assert trust.get(("w", "c")) == {"freshness": "fresh"}
        assert trust.changed([os.path.join(directory, "x.py")]) == 1
        assert trust.get(("w", "c")) is None
    finally:
        trust.disarm()


def test_a_watch_that_cannot_start_counts_a_failure_and_trusts_nothing(workspace: Path, monkeypatch) -> None:
    """A host where watchfiles cannot be imported (CI's packages under ``/root``, read by another user): the watch
    thread fails outright. It used to log only, so ``wait_failures`` waited out its timeout; now the failure is
    counted, and every view is still checked with a ``stat``."""
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # what ``import`` finds for a package it may not read
    freshness.clear()
    cited = CitedWatch()
    cited.start()
    try:
        assert cited.wait_failures(1, DEADLINE) and cited.failures == 1
        [citation] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 1}])
        for _ in range(3):
            assert freshness.view(workspace, citation)["freshness"] == "fresh"
        assert not freshness.trusted(workspace, citation) and trust.state()["trusted"] == 0
    finally:
        cited.stop()
        freshness.clear()


def test_without_a_watch_nothing_is_trusted(workspace: Path) -> None:
    freshness.clear()
    [citation] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 1}])
    for _ in range(3):
        assert freshness.view(workspace, citation)["freshness"] == "fresh"
    assert not freshness.trusted(workspace, citation) and trust.state()["trusted"] == 0


def test_the_wake_of_a_watched_host_follows_the_change(watch, workspace: Path, tmp_path: Path) -> None:
    """The wake keeps its citation marks while every view is trusted, and marks the entry once the watch reports
    the change."""
    cited, seen = watch
    host = WorkspaceHost(workspace, load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "root")}))
    try:
        content = "step 3 returns three"
        assert host.mutate_runtime(validate_request("add", "memory", content)).changed
        host.citations.put("runtime", {runtime_key(content): host.citations.resolve(
            [{"path": "src/steps.py", "startLine": 7, "endLine": 8}])})
        assert "Citations:" not in host.wake()[0].text
        assert cited.wait_armed([str(workspace / "src")], DEADLINE)
        for _ in range(2):  # computed afresh once armed, then answered from the trusted views
            assert "Citations:" not in host.wake()[0].text
        [citation] = host.citations.table("runtime")[runtime_key(content)]
        assert freshness.trusted(workspace, citation)
        (workspace / "src" / "steps.py").write_text(CODE.replace("return 3", "return 33"))
        assert seen.wait_for(workspace / "src" / "steps.py")
        text = host.wake()[0].text
        assert "cites src/steps.py:7-8: changed" in text and "Citations: 1 cited code range of 1 entry" in text
    finally:
        host.close()
