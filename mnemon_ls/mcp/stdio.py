"""The stdio transport of ``mnemon-ls mcp``: the SDK's, plus answers for lines that are not a message.

The SDK's ``stdio_server`` hands a line it cannot parse to the session as an exception, and the session
only logs it: a client that sent a request with an unparsable body (invalid JSON, or JSON with a lone
UTF-16 surrogate escape such as ``"\\ud800"``, which is not Unicode) waits forever for an answer. JSON-RPC
2.0 (section 5.1) answers such a line with an error instead:

- not JSON at all: ``-32700`` Parse error, ``id: null``;
- JSON, but holding a lone surrogate: ``-32602`` Invalid params with the request's ``id`` when it has one
  (the message names where the surrogate is);
- JSON, but holding an integer longer than Python converts (``sys.get_int_max_str_digits()``, 4,300 digits
  by default): ``-32602`` Invalid params with the request's ``id`` (the message names where the number is
  and how many digits it has); when the ``id`` itself is such a number, ``-32600`` with ``id: null``;
- JSON's non-literals ``NaN``, ``Infinity`` and ``-Infinity`` (which the SDK's parser and Python's ``json``
  read as floats): ``-32700`` Parse error naming the literal and where it is, with the request's ``id`` when
  it has one (as the language server's framing answers them); as a notification, logged and dropped;
- a number too large for a double (``1e400``, which parsers read as infinity): ``-32602`` Invalid params
  naming where it is and repeating the number as sent (``params.arguments.limit: the number 1e400 is out of
  range``), with the request's ``id``;
- a nonzero number too small for a double (``1e-400``, which parsers read as 0, so a tool would see 0 and
  echo ``(got 0)``): ``-32602`` Invalid params naming where it is and repeating the number as sent
  (``params.arguments.threshold: the number 1e-400 is too small ...``), with the request's ``id``; no
  parameter takes a number at that precision, and 0 in its place would be silently wrong;
- a request whose ``params`` is not an object (a string, a number, or a by-position array, which JSON-RPC
  allows but MCP does not): ``-32602`` Invalid params with the request's ``id``;
- JSON, but not a JSON-RPC message (an array, a number, a request whose ``method`` is not a string, ...):
  ``-32600`` Invalid Request, with the request's ``id`` when it has a valid one, else ``id: null``.

A request other than ``initialize`` and ``ping`` before ``initialize`` is answered ``-32002`` (the code LSP
gives "server not initialized") saying the session is not initialized yet (the SDK's own answer was
``-32602`` "Invalid request parameters" with empty data).

An invalid *notification* (no ``id``) is logged and dropped: JSON-RPC never answers notifications.
Whatever a line holds, the transport answers or drops it and reads the next one: an unexpected failure
while judging a line is logged and answered ``-32700`` with ``id: null``, never raised.
Everything else goes to the SDK unchanged. Lines are UTF-8 (invalid bytes become U+FFFD, as in the SDK).
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any, AsyncIterator

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from ..errors import type_rule

log = logging.getLogger("mnemon_ls.mcp")

PARSE_ERROR = -32700
NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

#: Longest excerpt of a bad line quoted in an error message, characters.
QUOTE_LIMIT = 80


def answer_for(line: str) -> types.JSONRPCError | None:
    """The error answer for one stdin ``line`` that is not a JSON-RPC message, or ``None`` when the
    line is a message (then the SDK handles it) or an invalid notification (never answered)."""
    if not line.strip():
        return None
    if _number_suspect(line):
        problem = _number_problem(line)
        if problem is not None:
            return problem
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except RecursionError:
        return _error(None, PARSE_ERROR, "Parse error: the message is nested too deeply")
    except Exception:  # the SDK would drop it: find out why, and answer
        pass
    else:
        if not isinstance(message, types.JSONRPCNotification) or '"id"' not in line:
            return None
        # A request whose id is neither a string nor an integer reads as a notification to the SDK
        # (it would be served and never answered).
        value = json.loads(line)
        if not isinstance(value, dict) or "id" not in value:
            return None
        return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    try:
        value = json.loads(line, parse_int=_parse_int)
    except RecursionError:
        return _error(None, PARSE_ERROR, "Parse error: the message is nested too deeply")
    except json.JSONDecodeError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: {exc.msg} at character {exc.pos} "
                                         f"(the line starts {_quote(line)})")
    except ValueError as exc:  # not a JSONDecodeError: no position to name
        return _error(None, PARSE_ERROR, f"Parse error: {exc} (the line starts {_quote(line)})")
    if isinstance(value, dict) and isinstance(value.get("id"), _LongInteger):
        return _error(None, INVALID_REQUEST, f"Invalid Request: id: an integer of {value['id'].digits} digits "
                                             f"(at most {_max_digits()})")
    request_id = _request_id(value)
    if isinstance(value, dict) and "id" not in value and isinstance(value.get("method"), str):
        log.warning("dropped an invalid notification %s", _quote(line))
        return None
    long_number = _long_integer_path(value, "") if isinstance(value, dict) else None
    if long_number is not None:
        where, number = long_number
        return _error(request_id, INVALID_PARAMS,
                      f"Invalid params: {where or 'the message'}: an integer of {number.digits} digits "
                      f"(at most {_max_digits()})")
    where = _surrogate_path(value, "")
    if where is not None:
        return _error(request_id, INVALID_PARAMS,
                      f"Invalid params: {where or 'the message'}: holds a lone UTF-16 surrogate escape "
                      "(not valid Unicode); send the text as UTF-8 or as a surrogate pair")
    if (request_id is not None and isinstance(value, dict) and value.get("jsonrpc") == "2.0"
            and isinstance(value.get("method"), str) and value.get("params") is not None
            and not isinstance(value.get("params"), dict)):
        rule = type_rule("an object", value["params"])
        return _error(request_id, INVALID_PARAMS, f"Invalid params: params: {rule} (MCP requests take named "
                                                  "parameters)")
    return _error(request_id, INVALID_REQUEST, f"Invalid Request: not a JSON-RPC 2.0 request, notification "
                                               f"or response (the line starts {_quote(line)})")


#: What a line holding a non-JSON constant or an out-of-range number must contain (a cheap test before
#: :func:`_number_problem` parses it again): the constants' names, an exponent of 3+ digits, or 200+ digits (a
#: number past a double's range needs 309, one that underflows to 0 with a 2-digit exponent 226 or more).
_NUMBER_SUSPECT = re.compile(r"NaN|Infinity|[eE][+-]?[0-9]{3}|[0-9]{200}")

#: ``bytes.translate`` table of :func:`_number_suspect`: each ASCII digit -> ``0``, ``e``/``E`` -> ``e``, ``+``/``-``
#: -> ``+``, every other byte -> a space (a byte of a non-ASCII character in UTF-8 is >= 0x80: never one of those).
_NUMBER_SHAPES = bytes((48 if 48 <= b <= 57 else 101 if b in b"eE" else 43 if b in b"+-" else 32) for b in range(256))


def _number_suspect(line: str) -> bool:
    """Whether :data:`_NUMBER_SUSPECT` matches ``line``, answered without the regex (which tried a match at every
    ``e`` and digit: 66-100 us for a 2,000-character line): ``NaN``/``Infinity`` looked up as they are, the rest
    in the line's UTF-8 bytes with each byte replaced by its shape (:data:`_NUMBER_SHAPES`), where
    ``[eE][+-]?[0-9]{3}`` is ``e000`` or ``e+000`` and ``[0-9]{200}`` 200 zeros: substring searches only."""
    if "NaN" in line or "Infinity" in line:
        return True
    shapes = line.encode("utf-8", "surrogatepass").translate(_NUMBER_SHAPES)
    return b"e000" in shapes or b"e+000" in shapes or _DIGIT_RUN in shapes


#: 200 digits as :data:`_NUMBER_SHAPES` writes them.
_DIGIT_RUN = b"0" * 200


class _Constant:
    """Stands in, in a parsed line, for ``NaN``/``Infinity``/``-Infinity`` (not JSON; ``name`` as sent)."""

    def __init__(self, name: str) -> None:
        self.name = name


class _HugeNumber:
    """Stands in, in a parsed line, for a number literal beyond a double's range (``literal`` as sent)."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


