"""How the CLI takes a storage root someone typed: only ``~`` and ``~/`` expand (``~name``, another user's home,
is refused with that rule on ``--data-dir``, ``MNEMON_DATA_DIR`` and the ``dataDir`` setting), a symbolic link
loop is named as one, and a name too long for the file system is bad input naming the option. The real CLI in a
temporary git repository with a temporary data directory."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_error_fields import workspace
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

OWN_HOME = ("must not start with ~name (another user's home): only ~ or ~/ (your own home) is expanded; "
            "give an absolute path instead")
#: The rule for a path the CLI reads relative to the current directory (``--workspace``, ``--output``, FILE).
OWN_HOME_CWD = OWN_HOME.replace("an absolute path", "a path relative to the current directory, or an absolute one")


def run(ws: Path, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"} | env
    return subprocess.run([*mnemon_command(), *args], capture_output=True, text=True, env=environment, cwd=ws,
                          timeout=60)


@pytest.mark.parametrize("value", ["~root/x", "~nosuchuser/x"])
def test_data_dir_of_another_users_home_is_refused(tmp_path: Path, value: str) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = run(ws, tmp_path, "recall", "parse", "--data-dir", value)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mnemon-ls: error: --data-dir: {OWN_HOME} (got '{value}')\n"
    scripted = json.loads(run(ws, tmp_path, "recall", "parse", "--data-dir", value, "--json").stdout)["error"]
    assert (scripted["field"], scripted["rule"]) == ("--data-dir", f"{OWN_HOME} (got '{value}')")
    done = run(ws, tmp_path, "recall", "parse", MNEMON_DATA_DIR=value)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mnemon-ls: error: MNEMON_DATA_DIR: {OWN_HOME} (got '{value}')\n"
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("command", [("recall", "parse"), ("wake",)])
def test_workspace_of_another_users_home_is_refused(tmp_path: Path, command: tuple[str, ...]) -> None:
    """``--workspace ~root/x`` was looked up in the password database (``os.path.expanduser``): another user's
    home became the workspace. Only ``~`` and ``~/`` expand, as for every configured path."""
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = run(ws, tmp_path, *command, "--workspace", "~root/x", "--data-dir", str(tmp_path / "root"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mnemon-ls: error: --workspace: {OWN_HOME_CWD} (got '~root/x')\n"
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("option", ["--workspace", "--data-dir"])
def test_another_users_home_is_a_value_error_with_the_value_typed(tmp_path: Path, option: str) -> None:
    """An attack pass: the ``--json`` error of ``--workspace ~root/x`` had field and rule but not the value
    refused, which every other refused value carries (``--limit abc``: ``"value": "abc"``)."""
    ws = workspace(tmp_path)
    done = run(ws, tmp_path, "recall", "parse", option, "~root/x", "--json")
    scripted = json.loads(done.stdout)["error"]
    rule = OWN_HOME_CWD if option == "--workspace" else OWN_HOME
    assert (scripted["field"], scripted["rule"], scripted["value"]) == (option, f"{rule} (got '~root/x')", "~root/x")


def test_a_settings_flag_refused_has_the_value_and_the_setting(tmp_path: Path) -> None:
    """An attack pass: ``--user-limit-bytes 0 --json`` had field and rule but neither the value nor the setting
    (``param``) a refused ``--limit 0`` has."""
    ws = workspace(tmp_path)
    done = run(ws, tmp_path, "recall", "parse", "--user-limit-bytes", "0", "--json")
    scripted = json.loads(done.stdout)["error"]
    assert (scripted["field"], scripted["value"], scripted["param"]) == (
        "--user-limit-bytes", 0, "runtimeMemory.userLimitBytes")


def test_the_data_dir_setting_has_the_same_rule_and_tilde_slash_expands(tmp_path: Path) -> None:
    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.settings import load_settings

    with pytest.raises(InvalidInput) as info:
        load_settings({"dataDir": "~root/x"})
    assert info.value.field == "dataDir" and info.value.rule.startswith(OWN_HOME)
    ws = workspace(tmp_path)
    done = run(ws, tmp_path, "runtime", "add", "--content", "parse splits", "--data-dir", "~/store")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "home" / "store" / "runtime" / "memories.json").is_file()


def test_a_symbolic_link_loop_as_data_dir_is_named_a_loop(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    before = procs.tree_snapshot(tmp_path / "home")
    done = run(ws, tmp_path, "recall", "parse", "--data-dir", str(tmp_path / "loop1"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"mnemon-ls: error: --data-dir: {tmp_path / 'loop1'} is a symbolic link loop (ELOOP), "
                           "but the storage root must be a directory\n")
    done = run(ws, tmp_path, "recall", "parse", "--data-dir", str(tmp_path / "loop1" / "sub"))
    assert done.stderr == (f"mnemon-ls: error: --data-dir: {tmp_path / 'loop1'} is a symbolic link loop (ELOOP), "
                           f"but a parent of the storage root {tmp_path / 'loop1' / 'sub'} must be a directory\n")
    assert procs.tree_snapshot(tmp_path / "home") == before and not (tmp_path / "root").exists()


@pytest.mark.parametrize("args, field", [
    (("records", "import"), "FILE"), (("pack", "import"), "FILE"), (("import", "agents-md", "--from"), "--from")])
def test_an_input_file_name_too_long_is_bad_input_naming_the_argument(tmp_path: Path, args: tuple[str, ...],
                                                                      field: str) -> None:
    ws = workspace(tmp_path)
    name = str(tmp_path / ("a" * 300))
    done = run(ws, tmp_path, *args, name, "--data-dir", str(tmp_path / "root"))
    shown = "'" + name + "'"
    shown = shown if len(shown) <= 256 else shown[:256] + "..."
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"mnemon-ls: error: {field}: must be a path the file system can hold (File name too long; "
                           f"got {shown})\n")


@pytest.mark.parametrize("args, field", [
    (("records", "import"), "FILE"), (("pack", "import"), "FILE"), (("import", "agents-md", "--from"), "--from")])
def test_a_control_character_in_an_input_file_name_is_echoed_escaped(tmp_path: Path, args: tuple[str, ...],
                                                                      field: str) -> None:
    ws = workspace(tmp_path)
    done = run(ws, tmp_path, *args, str(tmp_path / "gone\x1b[2Jx"), "--data-dir", str(tmp_path / "root"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mnemon-ls: error: {field}: {tmp_path}/gone\\x1b[2Jx does not exist\n"


def test_an_import_plan_shows_a_control_character_of_its_paths_escaped(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    source = tmp_path / "src\x1b[2Jd"
    source.mkdir()
    (source / "AGENTS.md").write_text("Run the tests with make check.\n", encoding="utf-8")
    done = run(ws, tmp_path, "import", "agents-md", "--from", str(source), "--dry-run", "--data-dir",
               str(tmp_path / "root"))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    shown = f"{tmp_path}/src\\x1b[2Jd"
    assert f"     from {shown}/AGENTS.md (AGENTS.md): " in done.stdout
    assert f"Run `mnemon-ls import agents-md --from {shown}` to import" in done.stdout


def test_setup_workspace_of_another_users_home_is_refused(tmp_path: Path) -> None:
    """``setup --project --workspace ~root/x`` planned ``/root/x/.mcp.json`` (its own ``os.path.expanduser``);
    the setup workspace has the rule of every workspace: ``~/`` is your home, ``~name`` is refused."""
    ws = workspace(tmp_path)
    (tmp_path / "home" / "proj").mkdir(parents=True)
    before = procs.tree_snapshot(tmp_path)
    done = run(ws, tmp_path, "setup", "claude-code", "--project", "--dry-run", "--workspace", "~root/x")
    assert (done.returncode, done.stdout) == (2, "")
    # setup's workspace is the setup operation's own field (an absolute path on every surface)
    assert done.stderr == f"mnemon-ls: error: --workspace: {OWN_HOME} (got '~root/x')\n"
    done = run(ws, tmp_path, "setup", "claude-code", "--project", "--dry-run", "--workspace", "~/proj")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{tmp_path / 'home' / 'proj' / '.mcp.json'}: would be created\n")
    assert procs.tree_snapshot(tmp_path) == before
