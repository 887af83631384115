"""``mnemon-ls provider ...`` through real CLI subprocesses, whatever provider packages this Python has: an
unknown provider name or one without a package is refused without building an install command from the
name, and nothing is written under the storage root."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.spaces import plugins
from tests.helpers.zygote import mnemon_command


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([*mnemon_command(), *args, "--scope", "global"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)


@pytest.mark.parametrize("action", ["configure", "enable", "test", "disable", "discover"])
def test_an_unknown_provider_name_is_refused_without_an_install_hint_made_from_it(tmp_path: Path, action: str) -> None:
    typed = "foo; rm -rf ~"
    done = cli(tmp_path, "provider", action, typed)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("mnemon-ls: error: NAME: is not a known provider"), done.stderr
    assert "rm -rf" not in done.stderr and "foo" not in done.stderr and "pip install" not in done.stderr
    assert "provider packages: byterover, hindsight, holographic, mem0, openviking, postgres" in done.stderr
    for name in plugins.installed():
        assert name in done.stderr.split("installed: ", 1)[1].split(";", 1)[0]
    assert not (tmp_path / "data").exists()


def test_a_reference_provider_without_a_package_names_none_to_install(tmp_path: Path) -> None:
    done = cli(tmp_path, "provider", "test", "honcho")
    assert done.returncode == 3, done.stderr
    assert "no mnemon-ls package provides it" in done.stderr
    assert "mnemon-ls-provider-honcho" not in done.stderr and "pip install" not in done.stderr
    assert "provider packages: byterover, hindsight, holographic, mem0, openviking, postgres" in done.stderr
    assert not (tmp_path / "data").exists()


def test_the_install_hint_of_a_shipped_provider_names_its_package() -> None:
    error = plugins.not_installed("mem0")
    assert error.data == {"provider": "mem0", "reason": "not-installed"}
    assert "the mnemon-ls-provider-mem0 package" in error.message and "pip install ./providers/mem0" in error.message


def test_doctor_reports_a_configured_provider_from_its_configuration_alone(tmp_path: Path) -> None:
    from mnemon_ls.spaces import SpacesService

    assert "provider " not in cli(tmp_path, "doctor").stdout  # nothing configured: nothing to say
    service = SpacesService(tmp_path / "data")
    service.configure_provider("honcho", {"endpoint": "https://honcho.example.test/v1", "apiKey": "sk-not-shown-1"},
                               enabled=True)
    service.close()
    done = cli(tmp_path, "doctor")
    assert ("[warning] provider honcho: enabled; 0 spaces (0 active); fields: endpoint, apiKey (secret); its package "
            "is not installed, so its spaces are unavailable") in done.stdout, done.stdout
    assert "sk-not-shown-1" not in done.stdout and "honcho.example.test" not in done.stdout


def test_doctor_counts_a_warning_in_its_summary_and_still_exits_0(tmp_path: Path) -> None:
    from mnemon_ls.spaces import SpacesService

    service = SpacesService(tmp_path / "data")
    service.configure_provider("honcho", {"endpoint": "https://honcho.example.test/v1", "apiKey": "sk-not-shown-2"},
                               enabled=True)
    service.close()
    done = cli(tmp_path, "doctor")
    assert done.returncode == 0, done.stderr  # warnings never fail doctor; only a problem exits 1
    assert "no problems found" not in done.stdout
    assert done.stdout.splitlines()[-1].startswith("no problems; "), done.stdout
    assert "provider honcho" in done.stdout.splitlines()[-1]
    warnings = [line for line in done.stdout.splitlines() if line.startswith("[warning]")]
    assert done.stdout.splitlines()[-1].split("; ")[1].startswith(
        f"{len(warnings)} warning{'' if len(warnings) == 1 else 's'}: ")