class _TinyNumber(_HugeNumber):
    """Stands in, in a parsed line, for a nonzero number literal a double reads as 0 (``literal`` as sent)."""


#: The significand of a JSON number literal (before its exponent).
_SIGNIFICAND = re.compile(r"[^eE]*")


def _parse_float(literal: str) -> float | _HugeNumber:
    """``json.loads``'s ``parse_float``: the float, or a :class:`_HugeNumber` when it is not finite, or a
    :class:`_TinyNumber` when it is 0 but the literal is not (``1e-400``: an underflow)."""
    number = float(literal)
    if not math.isfinite(number):
        return _HugeNumber(literal)
    if number == 0 and any(c in "123456789" for c in _SIGNIFICAND.match(literal).group(0)):  # type: ignore[union-attr]
        return _TinyNumber(literal)
    return number


def _number_problem(line: str) -> types.JSONRPCError | None:
    """The answer for a ``line`` holding ``NaN``/``Infinity`` (``-32700``) or a number out of a double's range
    or underflowing to 0 (``-32602``; ``-32600`` when it is the id), each naming where it is (module doc);
    ``None`` when it holds neither (or is not JSON at all: :func:`answer_for` words that) and for a notification
    (logged and dropped)."""
    try:
        value = json.loads(line, parse_constant=_Constant, parse_float=_parse_float, parse_int=_parse_int)
    except (ValueError, RecursionError):
        return None
    found = _marker_path(value, "", (_Constant, _HugeNumber))
    if found is None:
        return None
    where, marker = found
    if isinstance(value, dict) and "id" not in value:
        log.warning("dropped a notification holding %s", _quote(line))
        return None
    request_id = _request_id(value)
    if isinstance(marker, _Constant):
        return _error(request_id, PARSE_ERROR, f"Parse error: {where or 'the message'}: {marker.name} is not JSON "
                                               "(JSON numbers are finite; send a number, or null)")
    rule = (f"the number {_clip(marker.literal)} is too small (a double reads it as 0; a nonzero JSON number here "
            "is at least ±4.9e-324 in size: send 0 or a larger number)" if isinstance(marker, _TinyNumber) else
            f"the number {_clip(marker.literal)} is out of range (a JSON number here is within ±1.8e308)")
    if where == "id":  # no parameter: the request itself is invalid (as an id too long for int())
        return _error(None, INVALID_REQUEST, f"Invalid Request: id: {rule}; an id is a string or an integer")
    return _error(request_id, INVALID_PARAMS, f"Invalid params: {where or 'the message'}: {rule}")


