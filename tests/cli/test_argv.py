"""Command-line arguments holding bytes that are not UTF-8 (real subprocesses): the error names the
argument and the byte, never Python's "lone surrogate", and nothing is written (``mnemon_ls.cli.argv``)."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.gitrepo import snapshot
from tests.helpers import procs
from tests.cli.test_cli import MNEMON_LS, Cli


@pytest.fixture
def cli(tmp_path) -> Cli:
    return Cli(tmp_path)


def raw(data: bytes) -> str:
    """``data`` as ``sys.argv`` holds it (``surrogateescape``); ``subprocess`` passes the bytes back."""
    return os.fsdecode(data)


@pytest.mark.parametrize("args, message", [
    (["runtime", "add", "--content", raw(b"ab\xffc")], "--content: must be valid UTF-8 (byte 0xff at position 2)"),
    (["runtime", "add", "--content", "ok", "--branch", "main", "--branch", raw(b"b\xed\xa0\x80")],
     "--branch: must be valid UTF-8 (byte 0xed at position 1 of the 2nd one)"),  # an encoded surrogate is not UTF-8 either
    (["runtime", "remove", "--old-text", raw(b"\xc3")], "--old-text: must be valid UTF-8 (byte 0xc3 at position 0)"),
    (["remember", raw("数据".encode() + b"\xfe")], "content: must be valid UTF-8 (byte 0xfe at position 6)"),
    (["recall", raw(b"q\xfe")], "query: must be valid UTF-8 (byte 0xfe at position 1)"),
    (["doc", "create", "--title", "t", "--content", "x", "--source", raw(b"f\xff.md")],
     "--source: must be valid UTF-8 (byte 0xff at position 1)"),  # a stored source path is text
])
def test_text_arguments_that_are_not_utf8_name_the_argument_and_the_byte(cli: Cli, args: list[str],
                                                                      message: str) -> None:
    cli.data.mkdir()
    before = snapshot(cli.data)
    result = cli.run(*args)
    assert (result.returncode, result.stderr) == (2, f"mnemon-ls: error: {message}\n")
    assert "surrogate" not in result.stderr
    assert snapshot(cli.data) == before


def test_a_path_that_is_only_opened_may_hold_any_byte(cli: Cli) -> None:
    """``--workspace``/``--data-dir`` are POSIX paths (bytes): they stay usable."""
    odd = cli.tmp / os.fsdecode(b"root\xff")
    result = cli.run("runtime", "add", "--content", "fact", "--data-dir", str(odd))
    assert result.returncode == 0, result.stderr
    assert (odd / "runtime" / "memories.json").is_file()


def test_standard_input_that_is_not_utf8_names_the_byte(cli: Cli) -> None:
    result = subprocess.run([MNEMON_LS, "runtime", "add", "--content", "-", *Cli.SCOPE], input=b"ok \x80 no",
                            cwd=cli.ws, env=cli.env, capture_output=True, timeout=procs.WAIT_SECONDS)
    assert (result.returncode, result.stderr.decode()) == (
        2, "mnemon-ls: error: --content: standard input must be valid UTF-8 (byte 0x80 at position 3)\n")
    assert not cli.memories.exists()
