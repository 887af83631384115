"""The LSP base protocol on the server's side of the pipe: frames in, JSON-RPC envelopes checked.

pygls 2.1.1 reads frames in ``pygls.io_.run_async``: it takes a ``Content-Length`` only from a line that
is exactly ``Content-Length: <digits>\\r\\n`` and then reads header *lines* until a blank one. After a
frame whose header is bad (non-numeric, negative or missing length) or whose length is wrong, the next
body is read as a header line glued to the following header, every later frame is misread the same
way, and the server stays alive but deaf. Messages that are not valid JSON-RPC (invalid UTF-8, nesting
deeper than the recursion limit, ``jsonrpc`` other than ``"2.0"``, no method, a batch) are logged and
dropped without a response, even when they carry an id. This module replaces that loop:

- :class:`FrameReader` reads header blocks (``Name: value`` lines ending in CRLF, then a blank line;
  ``Content-Length`` is required, ASCII digits, at most :data:`MAX_CONTENT_LENGTH` bytes) and then exactly
  that many body bytes. A bad header block is reported as :class:`Discarded` and the reader skips to the
  next ``Content-Length:`` in the stream: it resynchronises on the next valid header.
- :func:`serve` dispatches each body: bytes that are not UTF-8 JSON get ``-32700`` (parse error), JSON
  that is not a JSON-RPC 2.0 request, notification or response gets ``-32600`` (invalid request), both
  with the request's id when it can still be read (:func:`find_request_id`; ``null`` otherwise, as
  JSON-RPC 2.0 section 5 requires). A request is never *executed* from a malformed frame. Params that do
  not fit the LSP type of a standard method get ``-32602`` naming the field. Requests after ``shutdown``
  get ``-32600`` (LSP: "should error with InvalidRequest").

A ``Content-Length`` shorter than the message leaves a tail that the reader skips; a longer one
swallows the start of the next frame, which :func:`receive` gives back to the reader (the bytes after
a complete JSON value, or from a ``Content-Length:`` in the body on). What cannot be told apart from a
slow client is a length longer than everything the client ever sends: the reader then waits for those
bytes, and the next frames complete the body and resynchronise the stream. A request inside a skipped
stretch is answered (``-32700`` with its id) once the next header has arrived.

Batches are not part of the LSP: each request of a batch gets its own ``-32600`` response (an LSP client
cannot read a batch response). Nothing here imports pydantic or the memory stores.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol.types import EXIT, ResponseError
from pygls.exceptions import JsonRpcException

log = logging.getLogger("mnemon_ls.lsp.framing")

#: Largest body accepted, in bytes (a larger ``Content-Length`` is a framing error).
MAX_CONTENT_LENGTH = 256 * 1024 * 1024
#: Largest header block (all header lines and the blank line), in bytes.
MAX_HEADER_BYTES = 8192
#: Bytes of a discarded stretch kept to look for a request id in it.
KEEP_DISCARDED_BYTES = 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# RFC 9110 field-name token, ':', optional whitespace, a value of visible ASCII/space/tab, CRLF.
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([\x20-\x7e\t]*?)[ \t]*")
_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_HEADER_NAME = b"content-length:"
_NEED_MORE = object()


@dataclass(frozen=True)
class Frame:
    """One well-framed body (``Content-Length`` bytes, not yet decoded)."""

    body: bytes


@dataclass(frozen=True)
class Discarded:
    """Bytes skipped while resynchronising: ``reason`` (one line), ``size`` (bytes dropped) and the
    first :data:`KEEP_DISCARDED_BYTES` of them in ``data``."""

    reason: str
    size: int
    data: bytes


class FrameReader:
    """Base-protocol frames from a byte stream; resynchronises after a bad header block.

    ``read_chunk`` is an awaitable source of the stream's next bytes (``b""`` at end of stream).
    :meth:`unread` puts bytes back in front of the stream (a body that turned out to contain the next
    header).
    """

    def __init__(self, read_chunk: Callable[[], Awaitable[bytes]]) -> None:
        self._read_chunk = read_chunk
        self._buffer = bytearray()
        self._eof = False

    def unread(self, data: bytes) -> None:
        """Put ``data`` back at the front of the stream."""
        self._buffer[:0] = data

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read_chunk()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def read(self) -> Frame | Discarded | None:
        """The next :class:`Frame`, or a :class:`Discarded` stretch, or ``None`` at the end of the stream."""
        while True:
            parsed = self._parse_header_block()
            if parsed is not _NEED_MORE:
                break
            if not await self._fill():
                if self._buffer:
                    log.warning("end of input inside a header block (%d bytes dropped)", len(self._buffer))
                return None
        if isinstance(parsed, str):
            return await self._discard(parsed)
        length, end = parsed
        del self._buffer[:end]
        while len(self._buffer) < length:
            if not await self._fill():
                log.warning("end of input after %d of the %d body bytes its Content-Length announced",
                            len(self._buffer), length)
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return Frame(body)

    def _parse_header_block(self) -> Any:
        """``(content_length, end_of_block)``, a problem string, or ``_NEED_MORE``."""
        buffer = self._buffer
        pos = 0
        length: int | None = None
        while True:
            end = buffer.find(b"\r\n", pos)
            if end < 0:
                return "a header block longer than 8192 bytes" if len(buffer) > MAX_HEADER_BYTES else _NEED_MORE
            if end == pos:
                if length is None:
                    return "a header block without Content-Length"
                return length, end + 2
            match = _HEADER_LINE.fullmatch(buffer, pos, end)
            if match is None:
                return f"not a header line: {_preview(buffer[pos:end])}"
            if match.group(1).lower() == b"content-length":
                value = match.group(2)
                if not value.isdigit():
                    return f"Content-Length is not a non-negative integer: {_preview(value)}"
                if len(value) > 12 or int(value) > MAX_CONTENT_LENGTH:
                    return f"Content-Length {value.decode()} exceeds {MAX_CONTENT_LENGTH} bytes"
                if length is not None and int(value) != length:
                    return "two different Content-Length headers"
                length = int(value)
            pos = end + 2
            if pos > MAX_HEADER_BYTES:
                return "a header block longer than 8192 bytes"

    async def _discard(self, reason: str) -> Discarded:
        """Drop bytes up to the next ``Content-Length:`` (never the byte the bad block starts at)."""
        kept = bytearray()
        size = 0
        start = 1
        keep_tail = len(b"content-length:") - 1
        while True:
            match = _CONTENT_LENGTH.search(self._buffer, start)
            if match is not None:
                cut = match.start()
            else:
                cut = max(len(self._buffer) - keep_tail, start if self._buffer else 0)
            if len(kept) < KEEP_DISCARDED_BYTES:
                kept += self._buffer[:min(cut, KEEP_DISCARDED_BYTES - len(kept))]
            size += cut
            del self._buffer[:cut]
            if match is not None or not await self._fill():
                if match is None:  # end of input: the rest is dropped too
                    size += len(self._buffer)
                    self._buffer.clear()
                break
            start = 0
        log.warning("malformed input: %s; skipped %d bytes to the next Content-Length header", reason, size)
        return Discarded(reason, size, bytes(kept))


def _preview(data: bytes, limit: int = 40) -> str:
    text = repr(bytes(data[:limit]))
    return text + ("..." if len(data) > limit else "")


# ------------------------------------------------------------------------------ request ids

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_COLON = re.compile(r"\s*:\s*")


def valid_id(value: Any) -> bool:
    """Whether ``value`` is an LSP request id (an integer or a string; not a bool)."""
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def find_request_id(text: str) -> int | str | None:
    """The ``id`` member of the top-level JSON object in ``text``, found without parsing it whole.

    Works on text that is not valid JSON (cut short, nested too deep, with replaced undecodable
    bytes): strings and brackets are scanned iteratively, and the first ``"id"`` key at depth 1 whose
    value is an integer or a string is returned. ``None`` when there is none.
    """
    start = text.find("{")
    if start < 0 or text[:start].strip():
        return None
    decoder = json.JSONDecoder()
    depth = 0
    for token in _TOKEN.finditer(text, start):
        value = token.group()
        if value in ("{", "["):
            depth += 1
        elif value in ("}", "]"):
            depth -= 1
            if depth == 0:
                return None
        elif depth == 1 and value == '"id"':
            colon = _COLON.match(text, token.end())
            if colon is None:
                continue
            try:
                found, _ = decoder.raw_decode(text, colon.end())
            except (ValueError, RecursionError):
                return None
            return found if valid_id(found) else None
    return None


# ------------------------------------------------------------------------------ dispatch


class MessageProblem(Exception):
    """A body that is not a JSON-RPC message we may run: answered with ``code`` to ``msg_id`` (if any)."""

    def __init__(self, code: int, message: str, msg_id: int | str | None, *, answer: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id
        self.answer = answer


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_body(body: bytes) -> Any:
    """The JSON value of a frame body; raises :class:`MessageProblem` (-32700) with the id if readable."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg_id = find_request_id(body.decode("utf-8", "replace"))
        raise MessageProblem(PARSE_ERROR, f"Parse error: the message is not valid UTF-8 (byte {exc.start})",
                             msg_id) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise MessageProblem(PARSE_ERROR, "Parse error: the message is nested too deeply",
                             find_request_id(text)) from None
    except ValueError as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise MessageProblem(PARSE_ERROR, f"Parse error: {reason}", find_request_id(text)) from None