def _clip(literal: str) -> str:
    return literal if len(literal) <= QUOTE_LIMIT else literal[:QUOTE_LIMIT] + f"... ({len(literal)} characters)"


class _LongInteger:
    """Stands in, in a parsed line, for an integer literal too long for ``int()`` (its ``digits`` count)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _max_digits() -> int:
    return sys.get_int_max_str_digits() or 4300


def _parse_int(literal: str) -> int | _LongInteger:
    """``json.loads``'s ``parse_int``: the integer, or a :class:`_LongInteger` past the conversion limit."""
    digits = len(literal.lstrip("-"))
    limit = sys.get_int_max_str_digits()
    if limit and digits > limit:
        return _LongInteger(digits)
    return int(literal)


def _long_integer_path(value: Any, path: str) -> tuple[str, _LongInteger] | None:
    """The dotted path of the first too-long integer in ``value`` and its stand-in, else ``None``."""
    return _marker_path(value, path, (_LongInteger,))


def _marker_path(value: Any, path: str, kinds: tuple[type, ...]) -> tuple[str, Any] | None:
    """The dotted path of the first stand-in of one of ``kinds`` in ``value`` and the stand-in, else ``None``."""
    if isinstance(value, kinds):
        return path, value
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in children:
        found = _marker_path(item, f"{path}[{key}]" if isinstance(key, int) else
                             (f"{path}.{key}" if path else str(key)), kinds)
        if found is not None:
            return found
    return None


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _request_id(value: Any) -> int | str | None:
    """The ``id`` of a request-shaped object when it is a valid JSON-RPC id (string or integer)."""
    if not isinstance(value, dict):
        return None
    request_id = value.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    if isinstance(request_id, str) and _has_surrogate(request_id):
        return None
    return request_id


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _surrogate_path(value: Any, path: str) -> str | None:
    """The dotted path of the first string (key or value) in ``value`` holding a lone surrogate, else ``None``
    (``""`` for the top-level value itself)."""
    if isinstance(value, str):
        return path if _has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}.{key}" if path else str(key)
            if _has_surrogate(key):
                return key_path.encode("utf-8", "backslashreplace").decode("ascii")
            found = _surrogate_path(item, key_path)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _quote(line: str) -> str:
    text = line.strip()
    short = text[:QUOTE_LIMIT] + ("..." if len(text) > QUOTE_LIMIT else "")
    return json.dumps(short, ensure_ascii=True)


