"""Cold start of ``mnemon-ls wake`` under the defaults (``workspaces`` + ``runtimeUserScope=global``: two
stores, the workspace found by walking up from a subdirectory) against the old defaults named explicitly
(``--scope global --runtime-user-scope storage``: one store), in the same run, as a ratio.

Run from the repository root with the project's Python: ``python bench/bench_defaults.py [--runs N]``.
Everything lives in a throw-away temp directory. Prints medians and nearest-rank p95 in milliseconds.
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


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    import pygit2

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo_dir = base / "repo"
        repo = pygit2.init_repository(str(repo_dir), initial_head="main")
        (repo_dir / "f").write_text("x\n")
        repo.index.add("f")
        repo.index.write()
        sig = pygit2.Signature("b", "b@example.com", 1_700_000_000, 0)
        repo.create_commit("HEAD", sig, sig, "init", repo.index.write_tree(), [])
        sub = repo_dir / "a" / "b" / "c"
        sub.mkdir(parents=True)
        env = {**os.environ, "MNEMON_DATA_DIR": str(base / "data"), "HOME": str(base)}
        command = [sys.executable, "-m", "mnemon_ls"]
        variants = {
            "defaults (workspaces + user global, from a subdirectory)": (["wake"], sub),
            "old defaults named (--scope global --runtime-user-scope storage)":
                (["wake", "--scope", "global", "--runtime-user-scope", "storage"], sub),
        }
        for extra, cwd in variants.values():  # seed one entry per store the variant reads
            for target in ("user", "memory"):
                subprocess.run([*command, "runtime", "add", "--target", target, "--content", f"seed {target}",
                                *extra[1:]], cwd=cwd, env=env, check=True, capture_output=True)
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.runs):  # interleaved, so load changes hit both alike
            for name, (extra, cwd) in variants.items():
                start = time.perf_counter_ns()
                subprocess.run([*command, *extra], cwd=cwd, env=env, check=True, capture_output=True)
                samples[name].append((time.perf_counter_ns() - start) / 1e6)
        print(f"mnemon-ls wake cold start, {args.runs} runs each, load {os.getloadavg()[0]:.2f}")
        medians = {}
        for name, values in samples.items():
            medians[name] = statistics.median(values)
            print(f"  {name}: median {medians[name]:.1f} ms, p95 {_p95(values):.1f} ms")
        new, old = list(medians.values())
        print(f"  ratio defaults / old defaults: {new / old:.3f}")


if __name__ == "__main__":
    main()
