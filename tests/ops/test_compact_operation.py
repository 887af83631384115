"""``runtime.compact`` as one operation (ops/runtime.py): a person's merge/drop without a revision is fenced by
the revision current when the operation starts, so a write that lands meanwhile is ``revision-conflict`` and
changes nothing; the progress title names the file. Real hosts on a real repository, in this process (the
operation's own progress report is the moment another writer commits: no sleep, no mock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import RevisionConflict
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.ops.execute import call, parse
from mnemon_ls.ops.registry import operations
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.settings import load_settings
from tests.gitrepo import make_repo

SETTINGS = {"storageScope": "workspace", "runtimeUserScope": "storage", "runtimeMemory": {"userLimitBytes": 160}}
ENTRIES = ("prefers tabs over spaces in Go", "never force-push to main, ever", "likes short commit subject li")


@pytest.fixture
def hosts(tmp_path: Path):
    workspace = tmp_path / "ws"
    make_repo(workspace)
    opened = [WorkspaceHost(workspace, load_settings(SETTINGS)) for _ in range(2)]
    for content in ENTRIES:
        opened[0].mutate_runtime(validate_request("add", "user", content))
    yield opened
    for host in opened:
        host.close()


def test_without_a_revision_a_write_meanwhile_is_a_conflict_and_changes_nothing(hosts) -> None:
    ours, other = hosts
    operation = operations()["runtime.compact"]
    params = parse(operation, {"merge": [{"sourceIndexes": [1, 2], "content": "Go tabs; no force-push"}]})
    started = ours.runtime.read().revision
    reports: list[str] = []

    def progress(message: str, _percentage: int | None) -> None:  # the revision is taken: another writer commits
        reports.append(message)
        other.mutate_runtime(validate_request("add", "user", "works in UTC+2"))

    with pytest.raises(RevisionConflict) as info:
        call(operation, ours, params, surface="lsp", gate_held=True, progress=progress)
    assert reports == ["Checking the compaction against the plan"]
    assert info.value.data["expected"] == started
    state = ours.runtime.read()
    assert [e.content for e in state.user] == [*ENTRIES, "works in UTC+2"]  # the other write, nothing of ours
    assert not ours.runtime.user_store.archive_dir.exists()
    # without a writer in between, the same request commits against the current revision
    data = call(operation, ours, params, surface="cli", gate_held=True)
    assert [e.content for e in ours.runtime.read().user] == ["Go tabs; no force-push", ENTRIES[2], "works in UTC+2"]
    assert data["maintenance"]["planRevision"] == state.revision


def test_the_progress_title_names_the_file() -> None:
    operation = operations()["runtime.compact"]
    assert operation.progress_title(parse(operation, {"drop": [1]})) == "Compacting USER.md"
    assert operation.progress_title(parse(operation, {"drop": [1], "target": "memory"})) == "Compacting MEMORY.md"
