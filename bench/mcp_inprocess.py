"""MCP tool calls in-process: ``mnemon_recall`` and ``mnemon_wake`` against an echo tool, over the SDK's in-memory
transport, for one or more checkouts side by side (issue 27 item 2).

Usage::

    python bench/mcp_inprocess.py --repo BEFORE --repo AFTER [--rounds 4] [--calls 600] [--label s48]

Set-up (not timed): the repository and the 10,000-item Memory Space of ``bench/mcp_start.py`` (same generator,
same 60 queries), built once by the first ``--repo``. Timed: for each round, for each checkout in turn (the order
alternates by round), a fresh ``python`` child imports that checkout, serves ``MnemonMcp`` and an ``MCPServer``
echo tool through ``mcp.Client`` (in-memory: no pipes, no JSON framing by a second process), warms up, and makes
``--calls`` calls of each (recall over the queries, wake, echo), reporting the process's CPU time
(``time.process_time``: every thread) and the wall time per call, in milliseconds. What the stdio bench
(``bench/mcp_start.py``) measures beside this: the pipes and the client process. This one isolates the server's
own work per call, so a change of a few hundred microseconds shows at moderate load.

Results: ``<out>/mcp_inprocess.json`` (merged by ``--label``) and ``<out>/mcp_inprocess.md``: per checkout, the
median over rounds of the per-call CPU and wall, and recall's and wake's ratio to the echo of the same child.
The 1-minute load average is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hook_path import FIXTURE, child_env  # noqa: E402
from mcp_start import SPACE  # noqa: E402

#: The child: ``<workspace> <queries.json> <calls>``; prints one JSON line of per-call milliseconds.
CHILD = r'''
import asyncio, json, os, sys, time
from mcp import Client
from mcp.server import MCPServer
from mnemon_ls.mcp.server import MnemonMcp
from mnemon_ls.mcp.workspaces import McpWorkspaces
from mnemon_ls.settings import load_settings
ws, queries, calls = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
os.chdir(ws)
echo_app = MCPServer("echo")

@echo_app.tool()
def echo(text: str) -> str:
    return text

async def timed(client, name, args_of):
    c0, w0 = time.process_time(), time.perf_counter()
    for n in range(calls):
        await client.call_tool(name, args_of(n))
    return 1000 * (time.process_time() - c0) / calls, 1000 * (time.perf_counter() - w0) / calls

async def main():
    ours = MnemonMcp(McpWorkspaces(load_settings({}), ws))
    async with Client(ours.server) as mine, Client(echo_app) as floor:
        for n in range(60):
            await mine.call_tool("mnemon_recall", {"query": queries[n % len(queries)]})
            await mine.call_tool("mnemon_wake", {})
            await floor.call_tool("echo", {"text": f"warm {n}"})
        out = {}
        out["recall"] = await timed(mine, "mnemon_recall", lambda n: {"query": queries[n % len(queries)]})
        out["wake"] = await timed(mine, "mnemon_wake", lambda n: {})
        out["echo"] = await timed(floor, "echo", lambda n: {"text": f"echo {n}"})
    print(json.dumps(out))

asyncio.run(main())
'''


def measure(args: argparse.Namespace) -> dict[str, Any]:
    repos = [Path(r).resolve() for r in args.repo]
    base = Path(tempfile.mkdtemp(prefix="bench-mcp-inprocess-"))
    ws = base / "repo"
    env = child_env(base, repos[0], False)
    subprocess.run([sys.executable, "-c", FIXTURE, str(ws), "30", "0"], check=True, env=env, cwd=str(base))
    made = subprocess.run([sys.executable, "-c", SPACE, str(ws), str(args.items), str(HERE)], check=True, env=env,
                          cwd=str(base), capture_output=True, text=True)
    queries = base / "queries.json"
    queries.write_text(made.stdout.strip().splitlines()[-1])
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {str(r): {} for r in repos}
    load_before = os.getloadavg()[0]
    for round_ in range(args.rounds):
        for repo in (repos if round_ % 2 == 0 else list(reversed(repos))):
            done = subprocess.run([sys.executable, "-c", CHILD, str(ws), str(queries), str(args.calls)],
                                  check=True, env=child_env(base, repo, False), cwd=str(base),
                                  capture_output=True, text=True)
            for name, pair in json.loads(done.stdout.strip().splitlines()[-1]).items():
                samples[str(repo)].setdefault(name, []).append(tuple(pair))
    load_after = os.getloadavg()[0]
    result: dict[str, Any] = {"load": [round(load_before, 2), round(load_after, 2)], "items": args.items,
                              "calls": args.calls, "rounds": args.rounds, "checkouts": {}}
    for repo, by_name in samples.items():
        commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        row: dict[str, Any] = {"commit": commit}
        for name, pairs in by_name.items():
            row[name] = {"cpuMs": round(statistics.median(p[0] for p in pairs), 3),
                         "wallMs": round(statistics.median(p[1] for p in pairs), 3)}
        for name in ("recall", "wake"):
            row[name]["cpuVsEcho"] = round(statistics.median(a[0] / e[0] for a, e in zip(by_name[name],
                                                                                         by_name["echo"])), 3)
            row[name]["wallVsEcho"] = round(statistics.median(a[1] / e[1] for a, e in zip(by_name[name],
                                                                                          by_name["echo"])), 3)
        result["checkouts"][repo] = row
    return result


def markdown(runs: dict[str, Any]) -> str:
    lines = ["# MCP tool calls in-process (SDK in-memory transport), against an echo tool", "",
             "`python bench/mcp_inprocess.py --repo A --repo B --label LABEL` (module doc). Per call, medians over "
             "rounds (each round a fresh child per checkout, the order alternating); ratios are per child, to the "
             "echo tool of the same child. CPU = process time of every thread.", ""]
    for label, run in runs.items():
        lines += [f"## {label} ({run['items']:,} items, {run['calls']} calls x {run['rounds']} rounds, load "
                  f"{run['load'][0]} -> {run['load'][1]})", "",
                  "| checkout | recall CPU / wall ms | wake CPU / wall ms | echo CPU / wall ms | recall vs echo "
                  "CPU / wall | wake vs echo CPU / wall |", "|---|---:|---:|---:|---:|---:|"]
        for row in run["checkouts"].values():
            r, w, e = row["recall"], row["wake"], row["echo"]
            lines.append(f"| {row['commit']} | {r['cpuMs']:.2f} / {r['wallMs']:.2f} | {w['cpuMs']:.2f} / "
                         f"{w['wallMs']:.2f} | {e['cpuMs']:.2f} / {e['wallMs']:.2f} | {r['cpuVsEcho']:.2f}x / "
                         f"{r['wallVsEcho']:.2f}x | {w['cpuVsEcho']:.2f}x / {w['wallVsEcho']:.2f}x |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True, help="a checkout to measure (repeat to compare)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    result = measure(args)
    path = args.out / "mcp_inprocess.json"
    runs = json.loads(path.read_text("utf-8")) if path.exists() else {}
    runs[args.label] = result
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n", "utf-8")
    (args.out / "mcp_inprocess.md").write_text(markdown(runs), "utf-8")
    print(markdown({args.label: result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
