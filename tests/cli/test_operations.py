"""``doctor``, ``migrate``, ``redact`` and ``setup`` are operations (issue 29): declared in ``mnemon_ls/ops/``, bound
by the command line's loop like every other, exposed on no other surface; ``setup`` is a command that opens no
workspace host (:attr:`mnemon_ls.ops.surfaces.CliCommand.host`). Their answers, text and ``--json``, good and bad
input, are the behaviour corpus's (``tests/ops/corpus.py``)."""

from __future__ import annotations

import io
import json
import subprocess
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from mnemon_ls.cli import ops as cli_ops
from mnemon_ls.cli.common import emit
from mnemon_ls.cli.full import build_parser
from mnemon_ls.ops import registry
from tests.helpers.procs import child_env
from tests.helpers.zygote import mnemon_command

COMMANDS = {("doctor",): ("storage.doctor", "read"), ("migrate",): ("storage.migrate", "write"),
            ("redact",): ("storage.redact", "write"), ("setup",): ("clients.setup", "write")}


def test_the_last_hand_bound_commands_are_operations_of_the_command_line_only() -> None:
    by_path = registry.by_cli_path()
    assert {path: (by_path[path].name, by_path[path].effect) for path in COMMANDS} == COMMANDS
    for path in COMMANDS:
        assert by_path[path].lsp is None and by_path[path].mcp is None, path
    parser = build_parser()
    for argv in (["doctor"], ["migrate", "--from", "global"], ["redact", "--apply"], ["setup", "codex"]):
        assert parser.parse_args(argv).operation is by_path[(argv[0],)], argv  # bound by the loop, no handler
    setup = by_path[("setup",)]
    assert setup.gated is False and setup.commands[0].host is False
    assert all(by_path[path].commands[0].host for path in COMMANDS if path != ("setup",))


def test_a_command_without_a_host_opens_none_and_takes_the_workspace_flag(tmp_path: Path) -> None:
    """``setup`` runs with ``call.host`` None: the host factory is never called (a settings flag that would make
    opening one fail is not even read), and ``--workspace`` is the params' workspace."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    args = build_parser().parse_args(["setup", "cursor", "--project", "--dry-run", "--json", "--scope", "custom",
                                      "--workspace", str(workspace)])

    def no_host(_args: object) -> None:
        pytest.fail("setup opened a workspace host")

    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_ops.run(args, no_host, emit, lambda value: value, lambda host: pytest.fail("hand edits read"))
    report = json.loads(out.getvalue())
    assert code == 0
    assert [f["path"] for f in report["files"]] == [str(workspace / ".cursor" / "mcp.json")]
    assert report["dryRun"] is True and report["written"] == [] and report["files"][0]["state"] == "created"
    assert list(workspace.iterdir()) == []  # a dry run writes nothing


def test_setup_through_the_console_entry_writes_the_workspace_file_and_removes_it(tmp_path: Path) -> None:
    """``python -m mnemon_ls setup`` (the ``mnemon-ls`` entry) writes, then ``--remove`` deletes what it wrote."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    env = child_env(HOME=str(tmp_path / "home"), MNEMON_DATA_DIR=str(tmp_path / "data"))

    def setup(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*mnemon_command(), "setup", "vscode", "--project", "--workspace",
                               str(workspace), *flags], capture_output=True, text=True, env=env, cwd=str(tmp_path))

    added = setup()
    config = workspace / ".vscode" / "mcp.json"
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines()[0] == f"{config}: created"
    assert json.loads(config.read_text())["servers"]["mnemon-ls"]["args"] == ["mcp"]
    removed = setup("--remove", "--json")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(removed.stdout)["written"] == [str(config)]
    assert not config.exists() and not (tmp_path / "data").exists()
