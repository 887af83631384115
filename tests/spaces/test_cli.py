"""The ``mnemon-cli`` provider, driven through real subprocesses of ``tests/helpers/fake_mnemon.py``: a small
stand-in executable answering the JSON shapes of shared/reference/mnemon-cli.md section 10 (the real
``mnemon`` binary cannot be installed on this machine). Covers argv shapes (cases 59-61, 65), receipts,
merge accounting through ``import`` (73), and the errors of a missing, failing, slow or garbled binary."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces import CliOptions, SpacesService
from mnemon_ls.spaces.errors import ProviderFailed, ProviderUnavailable, SpaceRefused
from mnemon_ls.spaces.providers.cli import CliRunner, find_binary

from tests.conftest import FrozenClock

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_mnemon.py"


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """An executable ``mnemon`` wrapper around the fake, its argv log, and a clean environment."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "mnemon"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(stat.S_IRWXU)
    log = tmp_path / "argv.log"
    monkeypatch.setenv("FAKE_MNEMON_LOG", str(log))
    for name in ("FAKE_MNEMON_RESULTS", "FAKE_MNEMON_IMPORT", "FAKE_MNEMON_SLEEP", "FAKE_MNEMON_FAIL",
                 "FAKE_MNEMON_BADJSON", "MNEMON_STORE", "MNEMON_DATA_DIR", "MNEMON_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    return {"exe": exe, "log": log, "dir": bindir}


def calls(log: Path) -> list:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def argvs(log: Path) -> list[list[str]]:
    return [c for c in calls(log) if isinstance(c, list)]


@pytest.fixture
def service(root: Path, clock: FrozenClock, fake: dict[str, Path]) -> SpacesService:
    return SpacesService(root, clock=clock, native_driver="cli", cli=CliOptions(path=str(fake["exe"]), timeout=10))


def test_create_uses_store_create_with_the_default_id(service: SpacesService, root: Path, fake) -> None:
    space = service.create_space("Project", "Decisions of this repository")
    assert space.record.id == "default" and space.record.active is False
    assert argvs(fake["log"]) == [["--data-dir", str(root), "--store", "default", "store", "create", "default"]]
    assert space.to_dict()["driver"] == "cli" and space.to_dict()["providerId"] == "mnemon-native"


def test_remember_recall_link_forget_related_status(service: SpacesService, root: Path, fake) -> None:
    space = service.create_space("Project", "p", active=True).record.id
    first = service.remember("Use uv for Python installs", tags=["tooling", "branch:main"], entities=["uv"],
                             category="decision", importance=4, source="agent")
    assert first.status == "committed" and first.space_id == space
    remember_argv = argvs(fake["log"])[-1]
    assert remember_argv == ["--data-dir", str(root), "--store", space, "remember", "--cat", "decision", "--imp", "4",
                             "--source", "agent", "--tags", "tooling,branch:main", "--entities", "uv", "--no-diff",
                             "--", "Use uv for Python installs"]
    again = service.remember("Use uv for Python installs")
    assert (again.status, again.id) == ("skipped", first.id)
    second = service.remember("Pin Python installs in CI")
    result = service.recall("Python installs", branch=None, branch_recall="off").to_dict()
    assert {r["id"] for r in result["results"]} == {first.id, second.id}
    assert argvs(fake["log"])[-1][4:] == ["recall", "Python installs", "--limit", "30"]
    keyword = service.recall("Python installs", mode="keyword", limit=2, branch_recall="off").to_dict()
    assert argvs(fake["log"])[-1][4:] == ["search", "Python installs", "--limit", "6"]
    assert keyword["results"][0]["score"] == 1.0
    linked = service.link(space, first.id, second.id, edge_type="semantic", weight=0.5)
    assert linked.status == "committed"
    assert argvs(fake["log"])[-1][4:] == ["link", first.id, second.id, "--type", "semantic", "--weight", "0.5"]
    assert [i["id"] for i in service.related(space, first.id)["items"]] == [second.id]
    assert service.forget(space, second.id).status == "committed"
    with pytest.raises(InvalidInput) as gone:
        service.forget(space, second.id)
    assert gone.value.field == "id"
    status = service.space_status(space)["status"]
    assert (status["total_insights"], status["deleted_insights"]) == (1, 1)
    assert service.cover(500).spaces == [{"id": space, "name": "Project", "items": 1}]


def test_tags_with_commas_go_through_an_import_draft(service: SpacesService, fake) -> None:
    service.create_space("Project", "p", active=True)
    receipt = service.remember("Tag with a comma", tags=["a,b"])
    assert receipt.status == "committed"
    drafts = [c for c in calls(fake["log"]) if isinstance(c, dict)]
    assert drafts[-1]["draft"]["insights"][0]["tags"] == ["a,b"] and drafts[-1]["mode"] == "0o600"


def test_entities_with_commas_go_through_an_import_draft(service: SpacesService, fake) -> None:
    """``--entities`` is comma-separated: an entity holding a comma is one array element of a draft instead."""
    service.create_space("Project", "p", active=True)
    receipt = service.remember("Licences come from Acme", entities=["Acme, Inc.", "uv"])
    assert receipt.status == "committed"
    drafts = [c for c in calls(fake["log"]) if isinstance(c, dict)]
    assert drafts[-1]["draft"]["insights"][0]["entities"] == ["Acme, Inc.", "uv"]
    assert not any("--entities" in argv for argv in argvs(fake["log"]))


def test_case_65_candidate_limit_and_tiers_through_the_cli(service: SpacesService, tmp_path: Path, fake,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    service.create_space("Project", "p", active=True)
    canned = tmp_path / "results.json"
    canned.write_text(json.dumps({"results": [
        {"id": f"r{i}", "content": f"row {i}", "score": s} for i, s in enumerate([0, 0.2, 0.25, 0.6])]}))
    monkeypatch.setenv("FAKE_MNEMON_RESULTS", str(canned))
    result = service.recall("anything", limit=2, branch_recall="off").to_dict()
    assert argvs(fake["log"])[-1][4:] == ["recall", "anything", "--limit", "6"]
    assert [(r["score"], r["tier"]) for r in result["results"]] == [(0.6, "high"), (0.25, "medium")]
    stats = result["sources"][0]["stats"]
    assert (stats["fetched"], stats["retained"], stats["droppedLowScore"], stats["droppedNonPositiveScore"]) == (
        4, 2, 1, 1)


def test_delete_counts_runs_set_then_moves_the_store_aside(service: SpacesService, root: Path, fake) -> None:
    # the CLI driver's store is counted (`status`: empty, so no confirmation), the default store repointed with
    # `store set`, and the directory moved to data/.deleted/ by mnemon-ls: never `store remove` (which erases it)
    default = service.create_space("Default", "d").record.id
    project = service.create_space("Project", "p").record.id
    fake["log"].unlink()
    kept = service.delete_space(project)["keptAt"]
    assert argvs(fake["log"]) == [["--data-dir", str(root), "--store", project, "status"]]
    assert Path(kept).parent == root / "data" / ".deleted" and (Path(kept) / "mnemon.db").is_file()
    assert not (root / "data" / project).exists()
    other = service.create_space("Other", "o").record.id
    (root / "active").write_text(f"{default}\n")
    fake["log"].unlink()
    service.delete_space(default)
    assert argvs(fake["log"]) == [
        ["--data-dir", str(root), "--store", default, "status"],
        ["--data-dir", str(root), "--store", other, "store", "set", other]]
    assert (root / "active").read_text() == f"{other}\n"
    with pytest.raises(SpaceRefused):
        service.delete_space(other)


@pytest.mark.parametrize("canned, status, deactivated", [
    ({"imported": 1, "updated": 0, "skipped": 0, "errors": 0}, "partial", False),
    ({"imported": 2, "updated": 0, "skipped": 0, "errors": 0}, "committed", True),
    ({"imported": 1, "updated": 0, "skipped": 0, "errors": 1}, "partial", False),
])
def test_case_73_merge_accounting_through_import(service: SpacesService, tmp_path: Path, fake,
                                                 monkeypatch: pytest.MonkeyPatch, canned, status, deactivated) -> None:
    target = service.create_space("Target", "t", active=True).record.id
    source = service.create_space("Source", "s", active=True).record.id
    service.remember("first source fact", space_id=source)
    service.remember("second source fact", space_id=source)
    answer = tmp_path / "import.json"
    answer.write_text(json.dumps(canned))
    monkeypatch.setenv("FAKE_MNEMON_IMPORT", str(answer))
    result = service.merge([source], target)
    assert result["sources"][0]["status"] == status and result["sources"][0]["deactivated"] is deactivated
    assert service.get_space(source).record.active is (not deactivated)
    export = [c for c in argvs(fake["log"]) if "recall" in c and "" in c]
    assert export[-1][:6] == ["--data-dir", str(service.root), "--store", source, "--readonly", "recall"]
    imports = [c for c in argvs(fake["log"]) if "import" in c]
    draft_path = imports[-1][-1]
    assert not Path(draft_path).exists()
    [draft] = [c for c in calls(fake["log"]) if isinstance(c, dict)]
    assert draft["mode"] == "0o600" and draft["draft"]["schema_version"] == "1"
    assert [i["content"] for i in draft["draft"]["insights"]] == ["first source fact", "second source fact"]


def test_missing_failing_slow_and_garbled_binaries(root: Path, fake, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = SpacesService(root, native_driver="cli", cli=CliOptions(path=str(root / "no-such-mnemon")))
    with pytest.raises(ProviderUnavailable) as absent:
        missing.create_space("A", "a")
    assert "not found" in absent.value.message
    monkeypatch.setenv("PATH", str(fake["dir"]))
    assert find_binary(None) == str(fake["exe"])
    # A generous timeout for the calls that must answer (a loaded machine starts Python slowly); the
    # timeout case below uses its own short-fused runner.
    runner = CliRunner(root, cli_path=str(fake["exe"]), timeout=30)
    assert runner.version() == "0.2.9-fake"
    monkeypatch.setenv("FAKE_MNEMON_FAIL", "database is corrupt")
    with pytest.raises(ProviderFailed) as failed:
        runner.run(["status"], store="default")
    assert failed.value.message == "mnemon status exited 1: Usage: mnemon ... Error: database is corrupt"
    monkeypatch.delenv("FAKE_MNEMON_FAIL")
    monkeypatch.setenv("FAKE_MNEMON_BADJSON", "{not json")
    with pytest.raises(ProviderFailed) as garbled:
        runner.run(["status"], store="default")
    assert garbled.value.message == "mnemon status returned invalid JSON"
    monkeypatch.delenv("FAKE_MNEMON_BADJSON")
    monkeypatch.setenv("FAKE_MNEMON_SLEEP", "5")
    with pytest.raises(ProviderUnavailable) as slow:
        CliRunner(root, cli_path=str(fake["exe"]), timeout=0.5).run(["status"], store="default")
    assert slow.value.message == "mnemon status timed out after 0.5 s"


def test_a_failing_cli_space_is_a_source_status_not_a_failed_recall(service: SpacesService,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    service.create_space("Project", "p", active=True)
    monkeypatch.setenv("FAKE_MNEMON_FAIL", "boom")
    result = service.recall("anything").to_dict()
    assert result["results"] == [] and result["sources"][0]["status"] == "unavailable"
    assert "boom" in result["sources"][0]["hint"]


def test_calls_for_one_root_are_serialized(root: Path, fake, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time
    monkeypatch.setenv("FAKE_MNEMON_SLEEP", "0.3")
    a, b = CliRunner(root, cli_path=str(fake["exe"])), CliRunner(root, cli_path=str(fake["exe"]))
    assert a.lock is b.lock
    started = time.monotonic()
    threads = [threading.Thread(target=r.version) for r in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert time.monotonic() - started >= 0.6
    assert os.environ["FAKE_MNEMON_SLEEP"] == "0.3"
