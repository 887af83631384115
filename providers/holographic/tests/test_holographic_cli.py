"""The Holographic provider's bad inputs through ``mnemon-ls provider ...`` subprocesses (the real engine):
an engine that is missing or a store that does not open is a clear error with an exit code, and the
provider file keeps its bytes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    env.update(MNEMON_DATA_DIR=str(tmp_path / "data"), MNEMON_STORAGE_SCOPE="global", MNEMON_SEMANTIC="off")
    return subprocess.run([sys.executable, "-m", "mnemon_ls", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


def test_a_missing_engine_or_a_store_that_does_not_open_changes_nothing(tmp_path: Path) -> None:
    configured = cli(tmp_path, "provider", "configure", "holographic", "--set", "minTrust=0.2")
    assert configured.returncode == 0, configured.stderr
    providers = tmp_path / "data" / "state" / "memory-providers.json"
    before = providers.read_bytes()
    missing = cli(tmp_path, "provider", "enable", "holographic", "--set", f"enginePath={tmp_path / 'no-hermes'}")
    assert missing.returncode == 1, missing.stderr  # provider-unavailable: "anything else"
    assert missing.stderr.startswith("mnemon-ls: error: provider holographic") and "hermes-agent" in missing.stderr
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a SQLite database" * 200)
    broken = cli(tmp_path, "provider", "enable", "holographic", "--set", f"dataPath={garbage}")
    assert broken.returncode == missing.returncode and str(garbage) in broken.stderr, broken.stderr
    assert cli(tmp_path, "provider", "test", "holographic").returncode == 0  # the stored configuration is intact
    assert providers.read_bytes() == before
    assert garbage.read_bytes() == b"not a SQLite database" * 200
    listed = cli(tmp_path, "provider", "list")
    assert "holographic  configured" in listed.stdout, listed.stdout
