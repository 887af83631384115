"""Measure the MCP stdio line check's test for a number JSON cannot carry (``mnemon_ls.mcp.stdio``): its regex
(``_NUMBER_SUSPECT``, what every line paid before) against ``_number_suspect`` (byte shapes and substring
searches), on 2,000-character lines of five kinds; CPU microseconds per line, the best of 7 runs of 2,000 calls.
A measurement to read, not a test: ``PYTHONPATH=. python tests/bench/prefilter.py``."""

from __future__ import annotations

import json
import random
import time
import timeit

from mnemon_ls.mcp.stdio import _NUMBER_SUSPECT, _number_suspect


def _call(arguments: object) -> str:
    line = json.dumps({"jsonrpc": "2.0", "id": 17, "method": "tools/call",
                       "params": {"name": "mnemon_remember", "arguments": arguments}}, ensure_ascii=False)
    return (line + " " * 2000)[:2000]


def lines() -> dict[str, str]:
    """Five kinds of tools/call line, each cut or padded to 2,000 characters."""
    rng = random.Random(7)
    words = "deploy staging rollback cache the release runbook goes through canary first then blue green".split()
    return {
        "prose": _call({"content": " ".join(rng.choice(words) for _ in range(400))}),
        "prose, not ASCII": _call({"content": "部署先经过预发布环境，再灰度发布。" * 120}),
        "hex revisions": _call({"content": " ".join(f"{rng.getrandbits(256):064x}" for _ in range(29))}),
        "integers": _call({"ids": [rng.randint(0, 10**9) for _ in range(180)]}),
        "floats": _call({"weights": [rng.random() for _ in range(95)]}),
        "digit runs of 150": _call({"content": " ".join("".join(rng.choice("0123456789") for _ in range(150))
                                                        for _ in range(12))}),
    }


def per_line(check: object, line: str) -> float:
    """CPU microseconds of one ``check(line)``: the best of 7 runs of 2,000 calls."""
    return min(timeit.repeat(lambda: check(line), number=2000, repeat=7, timer=time.process_time)) / 2000 * 1e6


def main() -> None:
    for name, line in lines().items():
        assert (_NUMBER_SUSPECT.search(line) is not None) is _number_suspect(line), name
        before, after = per_line(_NUMBER_SUSPECT.search, line), per_line(_number_suspect, line)
        print(f"{name:18} regex {before:7.1f} us   _number_suspect {after:6.1f} us   ({before / after:4.1f}x)")


if __name__ == "__main__":
    main()
