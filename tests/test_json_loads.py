"""``jsontext.json_loads``: the one way a reader of JSON someone wrote parses it, every refusal one error type
(:class:`~mnemon_ls.jsontext.JsonUnreadable`) worded by ``jsontext.json_problem``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mnemon_ls.jsontext import JsonUnreadable, json_loads


def test_a_syntax_error_is_worded_with_and_without_the_line() -> None:
    with pytest.raises(JsonUnreadable) as info:
        json_loads('{"a": 1,\n  }')
    assert str(info.value) == info.value.problem == "Expecting property name enclosed in double quotes at line 2 column 3"
    assert info.value.in_line == "Expecting property name enclosed in double quotes at column 3"
    assert isinstance(info.value, ValueError)


def test_a_number_past_the_digit_limit_is_the_same_error() -> None:
    with pytest.raises(JsonUnreadable) as info:
        json_loads("[" + "9" * 5000 + "]")
    assert str(info.value) == f"a number has more than {sys.get_int_max_str_digits()} digits"


def test_what_a_hook_or_the_decoding_raises_passes_unchanged() -> None:
    class Twice(ValueError):
        pass

    def refuse(pairs: list[tuple[str, object]]) -> dict[str, object]:
        raise Twice(pairs[0][0])

    with pytest.raises(Twice):
        json_loads('{"a": 1}', object_pairs_hook=refuse)
    with pytest.raises(UnicodeDecodeError):
        json_loads(b'"\xff\xfe\xfd"' + b"\x00")
    assert json_loads('{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}


def test_no_reader_words_a_json_refusal_on_its_own() -> None:
    package = Path(__file__).resolve().parents[1] / "mnemon_ls"
    words = [str(path.relative_to(package)) for path in package.rglob("*.py")
             if path.name != "jsontext.py" and "json_problem(" in path.read_text(encoding="utf-8")]
    assert words == []
