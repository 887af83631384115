"""mnemon_ls.jsonc.blank: comments and trailing commas blanked at the same offsets, strings respected."""

from __future__ import annotations

import json

import pytest

from mnemon_ls.jsonc import JsoncUnreadable, blank


def test_blank_keeps_offsets_strings_and_line_ends() -> None:
    text = '{"a": "http://x/*y*/", // c\r\n "b": [1,2,],/* m\nn */ "c": {"d\\"//": 1,},}'
    out = blank(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n") and "\r\n" in out
    assert json.loads(out) == {"a": "http://x/*y*/", "b": [1, 2], "c": {'d"//': 1}}
    assert blank(text, commas=False) == out[:39] + "," + out[40:68] + "," + out[69] + "," + out[71:]  # commas kept
    assert blank("[1, // a, b\n 2]") == "[1,        \n 2]"
    assert blank('{"a": [1, 2]}') == '{"a": [1, 2]}'


@pytest.mark.parametrize(("text", "words"), [
    ('{\n "a": 1 /* open', "a /* comment is never closed (it opens at line 2 column 9)"),
    ('{"a": 1 / 2}', "a lone '/' at line 1 column 9"),
])
def test_blank_refuses_what_is_no_comment(text: str, words: str) -> None:
    with pytest.raises(JsoncUnreadable, match=words.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        blank(text)
