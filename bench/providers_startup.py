"""What an enabled third-party provider costs the commands that do not need it: ``mnemon-ls wake`` and
``mnemon-ls doctor`` cold starts (median / p95 ms), with no provider against with Mem0 enabled and one active
Mem0 space holding one memory, interleaved in one run, as ratios to ``wake`` with no provider.

    python bench/providers_startup.py [--runs N]

Each sample is a fresh ``python -m mnemon_ls`` subprocess (what an editor hook or a person runs) on its own
throw-away root and ``HOME``. Also timed for reference: ``recall`` through the Mem0 space (it has to open the
engine). Needs ``providers/mem0`` installed (``pip install -e ./providers/mem0``); prints only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(env: dict[str, str], cwd: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mnemon_ls", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return (time.perf_counter() - started) * 1000, done


def setup(base: Path, with_mem0: bool) -> tuple[dict[str, str], Path]:
    home, workspace = base / "home", base / "ws"
    home.mkdir(parents=True)
    workspace.mkdir()
    (workspace / ".mnemon").mkdir()
    env = {**os.environ, "HOME": str(home), "MNEMON_DATA_DIR": str(base / "data"), "MEM0_DIR": str(base / "mem0"),
           "MNEMON_PROVIDER_TIMEOUT_MS": "600000"}  # recall measures opening Mem0, never the timeout
    env.pop("MNEMON_SEMANTIC", None)
    for args in (("runtime", "add", "--content", "Run the tests with pytest -n 2"),
                 ("space", "create", "--name", "Project", "--description", "project decisions", "--active"),
                 ("remember", "We chose SQLite FTS5 for the side index", "--space", "default")):
        _, done = run(env, workspace, *args)
        assert done.returncode == 0, done.stderr
    if with_mem0:
        for args in (("provider", "enable", "mem0", "--set", f"dataPath={base / 'mem0-data'}"),
                     ("space", "create", "--provider", "mem0", "--name", "Team", "--description", "team decisions",
                      "--active")):
            _, done = run(env, workspace, *args)
            assert done.returncode == 0, done.stderr
        _, done = run(env, workspace, "space", "list", "--json")
        import json

        listed = json.loads(done.stdout)
        spaces = listed["spaces"] if isinstance(listed, dict) else listed
        team = next(s["id"] for s in spaces if s["providerId"] == "mem0")
        _, done = run(env, workspace, "remember", "We deploy on Tuesdays after review", "--space", team)
        assert done.returncode == 0, done.stderr
    return env, workspace


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    try:
        import mnemon_ls_provider_mem0  # noqa: F401
    except ImportError:
        print("providers/mem0 is not installed; nothing to measure", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="mnemon-bench-startup-") as tmp:
        plain = setup(Path(tmp) / "plain", False)
        mem0 = setup(Path(tmp) / "mem0", True)
        rows = {key: [] for key in ("wake", "doctor", "wake+mem0", "doctor+mem0", "recall+mem0")}
        for name, (env, cwd) in (("plain", plain), ("mem0", mem0)):  # warm-up (bytecode, page cache)
            run(env, cwd, "wake")
        for _ in range(args.runs):
            for key, (env, cwd), cmd in (("wake", plain, ("wake",)), ("wake+mem0", mem0, ("wake",)),
                                         ("doctor", plain, ("doctor",)), ("doctor+mem0", mem0, ("doctor",)),
                                         ("recall+mem0", mem0, ("recall", "deploy Tuesdays"))):
                ms, done = run(env, cwd, *cmd)
                assert done.returncode in (0, 1), (cmd, done.stderr)
                rows[key].append(ms)
        floor = statistics.median(rows["wake"])
        load = os.getloadavg()[0]
        print(f"runs per row: {args.runs}; 1-min load average at the end: {load:.2f}")
        print(f"{'command':<14} {'median ms':>10} {'p95 ms':>9} {'x wake (no provider)':>21}")
        for key, samples in rows.items():
            median, p95 = stats(samples)
            print(f"{key:<14} {median:>10.0f} {p95:>9.0f} {median / floor:>21.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
