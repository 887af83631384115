"""An error repeats at most ``errors.ECHO_LIMIT`` UTF-8 *bytes* of a value someone sent (whole characters),
so a value of four-byte characters (emoji) comes back no longer than one of ASCII letters: the real CLI in a
temporary git repository with a temporary data directory, plain and ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

from mnemon_ls.errors import echo_repr, echo_value
from tests.cli.test_error_fields import cli, workspace

EMOJI = "\U0001F600"


def test_an_emoji_value_is_clipped_by_bytes_through_the_cli(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    done = cli(ws, tmp_path, "migrate", "--from", EMOJI * 2000)
    # the quote (1 byte) and 63 emoji (252 bytes) fit in 256 bytes; the 64th would cross the limit
    shown = "'" + EMOJI * 63 + "..."
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mnemon-ls: error: --from: must be global, workspace or an absolute path (got {shown})\n"
    scripted = cli(ws, tmp_path, "migrate", "--from", EMOJI * 2000, "--json")
    error = json.loads(scripted.stdout)["error"]
    assert error["rule"] == f"must be global, workspace or an absolute path (got {shown})"
    assert len(scripted.stdout.encode()) < 2000, len(scripted.stdout.encode())


def test_echo_value_keeps_whole_characters_within_the_byte_limit() -> None:
    assert echo_value("\u00e9" * 10, 5) == "\u00e9\u00e9..."  # two-byte characters: 4 bytes, not 5
    assert echo_value("ab\x1bc", 5) == "ab..."  # the escape counts as the four characters shown, kept whole
    assert echo_value("abc", 3) == "abc"
    assert echo_repr("a\nb") == "'a\\nb'"
    assert echo_repr(12345, 3) == "123..."