def check_envelope(data: Any) -> None:
    """Raise :class:`MessageProblem` (-32600) unless ``data`` is a JSON-RPC 2.0 request, notification or
    response object (id: integer or string; method: string)."""
    if not isinstance(data, dict):
        raise MessageProblem(INVALID_REQUEST, "Invalid Request: a message must be a JSON object", None)
    has_id = "id" in data
    msg_id = data.get("id")
    if has_id and not valid_id(msg_id):
        kind = "null" if msg_id is None else type(msg_id).__name__
        # A response to one of our requests carries our ids (strings), so a bad one cannot be answered.
        raise MessageProblem(INVALID_REQUEST, f"Invalid Request: id must be an integer or a string (got {kind})",
                             None, answer="method" in data or not ("result" in data or "error" in data))
    if data.get("jsonrpc") != "2.0":
        raise MessageProblem(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0" '
                                              f"(got {json.dumps(data.get('jsonrpc'))})", msg_id, answer=has_id)
    if "method" in data:
        if not isinstance(data["method"], str):
            raise MessageProblem(INVALID_REQUEST, "Invalid Request: method must be a string", msg_id, answer=has_id)
        return
    if has_id and ("result" in data or "error" in data):
        return
    raise MessageProblem(INVALID_REQUEST, "Invalid Request: a message needs a method (request, notification) "
                                          "or a result or error (response)", msg_id, answer=has_id)


