"""Settings flags typed before the command (real CLI subprocesses): argparse took ``--scope global runtime list``'s
``global`` for the command (``invalid choice: 'global'``) and refused ``--json wake``'s ``--json`` pointing at
``mnemon-ls wake --help``, which lists it; now the one line names the flag and shows the command with the flags
moved behind it (``mnemon_ls.cli.parser.misplaced_settings``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    env.pop("MNEMON_DATA_DIR", None)
    (tmp_path / "ws").mkdir(exist_ok=True)
    return subprocess.run([*mnemon_command(), *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path / "ws", timeout=60)


@pytest.mark.parametrize("args, line", [
    (("--json", "wake"), "--json: goes after the command: mnemon-ls wake --json"),
    (("--scope", "global", "runtime", "list"), "--scope: goes after the command: mnemon-ls runtime list --scope global"),
    (("--scope=global", "--json", "space", "list", "--workspace", "."),
     "--scope: goes after the command: mnemon-ls space list --workspace . --scope=global --json"),
    (("--data-dir", "/tmp/a b", "doc", "list"), "--data-dir: goes after the command: mnemon-ls doc list --data-dir '/tmp/a b'"),
])
def test_a_settings_flag_before_the_command_is_named_with_the_command_it_belongs_after(
        tmp_path: Path, args: tuple[str, ...], line: str) -> None:
    (tmp_path / "ws").mkdir()
    before = procs.tree_snapshot(tmp_path)
    done = run(tmp_path, *args)
    assert (done.returncode, done.stderr) == (2, f"mnemon-ls: error: {line} (see `mnemon-ls --help`)\n")
    if "--json" in args:
        field = args[0].split("=")[0]
        assert json.loads(done.stdout) == {"error": {"code": "invalid-input", "message": line, "field": field,
                                                     "rule": line.removeprefix(f"{field}: ")}}
    else:
        assert done.stdout == ""
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("args, line", [
    # not a settings flag, or no command after the flags, or serve (which takes none): argparse's own words
    (("--frob", "wake"), "unrecognized arguments: --frob (see `mnemon-ls wake --help`)"),
    (("--json",), "unrecognized arguments: --json; the following arguments are required: COMMAND "
                  "(see `mnemon-ls --help`)"),
])
def test_other_flags_before_the_command_keep_their_error(tmp_path: Path, args: tuple[str, ...], line: str) -> None:
    done = run(tmp_path, *args)
    assert (done.returncode, done.stderr) == (2, f"mnemon-ls: error: {line}\n")


@pytest.mark.parametrize("args, line, field", [
    (("doc", "update", "0123abcd", "--rev", "2"),
     "unrecognized arguments: --rev 2; did you mean --revision? (an option is never abbreviated) "
     "(see `mnemon-ls doc update --help`)", "--rev"),
    (("wake", "--bud", "5000"),
     "unrecognized arguments: --bud 5000; did you mean --budget? (an option is never abbreviated) "
     "(see `mnemon-ls wake --help`)", "--bud"),
    (("doc", "search", "x", "--lim=3"),  # the field is the option without the value typed with it
     "unrecognized arguments: --lim=3; did you mean --limit? (an option is never abbreviated) "
     "(see `mnemon-ls doc search --help`)", "--lim"),
    (("runtime", "add", "--conten", "x"),
     "unrecognized arguments: --conten x; did you mean --content? (an option is never abbreviated); "
     "the following arguments are required: --content (see `mnemon-ls runtime add --help`)", "--conten"),
    (("wake", "--frob"), "unrecognized arguments: --frob (see `mnemon-ls wake --help`)", "--frob"),  # no such start
])
def test_a_refused_abbreviation_names_the_options_it_starts(tmp_path: Path, args: tuple[str, ...], line: str,
                                                            field: str) -> None:
    done = run(tmp_path, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: {line}\n")
    scripted = run(tmp_path, *args, "--json")
    prog = line.rsplit(" (see `", 1)[1].removesuffix(" --help`)")
    assert json.loads(scripted.stdout) == {"error": {"code": "invalid-input", "field": field,
                                                     "message": line.rsplit(" (see ", 1)[0],
                                                     "rule": f"is not an argument of `{prog}`"}}
