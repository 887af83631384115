"""A relative ``MNEMON_DATA_DIR`` is refused as ``--data-dir`` is (``must be an absolute path or start with
~/``), named as the variable, on every surface, and nothing is written: the CLI (exit 2, one line), ``mnemon-ls
mcp`` (refused at start, exit 2) and the language server (the workspace folder is refused with a message naming
the variable). A relative root would move with the working directory (``./relative/dir`` inside the
repository). Real subprocesses in ``tmp_path``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import Cli
from tests.lsp.conftest import Launcher
from tests.lsp.rawclient import RawServer

RULE = "MNEMON_DATA_DIR: must be an absolute path or start with ~/ (got 'relative/dir')"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def _tree(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*") if ".git" not in p.relative_to(top).parts)


def test_cli_and_mcp_refuse_a_relative_data_dir_and_write_nothing(cli: Cli) -> None:
    before = _tree(cli.tmp)
    env = {"MNEMON_DATA_DIR": "relative/dir"}
    for argv in (("runtime", "add", "--content", "x"), ("wake",), ("remember", "x"), ("recall", "x"),
                 ("doc", "list"), ("records", "list"), ("runtime", "add", "--content", "x", "--scope", "workspaces")):
        result = cli.run(*argv, env=env, scoped=False)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"mnemon-ls: error: {RULE}\n"), argv
    data = json.loads(cli.run("runtime", "add", "--content", "x", "--json", env=env, scoped=False).stdout)
    assert data["error"]["field"] == "MNEMON_DATA_DIR" and data["error"]["code"] == "invalid-input"
    served = cli.run("mcp", env=env, stdin="", scoped=False)
    assert (served.returncode, served.stdout, served.stderr) == (2, "", f"mnemon-ls: error: {RULE}\n")
    assert _tree(cli.tmp) == before  # nothing written: no ws/relative/dir, no data, no records
    # a value starting with ~/ stays accepted (under $HOME)
    added = cli.run("runtime", "add", "--content", "x", env={"MNEMON_DATA_DIR": "~/mnemon-data"}, scoped=False)
    assert added.returncode == 0, added.stderr
    assert (cli.home / "mnemon-data").is_dir() and not (cli.ws / "~").exists()


async def test_language_server_refuses_the_folder_naming_the_variable(tmp_path: Path) -> None:
    lsp = Launcher(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    server = RawServer()
    await server.start(lsp.env() | {"MNEMON_DATA_DIR": "relative/dir"}, ws)
    try:
        await server.initialize([ws])
        shown = await server.notification("window/showMessage", lambda params: RULE in params["message"])
        assert f"cannot use workspace folder {ws.as_uri()}: {RULE}" in shown["message"]
        assert (await server.call("mnemon/status", {}))["result"]["workspaces"] == []
    finally:
        await server.close()
    assert sorted(p.name for p in ws.iterdir()) == []
