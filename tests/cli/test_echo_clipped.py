"""A value someone sent that an error repeats is repeated escaped and clipped (``errors.echo_value``), never
whole: a 20,000-character value sent through the real CLI (subprocesses, plain and ``--json``) or handed to
the operation's own validator comes back as at most a few hundred characters that still name the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.cli.test_error_fields import cli, workspace
from tests.helpers import procs

HUGE = "y" * 20_000


@pytest.mark.parametrize("args, field, start", [
    (("cited", "/elsewhere/" + HUGE[:4000]), "FILE", "FILE: must be a file inside the workspace"),  # within 4096
    (("runtime", "add", "--content", "x", "--target", "memory", "--branch", "a.." + HUGE), "--branch",
     "--branch a.."),
    (("records", "create", "--title", "t", "--content", "c", "--source-ref", HUGE), "--source-ref",
     "--source-ref yyy"),
    (("migrate", "--from", HUGE), "--from", "--from: must be global, workspace or an absolute path (got 'yyy"),
])
def test_the_cli_repeats_a_huge_value_short(tmp_path: Path, args: tuple[str, ...], field: str, start: str) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("mnemon-ls: error: " + start), done.stderr[:300]
    assert len(done.stderr) < 700 and "y..." in done.stderr, done.stderr[:300]
    error = json.loads(cli(ws, tmp_path, *args, "--json").stdout)["error"]
    assert error["field"] == field and len(error["message"]) < 400 and error["message"].endswith("y...)"), error
    assert procs.tree_snapshot(tmp_path) == before


def _validators() -> list[tuple[Callable[[Any], Any], str]]:
    from mnemon_ls.citations.model import resolve
    from mnemon_ls.folders import uri_to_path
    from mnemon_ls.packs.export import validate_scope
    from mnemon_ls.packs.importer import validate_flag, validate_mode
    from mnemon_ls.redact import validate_mode as secrets_mode
    from mnemon_ls.roots import canonical_workspace_path
    from mnemon_ls.runtime.model import validate_branches, validate_target

    return [(validate_target, "target"), (lambda v: validate_branches([v], "memory"), "branches[0]"),
            (secrets_mode, "secrets"), (validate_mode, "mode"),
            (validate_scope, "packScope"), (lambda v: validate_flag(v, "dryRun"), "dryRun"),
            (lambda v: uri_to_path("ftp://" + v), "workspace"), (canonical_workspace_path, "workspace"),
            (lambda v: resolve(Path("/work"), None, [{"path": "/elsewhere/" + v[:4000]}]), "cites[0].path")]


@pytest.mark.parametrize("index", range(9))
def test_a_validator_repeats_a_huge_value_short(index: int) -> None:
    from mnemon_ls.errors import InvalidInput

    check, field = _validators()[index]
    with pytest.raises(InvalidInput) as info:
        check("a.." + HUGE)
    assert info.value.field == field
    assert len(info.value.message) < 400 and "y..." in info.value.message, info.value.message[:300]
