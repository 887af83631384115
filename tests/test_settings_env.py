"""``MNEMON_*`` environment settings for the command line and the MCP server: flags win, bad values name
the variable or the setting, and nothing is written by a rejected value."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.settings import ENVIRONMENT_SETTINGS, Settings, load_settings, settings_from_environment
from tests.helpers.procs import child_env
from tests.helpers.zygote import mnemon_command

REPO = Path(__file__).resolve().parents[1]


def test_every_variable_names_a_real_setting() -> None:
    aliases = {f.alias for f in Settings.model_fields.values()} | {"userLimitBytes", "memoryLimitBytes"}
    assert set(ENVIRONMENT_SETTINGS.values()) <= aliases
    assert "MNEMON_DATA_DIR" not in ENVIRONMENT_SETTINGS  # the global root, read by mnemon_ls.roots


def test_environment_values_are_parsed_and_validated() -> None:
    env = {"MNEMON_STORAGE_SCOPE": "workspace", "MNEMON_MEMORY_LIMIT_BYTES": "20480", "MNEMON_RECALL_MODE": "off",
           "MNEMON_BRANCH_RECALL": "", "UNRELATED": "x"}
    settings = load_settings({}).with_overrides(**settings_from_environment(env))
    assert (settings.storage_scope, settings.runtime_memory.memory_limit_bytes, settings.recall_mode,
            settings.branch_recall) == ("workspace", 20480, "off", "filter")
    with pytest.raises(InvalidInput) as bad_int:
        settings_from_environment({"MNEMON_WAKE_BUDGET_CHARS": "12k"})
    assert bad_int.value.field == "MNEMON_WAKE_BUDGET_CHARS" and "must be an integer" in bad_int.value.rule
    with pytest.raises(InvalidInput) as bad_enum:
        load_settings({}).with_overrides(**settings_from_environment({"MNEMON_STORAGE_SCOPE": "everywhere"}))
    assert bad_enum.value.field == "storageScope"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mnemon_command(), *args], capture_output=True, text=True,
                          env=child_env(**env), cwd=str(REPO), timeout=60)


def test_the_cli_reads_the_environment_and_flags_win(tmp_path: Path) -> None:
    root = tmp_path / "root"
    wake = run("wake", "--scope", "custom", "--data-dir", str(root), "--json", MNEMON_MEMORY_LIMIT_BYTES="20000")
    assert wake.returncode == 0, wake.stderr
    assert "UTF-8 bytes: 0/20000)" in json.loads(wake.stdout)["text"]
    flagged = run("wake", "--scope", "custom", "--data-dir", str(root), "--memory-limit-bytes", "3000", "--json",
                  MNEMON_MEMORY_LIMIT_BYTES="20000")
    assert "UTF-8 bytes: 0/3000)" in json.loads(flagged.stdout)["text"]
    bad = run("runtime", "add", "--content", "x", "--scope", "custom", "--data-dir", str(root),
              MNEMON_USER_LIMIT_BYTES="lots")
    assert bad.returncode == 2 and bad.stderr == "mnemon-ls: error: MNEMON_USER_LIMIT_BYTES: must be an integer (got 'lots')\n"
    assert not root.exists()
