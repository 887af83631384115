"""A damaged ``state/citations/reviewed.json`` (from the fresh-user helper of stop 29): never silently overwritten,
never downgraded, never trusted beyond now, and named by ``mnemon-ls doctor``. Real hosts on a real repository;
"later" is a host whose clock is 100 days ahead (no sleep, no mock)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemon_ls.citations.reviewed import ReviewedFile
from mnemon_ls.runtime.ops import entry_key
from mnemon_ls.errors import StorageUnsafe, UnreadableStore
from tests.citations.test_review_due import hosts, run, workspace  # noqa: F401  (fixture)
from tests.helpers.procs import tree_snapshot

KEY = entry_key("memory", "deploys go through staging")
OTHER = entry_key("memory", "ci runs on push")


def confirmed_file(host) -> Path:
    return host.root / "state" / "citations" / "reviewed.json"


def setup_two(workspace: Path):
    now, later = hosts(workspace)
    run(now, "runtime.mutate", action="add", target="memory", content="deploys go through staging")
    run(now, "runtime.mutate", action="add", target="memory", content="ci runs on push")
    return now, later


def due_keys(host) -> set[str]:
    return {m["key"] for m in run(host, "citations.review")["memories"]}


def doctor(host) -> list[dict]:
    return [f for f in run(host, "storage.doctor")["findings"] if f["subject"].startswith(
        str(host.root / "state" / "citations"))]


@pytest.mark.parametrize("damage", [b"{not json", b"[1, 2]", b'{"version": 1, "reviewed": {"runtime": []}}',
                                    b'{"version": "1", "reviewed": {}}'])
def test_a_damaged_file_is_kept_aside_before_the_next_confirmation_writes_it_anew(workspace: Path, damage: bytes):
    now, later = setup_two(workspace)
    path = confirmed_file(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage)
    assert due_keys(later) == {KEY, OTHER}  # reads as empty: nothing hidden from review
    [finding] = doctor(now)
    assert finding["level"] == "warning" and finding["subject"] == str(path)
    answer = run(later, "citations.reanchor", source="runtime", key=KEY)
    kept = Path(answer["keptDamaged"])
    assert kept.parent == path.parent / "quarantine" and kept.read_bytes() == damage  # the bytes, kept
    assert due_keys(later) == {OTHER}
    assert set(json.loads(path.read_text())["reviewed"]["runtime"]) == {KEY}
    assert [f["level"] for f in doctor(now)] == ["ok"]  # the copy is named, the file is whole again


def test_entries_with_bad_times_are_kept_aside_with_the_file_and_the_good_ones_survive(workspace: Path):
    now, later = setup_two(workspace)
    path = confirmed_file(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    good = int(later.now().timestamp() * 1000)
    raw = json.dumps({"version": 1, "reviewed": {"runtime": {OTHER: good, "memory:x": -5, "memory:y": "soon"}}})
    path.write_text(raw)
    assert due_keys(later) == {KEY}  # the good confirmation holds
    [finding] = doctor(now)
    assert finding["level"] == "warning" and "2 entries whose time" in finding["message"]
    answer = run(later, "citations.reanchor", source="runtime", key=KEY)
    assert Path(answer["keptDamaged"]).read_text() == raw
    assert json.loads(path.read_text())["reviewed"]["runtime"] == {KEY: answer_ms(answer), OTHER: good}
    assert due_keys(later) == set()


def answer_ms(answer: dict) -> int:
    return int(datetime.fromisoformat(answer["reviewedAt"]).timestamp() * 1000)


def test_a_newer_version_is_never_written_over(workspace: Path):
    now, later = setup_two(workspace)
    path = confirmed_file(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 2, "reviewed": {"runtime": {OTHER: 1}}, "more": True}))
    before = tree_snapshot(now.root)
    with pytest.raises(UnreadableStore) as raised:
        run(later, "citations.reanchor", source="runtime", key=KEY)
    assert str(path) in raised.value.message and "version 2, newer than this mnemon-ls reads (1)" in \
        raised.value.message
    assert tree_snapshot(now.root) == before
    [finding] = doctor(now)
    assert finding["level"] == "problem" and "version 2" in finding["message"]
    assert due_keys(later) == {KEY, OTHER}


@pytest.mark.parametrize("kind", ["symlink", "directory"])
def test_a_link_or_a_directory_in_its_place_is_never_read_nor_written(workspace: Path, tmp_path: Path, kind: str):
    """The wake never reads through it (every entry counts from its own times); the review list and "still true"
    refuse as for any link in the storage root (a directory reads as no confirmation); doctor names it."""
    now, later = setup_two(workspace)
    path = confirmed_file(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        outside = tmp_path / "outside.json"
        outside.write_text(json.dumps({"version": 1, "reviewed": {"runtime": {KEY: int(later.now().timestamp()
                                                                                          * 1000)}}}))
        os.symlink(outside, path)
    else:
        path.mkdir()
    before = tree_snapshot(now.root)
    assert run(later, "workspace.wake")["text"].count("; review due]") == 2
    if kind == "symlink":
        with pytest.raises(StorageUnsafe):
            due_keys(later)
    else:
        assert due_keys(later) == {KEY, OTHER}
    with pytest.raises((UnreadableStore, StorageUnsafe)):
        run(later, "citations.reanchor", source="runtime", key=KEY)
    assert tree_snapshot(now.root) == before
    assert any(f["level"] == "problem" and str(path) in f["subject"] + f["message"]
               for f in run(now, "storage.doctor")["findings"])


def test_a_confirmation_later_than_now_is_ignored(workspace: Path):
    now, later = setup_two(workspace)
    ReviewedFile(now.root).confirm("runtime", KEY, int(datetime(2100, 1, 1, tzinfo=timezone.utc).timestamp() * 1000))
    assert due_keys(later) == {KEY, OTHER}  # a year-2100 confirmation does not hide it until 2100
    assert run(later, "workspace.wake")["text"].count("; review due]") == 2


def test_a_linked_quarantine_is_refused_before_anything_changes(workspace: Path, tmp_path: Path):
    """The damaged file's copy would go through ``quarantine/``: a symbolic link there is refused before any
    citation or confirmation changes, and nothing is written where it points."""
    now, later = hosts(workspace)
    cited = "retry gives up after five tries"
    run(now, "runtime.mutate", action="add", target="memory", content=cited,
        cites=[{"path": "src/retry.py", "startLine": 3, "endLine": 4}])
    retry = workspace / "src" / "retry.py"
    retry.write_text("# moved down\n" + retry.read_text())  # the cited lines move: reanchor would rewrite them
    path = confirmed_file(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{damaged")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, path.parent / "quarantine")
    before = tree_snapshot(now.root)
    with pytest.raises(StorageUnsafe):
        run(later, "citations.reanchor", source="runtime", key=entry_key("memory", cited))
    assert tree_snapshot(now.root) == before and list(elsewhere.iterdir()) == []


def test_a_fifo_in_its_place_never_hangs_a_wake(workspace: Path):
    """A named pipe as ``reviewed.json``: the wake and the review list count from the entries' own times (they
    used to block forever opening it), "still true" refuses, doctor names it."""
    now, later = setup_two(workspace)
    path = confirmed_file(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert run(later, "workspace.wake")["text"].count("; review due]") == 2
    assert due_keys(later) == {KEY, OTHER}
    with pytest.raises(UnreadableStore):
        run(later, "citations.reanchor", source="runtime", key=KEY)
    [finding] = doctor(now)
    assert finding["level"] == "problem" and "not a regular file" in finding["message"]
