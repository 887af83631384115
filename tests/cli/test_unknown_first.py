"""A mistyped option is named before the required option it left missing (real CLI subprocesses): argparse
checks required options first, so ``runtime add --contnet y`` said only that ``--content`` is required and
hid the typo; now the one line names the unrecognized argument, then what is missing (``mnemon_ls.cli.parser``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_error_fields import cli, workspace
from tests.helpers import procs


@pytest.mark.parametrize("args, line", [
    (("runtime", "add", "--contnet", "y"),
     "unrecognized arguments: --contnet y; the following arguments are required: --content "
     "(see `mnemon-ls runtime add --help`)"),
    (("runtime", "add", "--contnet"),
     "unrecognized arguments: --contnet; the following arguments are required: --content "
     "(see `mnemon-ls runtime add --help`)"),
    (("space", "link", "a", "--spcae", "Project"),
     "unrecognized arguments: --spcae; the following arguments are required: --space "  # Project is TARGET_ID
     "(see `mnemon-ls space link --help`)"),
    # unchanged: nothing mistyped, or nothing missing
    (("runtime", "add"), "the following arguments are required: --content (see `mnemon-ls runtime add --help`)"),
    (("runtime", "add", "--content", "x", "--contnet", "y"),
     "unrecognized arguments: --contnet y (see `mnemon-ls runtime add --help`)"),
])
def test_an_unrecognized_option_is_named_before_a_missing_one(tmp_path: Path, args: tuple[str, ...],
                                                              line: str) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: {line}\n")
    scripted = cli(ws, tmp_path, *args, "--json")
    assert json.loads(scripted.stdout)["error"]["message"] == line.rsplit(" (see ", 1)[0]
    assert procs.tree_snapshot(tmp_path) == before
