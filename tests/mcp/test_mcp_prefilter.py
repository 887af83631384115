"""The MCP stdio line check's cheap test for a number JSON cannot carry (``mnemon_ls.mcp.stdio._number_suspect``)
says yes exactly when its regex (``_NUMBER_SUSPECT``: ``NaN``, ``Infinity``, an exponent of 3+ digits, 200+
digits) matches: the regex tried a match at every ``e`` and digit of every line (66-100 us a 2,000-character
line); the test looks up byte shapes instead. Only the answer is compared here, never the time
(``tests/bench/prefilter.py`` measures it)."""

from __future__ import annotations

import random

import pytest

from mnemon_ls.mcp.stdio import _NUMBER_SUSPECT, _number_suspect

EDGES = [
    "", "{}", "1e400", "1E-400", "1e+999", "1e40", "e12", "E-12", "e++123", "e-+123", "x e 123", "1e-0400", "NaN",
    "Infinity", "-Infinity", "nan", "infinity", "NaNa", "Na N", "1" * 199, "1" * 200, "1" * 199 + "x" + "1" * 199,
    "\u0661\u0662\u0663e\u0661\u0662\u0663",  # Arabic-Indic digits: not [0-9]
    "\uff11\uff12\uff13e\uff11\uff12\uff13", "é123", "e\u0301123", "\ud800e123", "e\ud800123", "\U0001f600" * 50,
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"w":1e-400}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"w":1.5e-40}}}',
]


@pytest.mark.parametrize("line", EDGES)
def test_the_edges_answer_as_the_regex(line: str) -> None:
    assert _number_suspect(line) is (_NUMBER_SUSPECT.search(line) is not None)


def test_random_lines_answer_as_the_regex() -> None:
    rng = random.Random(20261207)
    alphabet = "0123456789" * 6 + "eE+-.NaIfinty \"{}:,\\\u00e9\u0661\uff11\ud800\U0001f600"
    found = {True: 0, False: 0}
    for _ in range(20000):
        if rng.random() < 0.05:
            line = "".join(rng.choice("0123456789") for _ in range(rng.randint(190, 210)))
        else:
            line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        expected = _NUMBER_SUSPECT.search(line) is not None
        assert _number_suspect(line) is expected, ascii(line)
        found[expected] += 1
    assert min(found.values()) > 1000  # both answers were tried many times