def _overrun(body: bytes) -> int:
    """How many bytes at the end of an unparseable ``body`` belong to the next frame (0 if none seen):
    what follows a complete JSON value, else the bytes from the first ``Content-Length:`` in it on (or
    a tail that could begin one: harmless if it does not, the reader then skips it)."""
    try:
        text = body.decode("utf-8")
        _, end = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip()))
    except (UnicodeDecodeError, ValueError, RecursionError):
        header = _CONTENT_LENGTH.search(body)
        if header is not None:
            return len(body) - header.start()
        # The body may end inside the next header's name: give back the longest tail that starts it.
        tail = body[-(len(_HEADER_NAME) - 1):].lower()
        for size in range(len(tail), 0, -1):
            if _HEADER_NAME.startswith(tail[-size:]):
                return size
        return 0
    rest = text[end:]
    return len(rest.encode("utf-8")) if rest.strip() else 0


def _send_error(protocol: Any, msg_id: int | str | None, code: int, message: str, data: Any = None) -> None:
    protocol._send_response(msg_id, None, ResponseError(code=code, message=message, data=data))


def _structure_problem(exc: BaseException) -> tuple[str, str]:
    """``(field, rule)`` of the first member cattrs could not structure (``params.textDocument.uri``)."""
    cause = exc.__cause__ or exc
    try:
        from cattrs import transform_error

        lines = transform_error(cause, path="$")
    except Exception:
        lines = []
    if not lines:
        return "params", "does not match the method's LSP type"
    rule, at, where = lines[0].rpartition(" @ ")
    if not at:
        return "params", lines[0]
    return where.removeprefix("$.").removeprefix("$") or "params", rule


