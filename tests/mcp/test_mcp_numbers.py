"""Numbers JSON cannot hold, sent to the real ``mnemon-ls mcp`` as raw JSON-RPC lines. ``NaN``, ``Infinity``
and ``-Infinity`` are not JSON, but the SDK's parser (and Python's ``json``) read them as floats, and the
tool then refused them naming the field ("input should be a finite number"); they are now a parse error, as
the language server's framing answers them. ``1e400`` (valid JSON, beyond a double) was read as infinity and
echoed as ``(got inf)``; it is now out of range, repeated as sent. Every refusal names the argument, keeps
the request's id, writes nothing, and the session goes on."""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.mcp.stdio import answer_for
from tests.gitrepo import snapshot
from tests.mcp.test_mcp_arguments import raw  # noqa: F401 - the fixture: an initialized raw session
from tests.mcp.test_mcp_hostile import RawClient
from tests.mcp.test_mcp_server import files

LINK = '{"space_id": "s", "source_id": "a", "target_id": "b", "weight": %s}'
RECALL = '{"query": "x", "limit": %s}'
#: 1e-330 written without a 3-digit exponent: underflows all the same (quoted clipped to 80 characters)
UNDERFLOW = "0." + "0" * 230 + "1e-99"


def not_json(where: str, literal: str) -> dict:
    """The ``-32700`` error of a non-JSON constant at ``where``."""
    return {"code": -32700, "message": f"Parse error: params.arguments.{where}: {literal} is not JSON (JSON numbers "
                                       "are finite; send a number, or null)"}


def out_of_range(where: str, literal: str) -> dict:
    """The ``-32602`` error of a number beyond a double at ``where``, repeated as sent."""
    return {"code": -32602, "message": f"Invalid params: params.arguments.{where}: the number {literal} is out of "
                                       "range (a JSON number here is within ±1.8e308)"}


def too_small(where: str, literal: str) -> dict:
    """The ``-32602`` error of a nonzero number a double reads as 0 at ``where``, repeated as sent."""
    return {"code": -32602, "message": f"Invalid params: params.arguments.{where}: the number {literal} is too small "
                                       "(a double reads it as 0; a nonzero JSON number here is at least ±4.9e-324 in "
                                       "size: send 0 or a larger number)"}


# (tool, arguments JSON, the error object answered)
REFUSED = [
    ("mnemon_link", LINK % "NaN", not_json("weight", "NaN")),
    ("mnemon_link", LINK % "Infinity", not_json("weight", "Infinity")),
    ("mnemon_recall", RECALL % "-Infinity", not_json("limit", "-Infinity")),
    ("mnemon_recall", RECALL % "1e400", out_of_range("limit", "1e400")),
    ("mnemon_link", LINK % "-1.5E+999", out_of_range("weight", "-1.5E+999")),
    # an attack pass: 1e-400 underflowed to 0 before any check and was answered "(got 0)"
    ("mnemon_recall", RECALL % "1e-400", too_small("limit", "1e-400")),
    ("mnemon_link", LINK % "-2.5E-9999", too_small("weight", "-2.5E-9999")),
    ("mnemon_link", LINK % UNDERFLOW, too_small("weight", f"{UNDERFLOW[:80]}... ({len(UNDERFLOW)} characters)")),
]


def test_non_json_constants_and_out_of_range_numbers_are_refused_as_json(raw: RawClient, workspace: Path,
                                                                          data_dir: Path) -> None:
    before = (files(snapshot(workspace)), files(snapshot(data_dir)) if data_dir.exists() else {})
    for request_id, (name, arguments, error) in enumerate(REFUSED, start=90):
        raw.send('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
                 % (request_id, name, arguments))
        answer = raw.answer()
        assert answer == {"jsonrpc": "2.0", "id": request_id, "error": error}, answer
    # a notification holding one is dropped unanswered (JSON-RPC never answers notifications)
    raw.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":NaN}}')
    # the words inside a string are text, and a large finite number is a number: both reach the tool
    raw.send('{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"mnemon_recall",'
             '"arguments":{"query":"NaN Infinity e400","limit":1e2}}}')
    answer = raw.answer()
    assert answer["id"] == 99 and "error" not in answer, answer
    assert (files(snapshot(workspace)), files(snapshot(data_dir)) if data_dir.exists() else {}) == before


def test_an_id_beyond_a_double_is_an_invalid_request_not_invalid_params() -> None:
    """An attack pass: ``"id": 1e400`` was answered ``-32602 Invalid params: id: ...``; the id is no parameter,
    and an id too long for ``int()`` is already ``-32600 Invalid Request: id: ...``."""
    answer = answer_for('{"jsonrpc":"2.0","id":1e400,"method":"ping"}')
    assert answer is not None
    assert answer.model_dump(exclude_none=True)["error"] == {
        "code": -32600, "message": "Invalid Request: id: the number 1e400 is out of range (a JSON number here is "
                                   "within ±1.8e308); an id is a string or an integer"}
    assert answer.id is None


def test_a_zero_in_any_form_and_a_subnormal_number_reach_the_tool() -> None:
    """Only a nonzero literal that a double reads as 0 is refused: ``0e-400`` is 0 as sent, and ``1e-320`` (a
    subnormal double) is kept."""
    for literal in ("0e-400", "0.000e-999", "-0.0", "1e-320", "0." + "0" * 250):
        assert answer_for('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mnemon_link",'
                          f'"arguments":{LINK % literal}}}}}') is None, literal
