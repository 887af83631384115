"""Workspace memory records (seed 002): one ``RecordsSource.create`` (a locked, validated, fsynced append)
against the floor of a bare ``O_APPEND`` + ``fsync`` of the same line, and ``list(text=...)`` over a file of
N records against bare ``json.loads`` of its lines, in the same run, as ratios.

Run from the repository root with the project's Python: ``python bench/bench_records.py [--runs N] [--records N]``.
Everything lives in a throw-away temp directory. Prints medians and nearest-rank p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemon_ls.records import RecordsSource, content_hash, validate_record  # noqa: E402
from mnemon_ls.records.store import encode  # noqa: E402


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def _ms(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _show(name: str, values: list[float], floor: list[float]) -> None:
    ratio = statistics.median(values) / statistics.median(floor)
    print(f"{name:44s} median {statistics.median(values):8.3f} ms  p95 {_p95(values):8.3f} ms  "
          f"(floor median {statistics.median(floor):7.3f} ms; ratio {ratio:5.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--records", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws = base / "ws"
        ws.mkdir()
        source = RecordsSource(ws, session_id="bench", user_id="bench", env={"DSH_HOME": str(base / "dsh")})
        sample = source.create("project", "fact", "warm", "warm up").record
        line = encode(sample)
        floor_path = base / "floor.jsonl"

        def bare_append() -> None:
            fd = os.open(floor_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

        counter = iter(range(10**9))
        create = _ms(lambda: source.create("project", "fact", "t", f"record {next(counter)} about caching"), args.runs)
        floor = _ms(bare_append, args.runs)
        _show("create (lock, validate, fsynced append)", create, floor)

        path = source.location("project").path
        with open(path, "ab") as handle:  # N more records, written directly (setup, not measured)
            data = sample.to_json()
            for n in range(args.records):
                text = f"record {n}: the {'cache' if n % 10 == 0 else 'index'} keeps {n} entries"
                handle.write(encode(validate_record(data | {"id": f"memory:user:fact:bench{n}", "content": text,
                                                             "contentHash": content_hash(text)})))
        raw = path.read_bytes()
        search = _ms(lambda: source.list(text="cache", scopes=["project"]), max(5, args.runs // 5))
        parse = _ms(lambda: [json.loads(x) for x in raw.splitlines() if x.strip()], max(5, args.runs // 5))
        _show(f"list(text) over {args.records} records", search, parse)


if __name__ == "__main__":
    main()
