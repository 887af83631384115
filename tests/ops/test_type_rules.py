"""A value of the wrong type is refused naming the field, the rule, the JSON type received and the start of the
value (``mnemon_ls.errors.not_sent``, the one builder of that text): the pydantic rules of every surface
(``input should be a valid string, not an integer (got 5)``) and the project's own type checks (``must be a list
of strings, not a string (got 'a')``) end with it. The value is clipped (40 UTF-8 bytes, then ``...``), escaped
and built without reading a huge array or object whole."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr

from mnemon_ls.errors import InvalidInput, not_sent, type_rule
from mnemon_ls.ops.base import parse_params
from mnemon_ls.spaces.model import validate_content, validate_tags


@pytest.mark.parametrize(("sent", "said"), [
    (5, ", not an integer (got 5)"),
    (1.5, ", not a number (got 1.5)"),
    (True, ", not a boolean (got true)"),
    (None, ", not null"),
    ("ten", ", not a string (got 'ten')"),
    (["a", None, False], ", not an array (got ['a', null, false])"),
    ({"k": [1, 2]}, ", not an object (got {'k': [1, 2]})"),
    ("x" * 500, ", not a string (got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...)"),
    ("a\x1b[31mb\nc", ", not a string (got 'a\\x1b[31mb\\nc')"),
    (list(range(10**6)), ", not an array (got [0, 1, 2, 3, 4, 5, ...])"),
])
def test_not_sent_names_the_type_and_the_start_of_the_value(sent: object, said: str) -> None:
    assert not_sent(sent) == said
    assert type_rule("a list of strings", sent) == "must be a list of strings" + said


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: StrictStr
    limit: StrictInt = 1
    active: StrictBool = False
    tags: list[StrictStr] = []


@pytest.mark.parametrize(("params", "field", "rule"), [
    ({"title": 5}, "title", "input should be a valid string, not an integer (got 5)"),
    ({"title": "t", "limit": "ten"}, "limit", "input should be a valid integer, not a string (got 'ten')"),
    ({"title": "t", "active": "yes"}, "active", "input should be a valid boolean, not a string (got 'yes')"),
    ({"title": "t", "tags": "a,b"}, "tags", "input should be an array, not a string (got 'a,b')"),
    ({"title": "t", "tags": ["a", 7]}, "tags[1]", "input should be a valid string, not an integer (got 7)"),
    ({"title": ["x" * 100]}, "title", "input should be a valid string, not an array (got ['xxxxxxxxxxxx...xxxx"
                                      "xxxxxxxxx'])"),  # an item of an array or object: its middle left out
])
def test_a_pydantic_type_rule_echoes_what_was_received(params: dict, field: str, rule: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_params(_Params, params)
    assert (info.value.field, info.value.rule) == (field, rule)


def test_the_projects_own_type_checks_echo_what_was_received() -> None:
    with pytest.raises(InvalidInput) as info:
        validate_content(42)
    assert info.value.message == "content: must be a string, not an integer (got 42)"
    with pytest.raises(InvalidInput) as info:
        validate_tags("deploy")
    assert info.value.message == "tags: must be a list of strings, not a string (got 'deploy')"
    with pytest.raises(InvalidInput) as info:
        validate_tags(["deploy", {"x": 1}])
    assert info.value.message == "tags[1]: must be a string, not an object (got {'x': 1})"
