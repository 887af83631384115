"""Recall latency of a ByteRover space against a native space in the same run (for bench/providers_recall.py).

Starts what the tests start (tests/servers.py: the login stand-in, a private ByteRover state), fills one ByteRover
project and one native space with the same N items (N = 1,000 and 10,000 by default, ``--sizes``), waits until
ByteRover's search sees the last write, then times ``SpacesService.recall`` of one query on each space (``--runs``
times, after one warm-up), and prints one JSON object per size: medians and p95 (ms), their ratio, the load
average before and after (/proc/loadavg), the cold start of the engine (``provider enable`` on a daemon that is
not running: ``brv --version``, the daemon's start, ``brv locations``) and the installed size of byterover-cli.

    MNEMON_BYTEROVER_BRV=/path/node_modules/.bin/brv python providers/byterover/bench/recall.py [--sizes 1000,10000]

ByteRover indexes at most 10,000 files of a tree (byterover-cli's MAX_CONTEXT_TREE_FILES): 10,000 is its limit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from servers import ByteRoverHome, LoginStub, wait_for  # noqa: E402


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _timed(call, runs: int) -> tuple[float, float]:
    call()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    command = os.environ.get("MNEMON_BYTEROVER_BRV") or shutil.which("brv")
    if command is None:
        sys.exit("no brv: set MNEMON_BYTEROVER_BRV")
    package = Path(os.path.realpath(command)).parents[1]
    size_mb = int(subprocess.run(["du", "-sm", str(package.parent.parent)], capture_output=True, text=True)
                  .stdout.split()[0]) if package.parent.name == "node_modules" else None
    stub = LoginStub().start()
    home = ByteRoverHome(command, stub)
    os.environ.update(home.env)
    scratch = Path(tempfile.mkdtemp(prefix="brv-bench-"))
    os.environ["HOME"] = str(scratch / "home")
    (scratch / "home").mkdir()
    from mnemon_ls.spaces import SpacesService
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine

    try:
        for size in (int(s) for s in args.sizes.split(",")):
            project = home.init_project(scratch / f"p{size}")
            service = SpacesService(scratch / f"root{size}", provider_timeout=300)
            home.stop(remove=False)  # a cold start: no daemon running
            started = time.perf_counter()
            service.thirdparty.enable("byterover", {"command": command, "timeoutSeconds": "300"})
            cold = (time.perf_counter() - started) * 1000
            rover = next(v.record.id for v in service.list_spaces() if v.record.external_id == str(project))
            service.activate(rover)
            native = service.create_space(f"Native {size}", "bench", active=True).record.id
            space = ByteRoverEngine.open({"command": command}).space({"projectPath": str(project)}, space_id=rover)
            texts = [f"Note {i}: service number {i} deploys on weekday {i % 7} and is owned by team {i % 97}"
                     for i in range(size)]
            for text in texts:
                space.remember(text, category="fact", importance=3, tags=[], entities=[], source="bench")
            for start in range(0, size, 200):
                service.remember_many(native, [{"content": t} for t in texts[start:start + 200]])
            query = f"service number {size // 2} deploys"
            wait_for(lambda: service.recall(query, spaces=[rover]).to_dict()["results"], "the last write", 300)
            before = _load()
            b_median, b_p95 = _timed(lambda: service.recall(query, spaces=[rover]), args.runs)
            n_median, n_p95 = _timed(lambda: service.recall(query, spaces=[native]), args.runs)
            found = {name: len(service.recall(query, spaces=[sid]).to_dict()["results"])
                     for name, sid in (("byterover", rover), ("native", native))}
            print(json.dumps({"engine": "byterover", "items": size, "runs": args.runs, "query": query,
                              "results": found,
                              "recallMedianMs": round(b_median, 1), "recallP95Ms": round(b_p95, 1),
                              "nativeMedianMs": round(n_median, 2), "nativeP95Ms": round(n_p95, 2),
                              "ratioMedian": round(b_median / n_median, 1), "coldEnableMs": round(cold),
                              "installMB": size_mb, "loadavgBefore": before, "loadavgAfter": _load()}), flush=True)
            service.close()
    finally:
        home.stop()
        stub.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
