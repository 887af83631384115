"""MCP server benchmark: ``mnemon-ls mcp`` start-up and ``tools/call`` round trips, through the official
SDK's stdio client (the same path Claude Code, Codex or Cursor take).

Usage: ``python bench/bench_mcp.py [--starts 15] [--calls 200] [--items 10000] [--out bench/results/mcp.md]``.

- start: process spawn -> ``initialize`` result, ms, for ``mnemon-ls mcp`` and, interleaved in the same
  run, for an empty ``MCPServer`` of the same SDK started the same way (the floor); the ratio per pair.
- round trips over one session: ``mnemon_wake``, ``mnemon_recall`` against a native space of ``--items``
  generated insights (built with ``NativeProvider.import_items``, half English, half Chinese), and a
  durable ``mnemon_runtime_memory`` add (a real commit with fsync), ms median and p95.
- the SessionStart hook (``mnemon-ls hook session-start``, cold process), the hot path of assistant
  hooks: ms median and p95.

Medians and nearest-rank p95 from ``time.perf_counter``; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_spaces import Generator, percentile  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from mnemon_ls.spaces import SpacesService  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EMPTY_SERVER = "from mcp.server import MCPServer\nMCPServer('empty').run('stdio')\n"


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MNEMON_"))}
    out["PYTHONUNBUFFERED"] = "1"
    return out


async def time_start(args: list[str]) -> float:
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO), env=env())
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            elapsed = (time.perf_counter() - started) * 1000
    return elapsed


async def round_trips(workspace: Path, root: Path, calls: int, queries: list[str]) -> dict[str, list[float]]:
    args = ["-m", "mnemon_ls", "mcp", "--workspace", str(workspace), "--scope", "custom", "--data-dir", str(root),
            "--runtime-user-scope", "storage", "--memory-limit-bytes", "1048576"]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO), env=env())
    out: dict[str, list[float]] = {"wake": [], "recall": [], "add": []}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for warm in ("mnemon_wake", "mnemon_recall"):
            await session.call_tool(warm, {"query": queries[0]} if warm == "mnemon_recall" else {})
        for n in range(calls):
            for name, arguments, key in (("mnemon_wake", {}, "wake"),
                                         ("mnemon_recall", {"query": queries[n % len(queries)]}, "recall"),
                                         ("mnemon_runtime_memory", {"action": "add", "content": f"bench fact {n}"}, "add")):
                started = time.perf_counter()
                result = await session.call_tool(name, arguments)
                out[key].append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result.content
    return out


def hook_runs(workspace: Path, root: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "mnemon_ls", "hook", "session-start", "--workspace", str(workspace),
                               "--scope", "custom", "--data-dir", str(root), "--runtime-user-scope", "storage"],
                              input="{}", capture_output=True,
                              text=True, env=env(), cwd=str(REPO), check=True)
        times.append((time.perf_counter() - started) * 1000)
        assert proc.stdout.startswith("MNEMON RUNTIME MEMORY SNAPSHOT")
    return times


def row(name: str, values: list[float]) -> str:
    return f"| {name} | {statistics.median(values):.2f} | {percentile(values, 95):.2f} | {len(values)} |"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "mcp.md"))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    try:
        workspace = work / "ws"
        workspace.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(workspace)], check=True)
        root = work / "root"
        service = SpacesService(root)
        space = service.create_space("Bench", "Generated insights for the benchmark", active=True)
        gen = Generator(seed=args.items)
        items = [gen.item(i) for i in range(args.items)]
        provider = service.provider(space.record)
        for start in range(0, len(items), 1000):
            provider.import_items(items[start:start + 1000], batch=1000)
        service.close()
        queries = gen.queries(60, [it.content for it in items[:2000]])

        ours, empty, ratios = [], [], []
        mcp_args = ["-m", "mnemon_ls", "mcp", "--workspace", str(workspace), "--scope", "custom",
                    "--data-dir", str(root), "--runtime-user-scope", "storage"]
        await time_start(mcp_args)
        await time_start(["-c", EMPTY_SERVER])
        for _ in range(args.starts):
            a = await time_start(mcp_args)
            b = await time_start(["-c", EMPTY_SERVER])
            ours.append(a)
            empty.append(b)
            ratios.append(a / b)
        trips = await round_trips(workspace, root, args.calls, queries)
        hooks = hook_runs(workspace, root, max(5, args.starts))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = os.getloadavg()[0]
    lines = [
        "# MCP server benchmark", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"1-minute load {load:.2f}. Command: `python bench/bench_mcp.py --starts {args.starts} --calls {args.calls} "
        f"--items {args.items}`.", "",
        "| measurement | median (ms) | p95 (ms) | n |", "|---|---:|---:|---:|",
        row("start -> initialize result, `mnemon-ls mcp`", ours),
        row("start -> initialize result, empty MCPServer (floor)", empty),
        f"| ratio ours / empty (per pair) | {statistics.median(ratios):.2f}x | {percentile(ratios, 95):.2f}x | {len(ratios)} |",
        row("tools/call mnemon_wake", trips["wake"]),
        row(f"tools/call mnemon_recall ({args.items:,} items)", trips["recall"]),
        row("tools/call mnemon_runtime_memory add (durable)", trips["add"]),
        row("`mnemon-ls hook session-start` (cold process)", hooks),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