class _BorrowedText(TextIOWrapper):
    """Text layer over ``sys.stdin.buffer`` whose close leaves the buffer open (it is not ours)."""

    def close(self) -> None:  # noqa: D102 - io hook
        try:
            self.detach()
        except ValueError:
            pass


def _method_and_id(line: str) -> tuple[str | None, int | str | None]:
    """The ``method`` and a valid ``id`` of a line that is a JSON-RPC request (``(None, None)`` otherwise)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None, None
    method = value.get("method") if isinstance(value, dict) else None
    return (method if isinstance(method, str) else None), _request_id(value)


def not_initialized(line: str, initialized: bool) -> tuple[bool, types.JSONRPCError | None]:
    """``(initialized after this line, the answer when the line is a request sent too early)``: before
    ``initialize``, a request but ``ping`` is answered ``-32002`` naming the method."""
    if initialized:
        return True, None
    method, request_id = _method_and_id(line)
    if method == "initialize":
        return True, None
    if method is None or request_id is None or method == "ping":
        return False, None
    return False, _error(request_id, NOT_INITIALIZED, f"Server not initialized: the session is not initialized "
                                                      f"yet: send initialize before {method}")


class _AnsweringLines:
    """Async iterator over the lines of an ``anyio`` text file; lines that :func:`answer_for` answers are
    answered through ``write`` (the transport's write stream) and not passed on."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.write: Any = None
        self.ready = anyio.Event()
        self.initialized = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        await self.ready.wait()
        async for line in self.source:
            try:
                answer = answer_for(line)
                if answer is None:
                    self.initialized, answer = not_initialized(line, self.initialized)
            except Exception:  # never let one line stop the server: answer it as unreadable
                log.exception("could not judge the line %s", _quote(line))
                answer = _error(None, PARSE_ERROR, f"Parse error: the line could not be read "
                                                   f"(it starts {_quote(line)})")
            if answer is None:
                yield line
                continue
            try:
                await self.write.send(SessionMessage(answer))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


@asynccontextmanager
async def answering_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """Like the SDK's ``stdio_server()`` (same streams), but lines that are not a JSON-RPC message are
    answered with a JSON-RPC error (module docstring) instead of being dropped unanswered."""
    raw = anyio.wrap_file(_BorrowedText(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    lines = _AnsweringLines(raw)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.write = write_stream
        lines.ready.set()
        yield read_stream, write_stream
