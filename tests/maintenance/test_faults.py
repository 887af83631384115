"""MEMORY.md archival under faults (issue 9 "Bad input and faults"): a provider that fails half-way, times
out, answers ``skipped`` (or ``added`` without an id) with no exact match; a space deactivated after the
plan; a second writer committing between the plan and the commit. The ``mnemon-cli`` provider runs real
subprocesses of ``tests/helpers/fake_mnemon.py``; the concurrent actions are real ``mnemon-ls`` processes
the fake starts in the middle of the batch. In every case hot memory is unchanged (the revision fence
holds), no lineage line is written and the error says what happened and which entries are safe duplicates."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from pathlib import Path

import pytest

from mnemon_ls.errors import MaintenanceFailed, RuntimeCapacityError
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.maintenance import lineage_path, read_lineage
from mnemon_ls.runtime import ops
from mnemon_ls.settings import load_settings
from mnemon_ls.spaces import CliOptions, SpacesService

from tests.conftest import disk_state
from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_mnemon.py"
LIMIT = 1024


def fact(n: int) -> str:
    return f"Fact {n:03d}: the build cache lives in .cache/build-{n} and is safe to delete"


@pytest.fixture
def fake_exe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "mnemon"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(stat.S_IRWXU)
    for name in ("FAKE_MNEMON_RESULTS", "FAKE_MNEMON_SLEEP", "FAKE_MNEMON_FAIL", "FAKE_MNEMON_BADJSON",
                 "FAKE_MNEMON_REMEMBER", "FAKE_MNEMON_REMEMBER_LIMIT", "FAKE_MNEMON_ON_REMEMBER", "FAKE_MNEMON_LOG"):
        monkeypatch.delenv(name, raising=False)
    return exe


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    make_repo(path, "main")
    return path


def cli_host(repo_dir: Path, exe: Path, timeout: float = 20.0) -> WorkspaceHost:
    settings = load_settings({"storageScope": "workspace", "runtimeUserScope": "storage",
                              "runtimeMemory": {"memoryLimitBytes": LIMIT}})
    host = WorkspaceHost(repo_dir, settings)
    # the same Source through the external `mnemon` binary (the mnemon-cli driver) instead of the embedded one
    host.__dict__["spaces"] = SpacesService(host.root, native_driver="cli", cli=CliOptions(path=str(exe), timeout=timeout))
    return host


def fill(host: WorkspaceHost) -> int:
    n = 0
    while True:
        try:
            host.runtime.mutate(ops.validate_request("add", "memory", fact(n), None, None, None))
        except RuntimeCapacityError:
            return n
        n += 1


def add(host: WorkspaceHost, content: str, routes=None):
    return host.mutate_runtime(ops.validate_request("add", "memory", content, None, None, None), routes)


def fake_items(root: Path, space_id: str) -> list[str]:
    store = root / "data" / space_id / "fake-store.json"
    return [i["content"] for i in json.loads(store.read_text())["insights"]] if store.exists() else []


def mnemon_ls(repo_dir: Path, *args: str) -> str:
    argv = [*mnemon_command(), *args, "--workspace", str(repo_dir), "--scope", "workspace",
            "--runtime-user-scope", "storage"]
    return " ".join(shlex.quote(a) for a in argv)


def assert_unchanged(host: WorkspaceHost, before: dict) -> None:
    assert disk_state(host.root / "runtime") == before
    assert not lineage_path(host.root).exists()


def test_a_provider_failing_half_way_keeps_hot_memory_and_lists_the_safe_duplicates(
        repo_dir: Path, fake_exe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = cli_host(repo_dir, fake_exe)
    space = host.spaces.create_space("Project", "Build facts", active=True).record.id
    n = fill(host)
    before = disk_state(host.root / "runtime")
    monkeypatch.setenv("FAKE_MNEMON_REMEMBER_LIMIT", f"{tmp_path / 'count'}:2")
    with pytest.raises(MaintenanceFailed) as error:
        add(host, fact(n))
    data = error.value.data
    assert data["reason"] == "provider-failed" and data["kept"] == "hot memory unchanged"
    assert data["spaceId"] == space and data["cause"]["code"] == "provider-failed"
    assert "simulated provider failure" in error.value.message
    assert [d["sourceIndex"] for d in data["safeDuplicates"]] == [i for i in range(1, n + 1)
                                                                   if fact(i - 1) in fake_items(host.root, space)]
    assert len(data["safeDuplicates"]) == 2
    assert_unchanged(host, before)
    # once the provider works again the same add archives and commits
    monkeypatch.delenv("FAKE_MNEMON_REMEMBER_LIMIT")
    receipt = add(host, fact(n))
    assert receipt.detail["maintenance"]["kind"] == "mnemon-archive"
    assert len(read_lineage(host.root).records) == len(receipt.detail["maintenance"]["archived"])


def test_a_provider_timeout_keeps_hot_memory(repo_dir: Path, fake_exe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = cli_host(repo_dir, fake_exe, timeout=5.0)  # every call before the sleeping one must fit in it, under load
    host.spaces.create_space("Project", "Build facts", active=True)
    n = fill(host)
    before = disk_state(host.root / "runtime")
    monkeypatch.setenv("FAKE_MNEMON_SLEEP", "120")  # far past the timeout: the provider gives up at 5 s
    with pytest.raises(MaintenanceFailed) as error:
        add(host, fact(n))
    assert error.value.data["reason"] == "provider-failed" and error.value.data["safeDuplicates"] == []
    assert "hot memory unchanged" in error.value.message
    assert_unchanged(host, before)


@pytest.mark.parametrize("answer", [
    {"id": "0f9c", "content": "x", "action": "skipped", "diff_suggestion": "DUPLICATE", "replaced_id": "nope"},
    {"action": "added"},
    {"id": "5", "action": "queued"},
], ids=["skipped-without-exact-match", "added-without-id", "accepted-not-committed"])
def test_an_answer_without_evidence_aborts(repo_dir: Path, fake_exe: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, answer: dict) -> None:
    host = cli_host(repo_dir, fake_exe)
    host.spaces.create_space("Project", "Build facts", active=True)
    n = fill(host)
    before = disk_state(host.root / "runtime")
    canned = tmp_path / "remember.json"
    canned.write_text(json.dumps(answer))
    monkeypatch.setenv("FAKE_MNEMON_REMEMBER", str(canned))
    with pytest.raises(MaintenanceFailed) as error:
        add(host, fact(n))
    assert error.value.data["reason"] == "no-evidence"
    assert "no item with exactly its content was found" in error.value.message
    assert_unchanged(host, before)


def test_a_space_deactivated_after_the_plan_is_not_written_and_not_reactivated(
        repo_dir: Path, fake_exe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = cli_host(repo_dir, fake_exe)
    a = host.spaces.create_space("Build", "compiler", active=True).record.id
    b = host.spaces.create_space("Design", "colors", active=True).record.id
    n = fill(host)
    before = disk_state(host.root / "runtime")
    # the last plan entry is always archived (equal importance keeps the oldest): it alone goes to b, after a's batch
    routes = [{"sourceIndexes": list(range(1, n)), "spaceId": a}, {"sourceIndexes": [n], "spaceId": b}]
    monkeypatch.setenv("FAKE_MNEMON_ON_REMEMBER", f"{tmp_path / 'once'}:{mnemon_ls(repo_dir, 'space', 'deactivate', b)}")
    with pytest.raises(MaintenanceFailed) as error:
        add(host, fact(n), routes)
    data = error.value.data
    assert data["reason"] == "space-ineligible" and data["spaceId"] == b, error.value.message
    assert data["safeDuplicates"] and all(f"memory-space:{a}/" in d["destination"] for d in data["safeDuplicates"])
    assert fake_items(host.root, b) == []
    assert host.spaces.get_space(b).record.active is False
    assert_unchanged(host, before)


def test_a_second_writer_between_plan_and_commit_keeps_its_write_and_hot_memory(
        repo_dir: Path, fake_exe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = cli_host(repo_dir, fake_exe)
    space = host.spaces.create_space("Project", "Build facts", active=True).record.id
    n = fill(host)
    entries_before = [e.content for e in host.runtime.read().memory]
    monkeypatch.setenv("FAKE_MNEMON_ON_REMEMBER",
                       f"{tmp_path / 'once'}:{mnemon_ls(repo_dir, 'runtime', 'remove', '--old-text', fact(1))}")
    with pytest.raises(MaintenanceFailed) as error:
        add(host, fact(n))
    data = error.value.data
    assert data["reason"] == "revision-conflict" and data["cause"]["code"] == "revision-conflict"
    assert "another writer committed runtime memory" in error.value.message
    written = fake_items(host.root, space)
    assert len(data["safeDuplicates"]) == len(written) > 0
    assert [e.content for e in host.runtime.read().memory] == [c for c in entries_before if c != fact(1)]
    assert not lineage_path(host.root).exists()


def test_doctor_does_not_call_an_item_gone_when_its_provider_cannot_look_ids_up(repo_dir: Path, fake_exe: Path) -> None:
    """A new user's doctor reported every fact archived into a mem0 space as lost (the provider has no
    lookup by id and the keyword fallback cannot find an id); the facts were recallable."""
    from mnemon_ls.maintenance import verify_lineage

    host = cli_host(repo_dir, fake_exe)
    host.spaces.create_space("Project", "Build facts", active=True)
    n = fill(host)
    receipt = add(host, fact(n))
    assert receipt.to_dict()["maintenance"]["archived"]
    findings = verify_lineage(host.runtime.memory_store.root, host.spaces)
    assert not [f for f in findings if f.level == "problem"], findings
    assert any(f.level == "warning" and "not verified" in f.message for f in findings), findings
