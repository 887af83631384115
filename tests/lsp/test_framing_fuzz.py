"""Framing fuzzer: seeded malformed frames, each followed by a valid request that must be answered.

One server takes :data:`ROUNDS` bad frames drawn from a seeded generator (random bytes, wrong, missing,
negative or oversized ``Content-Length``, truncated frames, bit flips in header or body, invalid UTF-8,
deep nesting, wrong envelopes, and pairs of those). After each, a valid ``mnemon/status`` must come back
with a result; a server that instead exited must have exited non-zero with a message on stderr (and is
then restarted). Everything the server writes must be well-framed JSON-RPC (the raw client fails on
anything else), and nothing may print a traceback. Bounded: a few seconds of requests, well under 30 s.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.lsp.conftest import Launcher
from tests.lsp.rawclient import RawServer, frame

SEED = 20261201
ROUNDS = 150
#: Bytes a "long" Content-Length may run past its body (less than the probe that follows it, so the
#: declared bytes always arrive and the server is never left waiting for input that will not come).
MAX_OVERRUN = 60


def _valid_body(rng: random.Random) -> bytes:
    message = {"jsonrpc": "2.0", "id": rng.randrange(1, 10**6), "method": rng.choice(
        ["mnemon/status", "mnemon/wake", "mnemon/nope", "textDocument/hover"]), "params": {}}
    return json.dumps(message, separators=(",", ":")).encode()


def _noise(rng: random.Random, size: int) -> bytes:
    # No "Content-Length:" by construction (a random one could announce more bytes than ever follow).
    return bytes(rng.choice(b"\x00\x01\r\n\t {}[]\":,ab\xff\xfe\x80Cc-:0123456789") for _ in range(size))


def _bad_frame(rng: random.Random) -> bytes:
    body = _valid_body(rng)
    kind = rng.randrange(14)
    if kind == 0:
        return _noise(rng, rng.randrange(1, 300))
    if kind == 1:
        return b"Content-Length: %s\r\n\r\n" % rng.choice([b"abc", b"", b"1.5", b"0x10", b"+5", b" ", b"\xff"]) + body
    if kind == 2:
        return b"Content-Length: -%d\r\n\r\n" % rng.randrange(1, 100) + body
    if kind == 3:
        return rng.choice([b"", b"\r\n", b"Content-Type: x\r\n\r\n"]) + body
    if kind == 4:  # short
        return b"Content-Length: %d\r\n\r\n" % rng.randrange(0, len(body)) + body
    if kind == 5:  # long
        return b"Content-Length: %d\r\n\r\n" % (len(body) + rng.randrange(1, MAX_OVERRUN)) + body
    if kind == 6:  # truncated frame
        whole = frame(body)
        return whole[:rng.randrange(1, len(whole))]
    if kind == 7:  # bit flip in the header (never in its digits: that could announce more than follows)
        whole = bytearray(frame(body))
        header_end = whole.index(b"\r\n\r\n") + 4
        spots = [i for i in range(header_end) if not chr(whole[i]).isdigit()]
        spot = rng.choice(spots)
        whole[spot] ^= 1 << rng.randrange(8)
        return bytes(whole)
    if kind == 8:  # bit flips in the body
        flipped = bytearray(body)
        for _ in range(rng.randrange(1, 4)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        return frame(bytes(flipped))
    if kind == 9:
        return frame(body[:-1] + b',"x":"\xc3\x28"}')
    if kind == 10:
        depth = rng.choice([2000, 20000, 100000])
        return frame(body[:-3] + b"[" * depth + b"]" * depth + b"}")
    if kind == 11:
        return frame(rng.choice([b'{"jsonrpc":"1.0","id":1,"method":"mnemon/status"}', b'{"id":2,"method":"x"}',
                                 b'{"jsonrpc":"2.0","id":3}', b'{"jsonrpc":"2.0","id":[],"method":"x"}',
                                 b'[{"jsonrpc":"2.0","id":4,"method":"mnemon/status"}]', b"[]", b"null", b'"x"']))
    if kind == 12:  # lowercase header name and extra headers: valid, and must simply work
        return b"content-length: %d\r\nX-Extra: 1\r\n\r\n" % len(body) + body
    return _bad_frame(rng) + _bad_frame(rng)


async def _start(lsp: Launcher, repo_dir: Path) -> RawServer:
    server = RawServer()
    await server.start(lsp.env(), lsp.tmp_path)
    response = await server.initialize([repo_dir], {"mnemon": {"storageScope": "workspace"}})
    assert "result" in response, response
    return server


async def test_framing_fuzzer(lsp: Launcher, repo, repo_dir: Path):
    rng = random.Random(SEED)
    server = await _start(lsp, repo_dir)
    restarts = 0
    try:
        for round_ in range(ROUNDS):
            bad = _bad_frame(rng)
            server.write(bad)
            msg_id = server.request("mnemon/status", {})
            try:
                response = await server.response(msg_id)
            except AssertionError:
                code = await server.exit_code(5)
                assert code is not None, f"round {round_}: no answer and no exit after {bad[:200]!r}"
                assert code != 0 and server.stderr.strip(), f"round {round_}: exit {code} without an error"
                restarts += 1
                await server.close()
                server = await _start(lsp, repo_dir)
                continue
            assert response.get("result", {}).get("workspaces"), (round_, bad[:200], response)
            assert server.protocol_errors == [], server.protocol_errors
            for answers in server.responses.values():
                for answer in answers:
                    if "error" in answer:
                        assert isinstance(answer["error"]["data"]["code"], str), answer
        assert b"Traceback" not in server.stderr, server.stderr[-3000:]
        assert restarts == 0, "the server resynchronises; it should not have needed a restart"
    finally:
        await server.close()
