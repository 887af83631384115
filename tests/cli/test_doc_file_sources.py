"""``doc create --file`` takes its body and its source path from the file: a ``--content`` or ``--source`` given
with it is refused naming the option, and nothing is written. ``--source`` was dropped silently before."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_error_fields import workspace
from tests.cli.test_root_values import run
from tests.gitrepo import snapshot


def _run(ws: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(ws, data.parent, *args, "--data-dir", str(data), "--json")


@pytest.mark.parametrize("extra, option, rule", [
    (("--content", "x"), "--content", "is not allowed together with a file to read (the file is the body)"),
    (("--source", "b.py"), "--source",
     "is not allowed together with a file to read (the file is the document's source path)")])
def test_a_body_or_source_given_with_file_is_refused(tmp_path: Path, extra: tuple[str, ...], option: str,
                                                      rule: str) -> None:
    ws = workspace(tmp_path)
    (ws / "a.md").write_text("# Design\n\nThe cache is per branch.\n", encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    before = snapshot(data)
    done = _run(ws, data, "doc", "create", "--file", "a.md", *extra)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"mnemon-ls: error: {option}: {rule}\n"
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["field"], error["rule"]) == ("invalid-input", option, rule)
    assert snapshot(data) == before
    made = _run(ws, data, "doc", "create", "--file", "a.md")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["document"]["sourcePaths"] == ["a.md"]
