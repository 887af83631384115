"""``mnemon-ls provider test mem0`` is read-only (real CLI subprocesses, the real engine): where no Mem0
store exists it creates none (an attack pass saw it make the data directory, the Qdrant collection and the
history database) and fails with exit code 1, in text and ``--json``; on an existing store it checks health,
namespaces and one probe recall, and no file changes (bytes and modification times)."""

from __future__ import annotations

import json
from pathlib import Path

from provider_cli import cli, tree_state

from mnemon_ls.spaces import SpacesService


def test_provider_test_creates_no_mem0_store_and_fails(tmp_path: Path) -> None:
    store = tmp_path / "mem0"
    assert cli(tmp_path, "provider", "configure", "mem0", "--set", f"dataPath={store}").returncode == 0
    before = tree_state(tmp_path, mtimes=True)
    tested = cli(tmp_path, "provider", "test", "mem0", timeout=300)
    assert tested.returncode == 1, tested.stdout + tested.stderr
    assert tested.stdout.startswith("FAILED: ") and "no Mem0 store there yet" in tested.stdout, tested.stdout
    as_json = cli(tmp_path, "provider", "test", "mem0", "--json", timeout=300)
    assert as_json.returncode == 1, as_json.stderr
    report = json.loads(as_json.stdout)
    assert (report["ok"], report["health"]["ok"], report["recall"]) == (False, False, None)
    assert not store.exists() and tree_state(tmp_path, mtimes=True) == before


def test_provider_test_on_an_existing_mem0_store_writes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "mem0"
    service = SpacesService(tmp_path / "data", provider_timeout=300)
    service.thirdparty.enable("mem0", {"dataPath": str(store)})
    team = service.create_space("Team", "team decisions", active=True, provider="mem0").record.id
    service.remember("We deploy on Tuesdays after review", space_id=team)
    service.close()
    before = tree_state(tmp_path, mtimes=True)
    tested = cli(tmp_path, "provider", "test", "mem0", "--json", timeout=300)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    report = json.loads(tested.stdout)
    assert report["ok"] is True and report["health"]["items"] == 1
    assert report["recall"]["ok"] is True and report["recall"]["namespace"] == "user=team"
    assert report["recall"]["items"] == 1  # the probe reads the store (limit 1), it adds nothing
    assert tree_state(tmp_path, mtimes=True) == before
