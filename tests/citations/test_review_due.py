"""Issue 24 item 6 in the review views: ``citations.review`` lists every runtime entry, Document and workspace record
neither updated nor confirmed for ``reviewAfterDays`` (reason ``review-due``), beside the memories whose cited code
changed; "Still true" (``citations.reanchor``) restarts the clock in a side file, so the memory leaves the list and
its wake mark goes, while ``memories.json`` and every other Source's file stay byte for byte as they were; nothing
is ever deleted by age. Real hosts on a real repository in this process; "later" is a second host whose clock is
100 days ahead (the host's own clock parameter: no sleep, no mock)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.ops.execute import call, parse
from mnemon_ls.ops.registry import operations
from mnemon_ls.settings import load_settings
from tests.gitrepo import commit_files, make_repo
from tests.helpers.procs import tree_snapshot

SETTINGS = {"storageScope": "workspace", "runtimeUserScope": "storage"}
LATER = timedelta(days=100)


def run(host: WorkspaceHost, name: str, **raw):
    operation = operations()[name]
    return call(operation, host, parse(operation, raw), surface="lsp")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "ws")
    commit_files(repo, {"src/retry.py": "".join(f"line {n}\n" for n in range(1, 21))}, "retry")
    return Path(repo.workdir)


def hosts(workspace: Path, days: int | None = None) -> tuple[WorkspaceHost, WorkspaceHost]:
    settings = load_settings(SETTINGS | ({"reviewAfterDays": days} if days is not None else {}))
    now = WorkspaceHost(workspace, settings)
    later = WorkspaceHost(workspace, settings, clock=lambda: datetime.now(timezone.utc) + LATER)
    return now, later


def fill(host: WorkspaceHost) -> None:
    """One memory of each kind (a MEMORY.md entry cites src/retry.py:3-4)."""
    run(host, "runtime.mutate", action="add", target="memory", content="deploys go through staging")
    run(host, "runtime.mutate", action="add", target="user", content="prefers short answers")
    run(host, "runtime.mutate", action="add", target="memory", content="retry gives up after five tries",
        cites=[{"path": "src/retry.py", "startLine": 3, "endLine": 4}])
    run(host, "documents.create", title="Retry design", content="Backoff doubles each time.")
    run(host, "records.create", record_scope="project", type="fact", title="ci", content="ci runs on push")


def reasons(data: dict) -> dict[tuple[str, str], list[str]]:
    return {(m["source"], m.get("title") or m["content"]): m["reasons"] for m in data["memories"]}


def test_memories_not_updated_for_review_after_days_are_listed_and_still_true_restarts_the_clock(workspace: Path):
    now, later = hosts(workspace)
    fill(now)
    assert run(now, "citations.review")["memories"] == []  # everything is new
    data = run(later, "citations.review")
    assert reasons(data) == {
        ("runtime", "prefers short answers"): ["review-due"],
        ("runtime", "deploys go through staging"): ["review-due"],
        ("runtime", "retry gives up after five tries"): ["review-due"],
        ("documents", "Retry design"): ["review-due"],
        ("records", "ci"): ["review-due"],
    }
    targets = {m["content"]: m.get("target") for m in data["memories"] if m["source"] == "runtime"}
    assert targets["prefers short answers"] == "user" and targets["deploys go through staging"] == "memory"
    cited = next(m for m in data["memories"] if m["content"] == "retry gives up after five tries")
    assert [c["freshness"] for c in cited["cites"]] == ["fresh"]
    assert "review due" in run(later, "workspace.wake")["text"]

    root = now.root
    truth = (root / "runtime" / "memories.json").read_bytes()
    staging = next(m for m in data["memories"] if m["content"] == "deploys go through staging")
    answer = run(later, "citations.reanchor", source="runtime", key=staging["key"])
    assert answer["reanchored"] == 0 and answer["nextReviewDays"] == 90
    assert datetime.fromisoformat(answer["reviewedAt"]) > datetime.now(timezone.utc) + LATER - timedelta(minutes=5)
    assert (root / "runtime" / "memories.json").read_bytes() == truth  # the Source's own file is untouched
    side = root / "state" / "citations" / "reviewed.json"
    assert os.stat(side).st_mode & 0o777 == 0o600
    assert list(json.loads(side.read_text())["reviewed"]["runtime"]) == [staging["key"]]
    after = reasons(run(later, "citations.review"))
    assert ("runtime", "deploys go through staging") not in after and len(after) == 4
    wake = run(later, "workspace.wake")["text"].splitlines()
    assert not wake[wake.index("deploys go through staging") - 1].endswith("review due]")
    assert wake[wake.index("prefers short answers") - 1].endswith("review due]")
    listed = {e["content"]: e.get("review") for e in run(later, "runtime.list")["entries"]}
    assert listed["deploys go through staging"] is None and listed["prefers short answers"] == "due"
    # every record and document confirmed: none left but the runtime entries; nothing was deleted by age
    for memory in run(later, "citations.review")["memories"]:
        if memory["source"] in ("records", "documents"):
            run(later, "citations.reanchor", source=memory["source"], key=memory["key"])
    assert {s for s, _ in reasons(run(later, "citations.review"))} == {"runtime"}
    assert "review" not in run(later, "records.list")["records"][0]
    assert len(run(later, "runtime.list")["entries"]) == 3 and len(run(later, "records.list")["records"]) == 1
    # 200 days on, the confirmation is old too
    far = WorkspaceHost(workspace, load_settings(SETTINGS),
                        clock=lambda: datetime.now(timezone.utc) + LATER + timedelta(days=91))
    assert ("runtime", "deploys go through staging") in reasons(run(far, "citations.review"))


def test_a_memory_with_changed_code_and_no_update_gives_both_reasons_and_zero_days_lists_none(workspace: Path):
    now, later = hosts(workspace)
    fill(now)
    (workspace / "src" / "retry.py").write_text("".join(f"LINE {n}\n" for n in range(1, 21)))
    assert reasons(run(now, "citations.review")) == {("runtime", "retry gives up after five tries"): ["changed"]}
    assert reasons(run(later, "citations.review"))[("runtime", "retry gives up after five tries")] == \
        ["changed", "review-due"]
    text = operations()["citations.review"].text(run(later, "citations.review"))
    assert "why: cited code changed; not updated or confirmed for reviewAfterDays" in text
    _, off = hosts(workspace, days=0)
    assert reasons(run(off, "citations.review")) == {("runtime", "retry gives up after five tries"): ["changed"]}


def test_still_true_on_a_key_that_names_no_memory_is_refused_and_writes_nothing(workspace: Path):
    now, later = hosts(workspace)
    fill(now)
    before = tree_snapshot(now.root)
    for source, key in (("runtime", "memory:" + "0" * 64), ("records", "project/nope"), ("documents", "nope"),
                        ("spaces", "nospace/noitem")):
        with pytest.raises(InvalidInput) as info:
            run(later, "citations.reanchor", source=source, key=key)
        assert info.value.field == "key" and "names no memory of" in info.value.rule
    assert tree_snapshot(now.root) == before


def test_an_unreadable_confirmation_file_counts_every_memory_from_its_own_times(workspace: Path):
    now, later = hosts(workspace)
    fill(now)
    for memory in run(later, "citations.review")["memories"]:
        run(later, "citations.reanchor", source=memory["source"], key=memory["key"])
    assert run(later, "citations.review")["memories"] == []
    (now.root / "state" / "citations" / "reviewed.json").write_text("{not json")
    assert len(run(later, "citations.review")["memories"]) == 5  # the safe side: nothing hidden from review


@pytest.mark.parametrize("body", ['{"version": 1, "reviewed": {"runtime": {"KEY": 99999999999999999999}}}',
                                  '{"version": 1, "reviewed": {"runtime": {"KEY": -5}}}',
                                  '{"version": 1, "reviewed": {"runtime": {"KEY": "soon"}}}',
                                  '[1, 2]', '{"version": 1, "reviewed": []}'])  # (a newer version: refused,
                                                                                     # test_reviewed_damage.py)
def test_a_hand_edited_confirmation_file_is_ignored_where_it_cannot_be_read(workspace: Path, body: str):
    now, later = hosts(workspace)
    fill(now)
    key = next(m["key"] for m in run(later, "citations.review")["memories"] if m["content"] == "prefers short answers")
    side = now.root / "state" / "citations" / "reviewed.json"
    side.parent.mkdir(parents=True, exist_ok=True)
    side.write_text(body.replace("KEY", key))
    data = run(later, "citations.review")
    assert len(data["memories"]) == 5 and all("reviewedAt" not in m for m in data["memories"])
    run(later, "citations.reanchor", source="runtime", key=key)  # replaced by a good file
    assert list(json.loads(side.read_text())["reviewed"]) == ["runtime"]
    assert len(run(later, "citations.review")["memories"]) == 4