def receive(protocol: Any, body: bytes, reader: FrameReader) -> None:
    """Check one frame body and hand it to ``protocol.handle_message`` or answer it with an error."""
    try:
        try:
            data = decode_body(body)
        except MessageProblem as problem:
            # A Content-Length that ran past the message swallowed the start of the next frame: put
            # those bytes back (the message itself is answered, not run).
            overrun = _overrun(body)
            if overrun:
                reader.unread(body[len(body) - overrun:])
                problem.message += f"; its Content-Length ran {overrun} bytes past its end"
            raise
        if isinstance(data, list):
            _refuse_batch(protocol, data)
            return
        check_envelope(data)
        if protocol._shutdown and "method" in data and data["method"] != EXIT:
            if "id" in data:
                _send_error(protocol, data["id"], INVALID_REQUEST, "Invalid Request: the server is shutting down")
            return
        try:
            message = protocol.structure_message(data)
        except JsonRpcException as exc:
            field, rule = _structure_problem(exc)
            if "method" in data and "id" in data:
                _send_error(protocol, data["id"], INVALID_PARAMS, f"{field}: {rule}",
                            {"code": "invalid-input", "field": field, "rule": rule})
            else:
                log.warning("dropped a %s that does not match its LSP type: %s: %s",
                            data.get("method", "response"), field, rule)
            return
        protocol.handle_message(message)
    except MessageProblem as problem:
        log.warning("malformed message: %s", problem.message)
        if problem.answer:
            _send_error(protocol, problem.msg_id, problem.code, problem.message)


def _refuse_batch(protocol: Any, batch: list[Any]) -> None:
    message = "Invalid Request: batch messages are not supported by the Language Server Protocol"
    ids = [item["id"] for item in batch if isinstance(item, dict) and valid_id(item.get("id")) and "method" in item]
    log.warning("refused a batch of %d messages", len(batch))
    for msg_id in ids or [None]:
        _send_error(protocol, msg_id, INVALID_REQUEST, message)


def discarded(protocol: Any, event: Discarded) -> None:
    """Answer a request found in a skipped stretch (it was not framed correctly, so it is not run)."""
    text = event.data.decode("utf-8", "replace")
    brace = text.find("{")
    msg_id = find_request_id(text[brace:]) if brace >= 0 else None
    if msg_id is not None:
        _send_error(protocol, msg_id, PARSE_ERROR, f"Parse error: the message was not framed correctly "
                                                   f"({event.reason}); it was skipped")


async def serve(reader: FrameReader, protocol: Any, stop: Any) -> None:
    """Read frames until the end of input or ``stop`` (a ``threading.Event``) is set; dispatch each."""
    while not stop.is_set():
        event = await reader.read()
        if event is None:
            break
        if isinstance(event, Discarded):
            discarded(protocol, event)
        else:
            receive(protocol, event.body, reader)
        # Let callbacks the handler scheduled run before the next message is dispatched (e.g. the
        # folder set-up scheduled by ``initialize`` after its response).
        await asyncio.sleep(0)


# ------------------------------------------------------------------------------ transports


def _stdin_chunks(stdin: Any, loop: asyncio.AbstractEventLoop) -> Callable[[], Awaitable[bytes]]:
    """An awaitable chunk source over a blocking binary stream, read by a daemon thread.

    A daemon thread (not an executor) so that a client that keeps stdin open after ``exit`` cannot
    keep the process alive; it reads the file descriptor with ``os.read`` (a daemon thread blocked
    inside a buffered reader's lock aborts the interpreter at exit). At most four chunks wait in the
    queue (backpressure).
    """
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4)
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (tests, embedding): its own reads
        read = getattr(stdin, "read1", stdin.read)
    else:
        read = functools.partial(os.read, fd)

    def pump() -> None:
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(chunk or b""), loop).result()
            except Exception:  # the loop is gone: the server is exiting
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="mnemon-stdin", daemon=True).start()
    return queue.get


def start_io(server: Any, stdin: Any = None, stdout: Any = None) -> int:
    """Serve ``server`` (a pygls ``JsonRPCServer``) over stdio with this module's reader; the exit code
    (``exit`` after ``shutdown``: 0, ``exit`` without it: 1, end of input: 0)."""
    from pygls.io_ import StdoutWriter

    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    source = stdin or sys.stdin.buffer

    async def main() -> None:
        reader = FrameReader(_stdin_chunks(source, asyncio.get_running_loop()))
        await serve(reader, server.protocol, server._stop_event)

    code = 0
    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except SystemExit as exc:  # pygls' ``exit`` handler calls sys.exit(0 or 1)
        code = exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        code = 130
    finally:
        server.shutdown()
    return code


def start_tcp(server: Any, host: str, port: int) -> int:
    """Serve ``server`` on ``host:port`` (one client at a time, for debugging) with this module's reader."""
    server._stop_event = stop = threading.Event()

    async def connection(stream: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await serve(FrameReader(lambda: stream.read(65536)), server.protocol, stop)
        server.shutdown()

    async def main() -> None:
        server._server = await asyncio.start_server(connection, host, port)
        async with server._server:
            await server._server.serve_forever()

    try:
        asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        pass
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0
