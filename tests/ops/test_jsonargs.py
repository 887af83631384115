""":func:`mnemon_ls.ops.jsonargs.read_arguments` on its own (pure JSON, no server): each argument's schema is
resolved once, and a float that is not finite (JSON ``1e400``) is refused as out of range, not echoed as
``inf``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.ops.jsonargs import read_arguments


class CountingDefs(Mapping):
    """A schema's ``$defs`` that counts how often a definition is looked up (each ``$ref`` resolution reads one)."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.lookups = 0

    def __getitem__(self, key: str) -> Any:
        self.lookups += 1
        return self.defs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.defs)

    def __len__(self) -> int:
        return len(self.defs)


def test_an_optional_null_argument_resolves_its_schema_once() -> None:
    defs = CountingDefs({"Note": {"type": ["string", "null"]}, "Limit": {"type": "integer"}})
    schema = {"type": "object", "properties": {"note": {"$ref": "#/$defs/Note"}, "limit": {"$ref": "#/$defs/Limit"}},
              "$defs": defs}
    assert read_arguments({"note": None}, schema) == {"note": None}  # its type takes null: kept
    assert defs.lookups == 1
    assert read_arguments({"limit": None}, schema) == {}  # its type does not: left out, its default
    assert defs.lookups == 2
    assert read_arguments({"limit": 3.0, "note": "x"}, schema) == {"limit": 3, "note": "x"}
    assert defs.lookups == 4


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_number_that_is_not_finite_is_out_of_range_not_inf(number: float) -> None:
    schema = {"type": "object", "properties": {"limit": {"type": "integer"}}}
    with pytest.raises(InvalidInput) as refused:
        read_arguments({"limit": number}, schema)
    assert (refused.value.field, refused.value.rule) == ("limit", "must be an integer (got a number out of range)")


def test_an_integral_float_beyond_exact_integers_is_not_echoed_as_other_digits() -> None:
    """An attack pass: ``"importance": 123456789012345678901234567890.0`` became the integer
    123456789012345677877719597056 and the range error said ``(got 123456789012345677877719597056)``, digits
    never sent. Past 2**53 a double holds no exact integer: it is refused as one, repeated as the float read."""
    schema = {"type": "object", "properties": {"importance": {"type": "integer"}}}
    with pytest.raises(InvalidInput) as info:
        read_arguments({"importance": 123456789012345678901234567890.0}, schema)
    assert (info.value.field, info.value.rule) == (
        "importance", "must be an integer (got 1.2345678901234568e+29: a number with a decimal point or an exponent "
                      "is an exact integer only up to 2**53; send the integer's digits)")
    assert read_arguments({"importance": 9007199254740992.0}, schema) == {"importance": 2 ** 53}
    assert read_arguments({"importance": -3.0}, schema) == {"importance": -3}
