"""Cost of the symbolic-link checks (DESIGN.md invariant 10) on the Runtime hot paths.

Runs every path twice, interleaved sample by sample in one process on one root: once *confined* (the
root registered with :func:`mnemon_ls.fsio.confine` from the workspace, as the host does in
``workspace`` scope: every read and write lstat-checks the directories below the workspace) and once
*unconfined* (the registration removed for that sample, i.e. the code before the checks). Prints median
and nearest-rank p95 in milliseconds and the confined/unconfined ratio of the medians.

    python bench/bench_fsguard.py [--samples N] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from mnemon_ls import fsio
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95 + 0.999999) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        workspace = Path(tmp) / "ws"
        root = workspace / ".mnemon"
        store = RuntimeStore(root, RuntimeMemorySettings(memory_limit_bytes=1 << 20))
        for n in range(50):
            store.mutate(ops.validate_request("add", "memory", f"seed entry {n} " + "x" * 80))
        key = os.path.normpath(str(root))

        def confined(on: bool) -> None:
            if on:
                fsio._CONFINED[key] = os.path.normpath(str(workspace))
            else:
                fsio._CONFINED.pop(key, None)

        paths = {
            "read (memories.json)": lambda n: store.read() if not setattr(store, "_cache", None) else None,
            "repair check (3 reads)": lambda n: store.projections.repair(),
            "durable add (lock, 3 files, fsync)": lambda n: store.mutate(
                ops.validate_request("add", "memory", f"bench entry {n}")),
        }
        print(f"{args.samples} samples per path and mode, interleaved; load {os.getloadavg()[0]:.2f}")
        print(f"{'path':38} {'confined med/p95 ms':>22} {'unconfined med/p95 ms':>24} {'ratio':>6}")
        for name, run in paths.items():
            times: dict[bool, list[float]] = {True: [], False: []}
            for n in range(args.samples):
                for mode in ((True, False) if n % 2 else (False, True)):
                    confined(mode)
                    started = time.perf_counter_ns()
                    run(n * 2 + mode)
                    times[mode].append((time.perf_counter_ns() - started) / 1e6)
            confined(True)
            on, off = times[True], times[False]
            ratio = statistics.median(on) / statistics.median(off)
            print(f"{name:38} {statistics.median(on):10.3f} / {p95(on):8.3f} "
                  f"{statistics.median(off):12.3f} / {p95(off):8.3f} {ratio:6.2f}")
        print(f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
