"""A typed integer that is not ASCII digits is refused naming the range its option takes, as the same option's
out-of-range value is (doc search / records list --limit, remember --importance, space related --depth,
wake --budget: each said only 'must be an integer'), and a byte of the line that is not UTF-8 is repeated as
the byte typed (``'\\xff'``), not as Python's stand-in for it (``'\\udcff'``). The real CLI in a temporary git
repository with a temporary data directory; nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.errors import echo_repr
from tests.helpers import procs
from tests.cli.test_error_fields import cli, workspace

CASES = [
    (("records", "list", "--limit"), "--limit", "1..10000"),
    (("remember", "fact", "--space", "default", "--importance"), "--importance", "1..5"),
    (("space", "related", "--space", "default", "x", "--depth"), "--depth", "1..5"),
    (("wake", "--budget"), "--budget", "1024..4194304"),
    (("recall", "fact", "--limit"), "--limit", "1..50"),
]


@pytest.mark.parametrize(("words", "option", "span"), CASES, ids=[" ".join(c[0][:2]) + c[1] for c in CASES])
def test_a_typed_integer_that_is_not_digits_names_the_range(tmp_path: Path, words: tuple[str, ...], option: str,
                                                              span: str) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, *words, "\u0663")  # ARABIC-INDIC DIGIT THREE
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith(f"mnemon-ls: error: {option}: must be an integer in {span} (got '\u0663')"), \
        done.stderr
    scripted = cli(ws, tmp_path, *words, "x", "--json")
    error = json.loads(scripted.stdout)["error"]
    assert (error["field"], error["message"], error["rule"]) == (
        option, f"{option}: must be an integer in {span} (got 'x')", f"must be an integer in {span} (got 'x')")
    assert procs.tree_snapshot(tmp_path) == before


def test_a_byte_that_is_not_utf8_is_repeated_as_the_byte(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    done = cli(ws, tmp_path, "recall", "fact", "--limit", "1\udcff")  # byte 0xff on the command line
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("mnemon-ls: error: --limit: must be an integer in 1..50 (got '1\\xff') "
                           "(see `mnemon-ls recall --help`)\n")


def test_echo_repr_shows_an_undecodable_byte_as_that_byte() -> None:
    assert echo_repr("a\udcffb") == "'a\\xffb'"
    assert echo_repr("\udc80") == "'\\x80'"
    assert echo_repr("a\\udcff") == "'a\\\\udcff'"  # a backslash typed, then the letters: unchanged
    assert echo_repr("\\\udcff") == "'\\\\\\xff'"  # a backslash typed, then byte 0xff
    assert echo_repr("\ud800") == "'\\ud800'"  # not a byte's stand-in: as repr shows it
