"""The language server's session requests (``mnemon/wake``, ``mnemon/turn/begin``, ``mnemon/turn/end``,
``mnemon/status``) on two checkouts in one run: their round trips as ratios, this checkout over another.

Run::

    python bench/session_requests.py --other PATH [--rounds N]   # writes bench/results/session_requests.md

``PATH`` is a checkout of the code to compare with (``git worktree add /tmp/base <commit>``); its server runs
as ``python -m mnemon_ls serve`` with ``PYTHONPATH=PATH``, this checkout's with ``PYTHONPATH`` set to this
one, the same interpreter. Both servers serve the same kind of workspace (a fresh git repository each, a
MEMORY.md of 60 entries and a USER.md of 10, ``storageScope: workspace``) and run side by side; the rounds
alternate which server is asked first. One round asks each server: ``mnemon/wake``, ``mnemon/turn/begin``,
``mnemon/turn/end`` of that View, ``mnemon/status``. Times are ``time.perf_counter_ns`` in this process
(the client of :mod:`bench_lsp`: no pygls on the client side), medians over the rounds after a warm-up;
the ratio of the medians (this / other) is what compares, not the absolute times (the machine is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from bench_lsp import RawClient, environment  # noqa: E402
from tests.gitrepo import make_repo  # noqa: E402

RESULTS = REPO_ROOT / "bench" / "results" / "session_requests.md"
REQUESTS = ("mnemon/wake", "mnemon/turn/begin", "mnemon/turn/end", "mnemon/status")


async def _server(base: Path, name: str, code: Path) -> RawClient:
    folder = base / name
    make_repo(folder)
    env = environment(base) | {"PYTHONPATH": str(code), "MNEMON_SEMANTIC": "off"}
    client = RawClient()
    await client.spawn(env, folder)
    await client.initialize(folder)
    client.notify("initialized", {})
    await client.request("mnemon/status", {})
    for i in range(60):
        await client.request("mnemon/runtime/mutate", {"action": "add", "target": "memory",
                                                        "content": f"Fact number {i}: the build uses step {i}."})
    for i in range(10):
        await client.request("mnemon/runtime/mutate", {"action": "add", "target": "user",
                                                        "content": f"Preference {i}: short answers."})
    return client


async def _round(client: RawClient, samples: dict[str, list[int]], keep: bool) -> None:
    def timed(method: str, t0: int) -> None:
        if keep:
            samples[method].append(time.perf_counter_ns() - t0)

    t0 = time.perf_counter_ns()
    await client.request("mnemon/wake", {})
    timed("mnemon/wake", t0)
    t0 = time.perf_counter_ns()
    view = (await client.request("mnemon/turn/begin", {}))["viewId"]
    timed("mnemon/turn/begin", t0)
    t0 = time.perf_counter_ns()
    await client.request("mnemon/turn/end", {"viewId": view})
    timed("mnemon/turn/end", t0)
    t0 = time.perf_counter_ns()
    await client.request("mnemon/status", {})
    timed("mnemon/status", t0)


async def main_async(other: Path, rounds: int, warmup: int) -> dict[str, dict[str, list[int]]]:
    base = Path(tempfile.mkdtemp(prefix="mnemon-bench-session-"))
    servers = {"this": await _server(base, "this", REPO_ROOT), "other": await _server(base, "other", other)}
    samples = {key: {method: [] for method in REQUESTS} for key in servers}
    try:
        for i in range(rounds + warmup):
            order = ["this", "other"] if i % 2 == 0 else ["other", "this"]
            for key in order:
                await _round(servers[key], samples[key], i >= warmup)
    finally:
        for client in servers.values():
            await client.close()
    return samples


def _commit(checkout: Path) -> str:
    """The short commit of ``checkout`` (``+`` when its work tree has changes), or ``?``."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "?"
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def render(samples: dict[str, dict[str, list[int]]], other: Path, rounds: int) -> str:
    load = os.getloadavg()
    lines = [f"# Session requests: this checkout / another ({_dt.date.today().isoformat()})", "",
             f"`python bench/session_requests.py --other {other} --rounds {rounds}` (see its docstring). Round "
             "trips in ms, median over the rounds after warm-up; the ratio of the medians is what compares. "
             f"This checkout: {_commit(REPO_ROOT)}; the other: {_commit(other)}.", "",
             f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load "
             f"average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (other jobs share the cores).", "",
             "| request | n | this (median) | other (median) | ratio this/other |", "|---|---:|---:|---:|---:|"]
    for method in REQUESTS:
        mine = statistics.median(samples["this"][method]) / 1e6
        theirs = statistics.median(samples["other"][method]) / 1e6
        lines.append(f"| `{method}` | {len(samples['this'][method])} | {mine:.2f} | {theirs:.2f} | "
                     f"**{mine / theirs:.2f}x** |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, required=True, help="checkout to compare with")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--print-only", action="store_true")
    args = parser.parse_args()
    samples = asyncio.run(main_async(args.other.resolve(), args.rounds, args.warmup))
    text = render(samples, args.other, args.rounds)
    print(text)
    if not args.print_only:
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
