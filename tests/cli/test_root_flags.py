"""``--data-dir`` and ``--workspace`` on the command line (real CLI subprocesses): an error about the root
they give names the option typed (``--data-dir: /dev/null is a file, ...``, not the setting ``dataDir``), a
path too long for the file system is refused in one short line that repeats it clipped (not echoed whole in
``File name too long``), an empty ``--data-dir`` is refused (a blank editor setting means unset; a flag is
typed), and ``~`` / ``~/x`` are expanded as a shell would and as the ``dataDir`` setting of the editors and
MCP clients is (``mnemon_ls.settings``). Nothing refused writes a byte."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_error_fields import workspace
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

LONG = "/tmp/" + "d" * 100_000


def cli(ws: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mnemon-ls ARGS`` in ``ws`` with ``HOME`` at ``tmp_path/home`` (the root only as ``args`` give it)."""
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    env.pop("MNEMON_DATA_DIR", None)
    return subprocess.run([*mnemon_command(), *args], capture_output=True, text=True, env=env, cwd=ws,
                          stdin=subprocess.DEVNULL, timeout=procs.WAIT_SECONDS)


@pytest.mark.parametrize("args, line", [
    (("--data-dir", LONG), "--data-dir: must be a path the file system can hold (File name too long; got '/tmp/ddd"),
    (("--workspace", LONG), "--workspace: must be a path the file system can hold (File name too long; got '/tmp/ddd"),
    (("--data-dir", "/dev/null/x"),
     "--data-dir: /dev/null is a file, but a parent of the storage root /dev/null/x must be a directory"),
    (("--workspace", "/dev/null/x"), "--workspace: /dev/null is not a directory, so /dev/null/x cannot exist under it"),
    (("--data-dir", ""), "--data-dir: must not be empty (got '')"),
    (("--data-dir", "  "), "--data-dir: must not be empty (got '  ')"),
])
def test_a_root_flag_that_is_refused_is_named_and_repeated_short(tmp_path: Path, args: tuple[str, str],
                                                                  line: str) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    for command in (("runtime", "list"), ("wake",)):
        done = cli(ws, tmp_path, *command, *args)
        assert (done.returncode, done.stdout) == (2, ""), (command, done.stderr[:300])
        assert done.stderr.startswith("mnemon-ls: error: " + line), (command, done.stderr[:300])
        assert len(done.stderr) < 500 and done.stderr.count("\n") == 1, (command, done.stderr[:300])
    error = json.loads(cli(ws, tmp_path, "runtime", "list", *args, "--json").stdout)["error"]
    assert error["field"] == args[0] and error["message"].startswith(line) and len(error["message"]) < 400
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("args, line", [
    (("--workspace", "/dev/null/x"), "--workspace: /dev/null is not a directory, so /dev/null/x cannot exist under it"),
    (("--workspace", ""), "--workspace: must not be empty (got '')"),
    (("--data-dir", ""), "--data-dir: must not be empty (got '')"),
    (("--workspace", LONG), "--workspace: must be a path the file system can hold (File name too long; got '/tmp/ddd"),
    (("--data-dir", "/dev/null/x"),
     "--data-dir: /dev/null is a file, but a parent of the storage root /dev/null/x must be a directory"),
    (("--data-dir", LONG), "--data-dir: must be a path the file system can hold (File name too long; got '/tmp/ddd"),
    (("--workspace", "/dev/null"), "--workspace: /dev/null is not a directory"),
    (("--workspace", "/nonexistent-mnemon-test/x"), "--workspace: /nonexistent-mnemon-test/x does not exist"),
])
def test_the_mcp_server_refuses_a_root_flag_the_same_way(tmp_path: Path, args: tuple[str, str], line: str) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, "mcp", *args)  # standard input is empty: a server that started would end at once, 0
    assert (done.returncode, done.stdout) == (2, ""), done.stderr[:300]
    assert done.stderr.startswith("mnemon-ls: error: " + line) and len(done.stderr) < 500, done.stderr[:300]
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("given, under", [("~", ""), ("~/x", "x"), ("~/x/../y", "y")])
def test_a_tilde_data_dir_is_the_home_directory_as_in_the_settings(tmp_path: Path, given: str, under: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemon_ls.settings import load_settings

    ws = workspace(tmp_path)
    home = tmp_path / "home"  # cli() runs with HOME here
    done = cli(ws, tmp_path, "runtime", "add", "--content", "deploys go through staging", "--data-dir", given)
    assert done.returncode == 0, done.stderr
    root = home / under if under else home
    assert (root / "runtime" / "memories.json").is_file()
    assert not (ws / "~").exists()
    monkeypatch.setenv("HOME", str(home))
    assert load_settings({"dataDir": given}).data_dir == str(root)  # what an editor's or MCP client's dataDir gives


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
def test_a_root_the_file_system_will_not_create_is_a_storage_error_with_its_code(tmp_path: Path) -> None:
    # /proc exists but refuses a new directory (mkdir answers ENOENT): this was "error: /proc/nosuch: No such
    # file or directory", exit 1, and nothing on stdout with --json
    ws = workspace(tmp_path)
    done = cli(ws, tmp_path, "runtime", "add", "--content", "x", "--data-dir", "/proc/nosuch", "--json")
    assert done.returncode == 4, done.stderr
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["file"], error["errno"]) == ("storage-error", "/proc/nosuch", "ENOENT"), error
    assert done.stderr == ("mnemon-ls: error: /proc/nosuch: the file system refused the operation (this file "
                           "system does not allow creating a directory here)\n")


def test_scope_global_with_a_data_dir_is_the_global_root_under_that_directory(tmp_path: Path) -> None:
    """``--scope global --data-dir X`` was ``~/.mnemon`` (the data dir silently ignored): X is the global root,
    USER.md's too (docs/storage.md), and nothing is written under the home directory."""
    ws, data = workspace(tmp_path), tmp_path / "g"
    (tmp_path / "home").mkdir()
    scope = ("--scope", "global", "--data-dir", str(data))
    added = cli(ws, tmp_path, "runtime", "add", "--target", "user", "--content", "prefers short answers", *scope)
    assert added.returncode == 0, added.stderr
    assert (data / "runtime" / "USER.md").read_text() == "prefers short answers\n"
    doctor = json.loads(cli(ws, tmp_path, "doctor", "--json", *scope).stdout)
    assert (doctor["root"], doctor["userRoot"], doctor["scope"]) == (str(data), str(data), "global")
    wake = cli(ws, tmp_path, "wake", *scope).stdout
    assert "[importance=normal; created=0d; updated=0d]\nprefers short answers\n" in wake
    assert os.listdir(tmp_path / "home") == []


def test_data_dir_with_scope_workspace_is_refused_not_ignored(tmp_path: Path) -> None:
    """``--scope workspace`` keeps its root in the workspace's ``.mnemon/``: a ``--data-dir`` typed with it was
    ignored silently; it is refused naming the option, and nothing is written anywhere."""
    import subprocess

    from tests.cli.test_error_fields import workspace
    from tests.cli.test_root_values import run

    ws = workspace(tmp_path)
    done = run(ws, tmp_path, "runtime", "add", "--content", "x", "--scope", "workspace", "--data-dir",
               str(tmp_path / "x"))
    assert isinstance(done, subprocess.CompletedProcess)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("mnemon-ls: error: --data-dir: is not used with --scope workspace (its storage root is "
                           "the workspace's .mnemon/); leave one of them out, or give --scope custom for this root\n")
    assert not (tmp_path / "x").exists() and not (ws / ".mnemon").exists()
