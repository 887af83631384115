"""A value that is none of a field's choices (an enum) is refused echoing what came, on every surface: the pydantic
rules the language server and MCP validate with said only ``input should be 'user' or 'memory'`` for a string
(the CLI's own choice check said ``(got 'x')``), and the project's own choice checks (a recall ``mode``, a space
``category``, a setup ``client``) said only ``must be one of ...``. Now every such rule ends with
``mnemon_ls.errors.not_a_choice``: a string as ``echo_repr`` shows it (escaped, at most ECHO_LIMIT UTF-8 bytes,
then ``...``), any other value its JSON type and start (``not_sent``)."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from mnemon_ls.errors import ECHO_LIMIT, InvalidInput, choice_rule, not_a_choice
from mnemon_ls.ops.base import parse_params
from mnemon_ls.spaces.model import validate_category


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Literal["user", "memory"] = "memory"


@pytest.mark.parametrize(("sent", "said"), [
    ("project", " (got 'project')"),
    ("a\x1b[31mb\nc", " (got 'a\\x1b[31mb\\nc')"),
    (1, ", not an integer (got 1)"),
    (None, ", not null"),
])
def test_an_enum_refusal_of_the_pydantic_rules_echoes_the_value(sent: object, said: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_params(_Params, {"target": sent})
    assert (caught.value.field, caught.value.rule) == ("target", "input should be 'user' or 'memory'" + said)


def test_a_huge_value_is_echoed_clipped() -> None:
    rule = choice_rule(("user", "memory"), "x" * 10_000_000)
    assert rule.startswith("must be one of user, memory (got 'xxx") and rule.endswith("...)")
    assert len(not_a_choice("x" * 10_000_000).encode("utf-8")) <= ECHO_LIMIT + len(" (got ...)")


def test_the_projects_own_choice_checks_echo_the_value() -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_category("recipes")
    assert caught.value.rule.endswith(" (got 'recipes')") and caught.value.rule.startswith("must be one of ")
    assert choice_rule(["a", "b"], 5) == "must be one of a, b, not an integer (got 5)"
