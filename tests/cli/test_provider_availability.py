"""``mnemon-ls provider list`` names every engine of the provider matrix that no package provides with the
exact reason it cannot run on this project's machines (mnemon_ls/spaces/provider_availability.py), in its
text and its JSON (the ``mnemon/providers/list`` answer), and says whether the built-in ``mnemon-cli``
provider finds a Mnemon CLI binary. Real subprocesses of the console script in a real git repository."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from mnemon_ls.spaces.provider_availability import MNEMON_CLI, UNAVAILABLE
from tests.cli.test_cli import Cli

FAKE_MNEMON = Path(__file__).resolve().parents[1] / "helpers" / "fake_mnemon.py"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def _no_mnemon_path(tmp: Path) -> str:
    """A PATH holding only this Python's directory (no ``mnemon`` in it)."""
    empty = tmp / "bin-empty"
    empty.mkdir()
    return os.pathsep.join([str(empty), str(Path(sys.executable).parent)])


def test_the_engines_that_cannot_run_here_are_listed_with_their_reason(cli: Cli, tmp_path: Path) -> None:
    env = {"PATH": _no_mnemon_path(tmp_path), "MNEMON_CLI_PATH": ""}
    if any(Path(d, "mnemon").exists() for d in ("/usr/local/bin", "/usr/bin", str(Path(cli.home, ".local/bin")))):
        pytest.skip("a mnemon binary is installed on this machine")
    done = cli.run("provider", "list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    import json

    data = json.loads(done.stdout)
    views = {v["providerId"]: v for v in data["providers"]}
    for provider_id, reason in UNAVAILABLE.items():
        assert views[provider_id]["installed"] is False
        assert views[provider_id]["unavailable"] == reason
    # a provider with a package of its own (installed or not) is never "unavailable"
    assert "unavailable" not in views["mem0"] and "unavailable" not in views["holographic"]
    assert data["mnemonCli"] == {"available": False, "reason": MNEMON_CLI}

    text = cli.run("provider", "list", env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    for provider_id, reason in UNAVAILABLE.items():
        assert f"  {provider_id:<12} {reason}" in lines
    assert lines[-1] == f"mnemon-cli   built in: not available: {MNEMON_CLI}"


def test_a_mnemon_binary_on_path_is_named(cli: Cli, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(FAKE_MNEMON, bin_dir / "mnemon")
    (bin_dir / "mnemon").chmod(0o755)
    env = {"PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent)]), "MNEMON_CLI_PATH": ""}
    done = cli.run("provider", "list", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"mnemon-cli   built in: the Mnemon CLI at {bin_dir / 'mnemon'}"
