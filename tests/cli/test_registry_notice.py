"""A Memory Space registry that a repair rebuilt says so where a person reads the spaces, not only in
``doctor`` (a new user's try): ``space list`` (text and ``--json``, on stderr so the JSON stays an array) and
``recall`` (a ``note:`` line, and the answer's ``notices``) name the damaged copy once, in the command that
repaired it and in every later one, until the copy is deleted. Real CLI subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    return subprocess.run([*mnemon_command(), *args, "--scope", "custom", "--data-dir", str(tmp_path / "root")],
                          capture_output=True, text=True, env=env, cwd=tmp_path / "ws", timeout=60)


def test_space_list_and_recall_name_the_repair_once_until_the_copy_is_deleted(tmp_path: Path) -> None:
    make_repo(tmp_path / "ws")
    assert cli(tmp_path, "space", "create", "--name", "Project", "--description", "facts", "--active").returncode == 0
    assert cli(tmp_path, "remember", "the deploy runs nightly at two").returncode == 0
    quiet = cli(tmp_path, "space", "list")
    assert (quiet.returncode, quiet.stderr) == (0, "")
    (tmp_path / "root" / "data" / ".dsh-memory-bodies.json").write_text('{"broken')

    listed = cli(tmp_path, "space", "list")  # the command that repairs it
    [copy] = sorted((tmp_path / "root" / "data" / ".quarantine").iterdir())
    assert listed.returncode == 0 and listed.stdout.startswith("* default  Project  (mnemon-native)")
    note = (f"a damaged .dsh-memory-bodies.json was rebuilt from what could be salvaged; the damaged copy is kept at "
            f"{copy} (`mnemon-ls doctor` says more; delete the copy once the rebuilt file has what you need)")
    assert listed.stderr.count(str(copy)) == 1, listed.stderr
    assert "; rebuilt with 1 recoverable space;" in listed.stderr, listed.stderr  # one space, not "1 ... spaces"
    later = cli(tmp_path, "space", "list")
    assert later.stderr == f"mnemon-ls: note: {note}\n"
    scripted = cli(tmp_path, "space", "list", "--json")
    assert [s["id"] for s in json.loads(scripted.stdout)] == ["default"]
    assert scripted.stderr == f"mnemon-ls: note: {note}\n"
    recalled = cli(tmp_path, "recall", "deploy nightly")
    assert recalled.stdout.splitlines()[1:] == [f"note: {note}", "1 result(s)"]
    assert json.loads(cli(tmp_path, "recall", "deploy nightly", "--json").stdout)["notices"] == [note]

    copy.unlink()  # checked and deleted: nothing more to say
    assert cli(tmp_path, "space", "list").stderr == ""
    assert "note:" not in cli(tmp_path, "recall", "deploy nightly").stdout


async def test_an_empty_list_under_a_newer_catalog_does_not_invite_space_create(tmp_path: Path) -> None:
    """A catalog written by a newer version is read-only here (no space shown, none can be created): the empty
    list says so beside the note, on the command line and in the MCP tool, instead of inviting ``space create``."""
    from tests.mcp.conftest import answer, mcp_session, server_env

    make_repo(tmp_path / "ws")
    assert cli(tmp_path, "space", "list").stdout == "no Memory Space yet (`mnemon-ls space create`)\n"
    catalog = tmp_path / "root" / "data" / ".dsh-memory-bodies.json"
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_text('{"version": 9, "bodies": []}')
    note = (f"{catalog} was written by a newer version of mnemon-ls (format version 9; this version reads 1); it is "
            "left unchanged and read-only here: the native Memory Spaces are not shown and cannot be created, "
            "changed or written to until mnemon-ls is upgraded")
    listed = cli(tmp_path, "space", "list")
    assert (listed.stdout, listed.stderr) == ("no Memory Space can be shown here (see the note above)\n",
                                              f"mnemon-ls: note: {note}\n")
    args = ["--workspace", str(tmp_path / "ws"), "--scope", "custom", "--data-dir", str(tmp_path / "root")]
    async with mcp_session(args, env=server_env()) as session:
        said = await answer(session, "mnemon_memory_spaces", {"action": "list"})
    assert said == f"No Memory Space can be shown here (see the note).\nnote: {note}"
    assert catalog.read_text() == '{"version": 9, "bodies": []}'
