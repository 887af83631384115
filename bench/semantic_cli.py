"""What semantic recall costs a command-line user (issue 11): wall time of ``mnemon-ls remember`` and
``mnemon-ls recall`` subprocesses with semantic recall off (``MNEMON_SEMANTIC=off``) and on, interleaved in
one run, as median / p95 and the on/off ratio of the medians.

``remember`` with semantic on embeds its item at once (a short fact); ``recall`` embeds the query and
searches the space's vectors (nothing missing: the items were embedded by their remembers).

    python bench/semantic_cli.py [--runs 15]      # needs the semantic extra
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "semantic_paraphrases.json"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    facts = json.loads(FIXTURE.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "GIT_"))}
        env.update(HOME=tmp, OMP_NUM_THREADS="1")
        base = [sys.executable, "-m", "mnemon_ls"]
        scope = ["--scope", "custom", "--data-dir", str(root)]

        def run(args: list[str], semantic: str) -> tuple[float, float]:
            """(wall ms, CPU ms: user + system of the child)"""
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(base + args + scope, env=dict(env, MNEMON_SEMANTIC=semantic), check=True,
                           capture_output=True, cwd=tmp)
            wall = (time.perf_counter() - start) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return wall, ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000

        run(["space", "create", "--name", "P", "--description", "facts", "--active"], "on")
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in ("remember off", "remember on", "recall off",
                                                                       "recall on")}
        for index in range(runs):
            for semantic in ("off", "on"):
                times[f"remember {semantic}"].append(run(["remember", facts[(2 * index + (semantic == "on")) % 100]["text"]],
                                                         semantic))
                times[f"recall {semantic}"].append(run(["recall", facts[index % 100]["paraphrase"]], semantic))
    print(f"{runs} runs each, ms per subprocess (start to exit); load average {os.getloadavg()[0]:.1f}")
    print("| command | measure | semantic off median / p95 | semantic on median / p95 | on - off (medians) | "
          "on/off (medians) |")
    print("|---|---|---|---|---|---|")

    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]

    for command in ("remember", "recall"):
        for column, name in ((0, "wall"), (1, "CPU")):
            off = [t[column] for t in times[f"{command} off"]]
            on = [t[column] for t in times[f"{command} on"]]
            print(f"| {command} | {name} | {statistics.median(off):.0f} / {p95(off):.0f} | "
                  f"{statistics.median(on):.0f} / {p95(on):.0f} | {statistics.median(on) - statistics.median(off):.0f} | "
                  f"{statistics.median(on) / statistics.median(off):.2f} |")


if __name__ == "__main__":
    main()
