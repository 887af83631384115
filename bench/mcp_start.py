"""``mnemon-ls mcp`` against minimal servers of the same ``mcp`` SDK (issue 27 item 2): spawn -> ``initialize``
result, and ``tools/call`` round trips, each as a ratio measured in the same run.

Usage::

    python bench/mcp_start.py [--starts 20] [--calls 200] [--label after] [--repo DIR] [--out DIR]

Set-up (not timed): the repository of ``bench/hook_path.py`` (branch ``main``, 30 Runtime entries, default
``workspaces`` scope under a temp ``MNEMON_DATA_DIR``) with one active native Memory Space of 10,000 items made
by ``bench/bench_spaces.py``'s generator (half English from a Zipf vocabulary, half Chinese, an identifier each,
as ``bench/bench_mcp.py`` measured recall before) and 60 of its queries (words, Chinese fragments,
identifiers), all built by the code under measurement (``--repo``, default this checkout).

Timed, through the SDK's own stdio client (``stdio_client`` + ``ClientSession``: what Claude Code, Codex or
Cursor do), every server a fresh ``python`` process with bytecode cached in a temp ``PYTHONPYCACHEPREFIX``:

1. start: spawn -> the ``initialize`` result, and spawn -> the first ``tools/list`` answer, for
   ``python -m mnemon_ls mcp --workspace <repo>`` and for :data:`MINIMAL_SERVER` (an ``MCPServer`` with no
   tools), interleaved (the order alternates); ratio of the medians and median of the per-pair ratios;
2. calls over one session each, interleaved call by call: ``mnemon_wake`` and ``mnemon_recall`` (queries over
   the 10,000 items) against :data:`ECHO_SERVER`'s ``echo`` tool (an ``MCPServer`` whose one tool returns its
   argument); ratio of the medians. Beside them, the same queries to :data:`FTS_SERVER`'s ``recall`` (a plain
   FTS5 trigram query over the same texts on the same SDK): how far any keyword recall over this store is from
   the echo, and ``mnemon_recall`` as a ratio to it; and the echo server's ``sized`` tool answering as many
   characters as the wake's own text (``echo-sized``): what the SDK spends on an answer of that size alone.

Aims (issue 27): start <= 1.05x the minimal server; ``mnemon_wake`` <= 1.5x and ``mnemon_recall`` at 10,000
items <= 2x the echo tool. Results: merged by ``--label`` into ``<out>/mcp_start.json``, ``<out>/mcp_start.md``
rewritten from every run there (a ratio within its aim in bold). Wall time (``time.perf_counter``); the
1-minute load average is recorded. Where Linux says it (``/proc/<pid>/task/*/schedstat``: nanoseconds on a CPU,
every thread of the server), the server process's CPU time is recorded too, read outside the timed span: from
spawn to the ``initialize`` result, and per call (a difference around it), as ratios the same way; on a shared
machine the wall time includes waiting for a core, the CPU time does not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hook_path import FIXTURE, child_env  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

MINIMAL_SERVER = "from mcp.server import MCPServer\nMCPServer('minimal').run('stdio')\n"
#: An ``echo`` tool returning its argument, and a ``sized`` tool answering a text of ``size`` characters (the
#: ``echo-sized`` floor asks for as many characters as the wake's own text: what the SDK spends on that size alone).
ECHO_SERVER = ("from mcp.server import MCPServer\napp = MCPServer('echo')\n\n@app.tool()\ndef echo(text: str) -> str:\n"
               "    return text\n\n@app.tool()\ndef sized(size: int) -> str:\n    return ('fact ' * size)[:size]\n\n"
               "app.run('stdio')\n")
#: The server answering each timed call, by the call's name in the results (``pids`` of :func:`time_calls`).
SERVER_OF = {"mnemon_wake": "ours", "mnemon_recall": "ours", "echo": "echo", "fts": "fts", "echo-sized": "echo"}
#: Builds the space in a child running the measured code: ``<repo dir> <items> <bench dir>``; prints the queries.
SPACE = r'''
import json, sys
sys.path.insert(1, sys.argv[3])
from bench_spaces import Generator
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
host = WorkspaceHost(sys.argv[1], load_settings({}))
record = host.spaces.create_space("Project", "Build and service facts", active=True).record
provider = host.spaces.provider(record)
count = int(sys.argv[2])
gen = Generator(seed=count)
items = [gen.item(i) for i in range(count)]
for start in range(0, count, 1000):
    provider.import_items(items[start:start + 1000], batch=1000)
host.close()
if len(sys.argv) > 4:  # the FTS5 floor: a plain trigram table over the same texts
    import sqlite3
    db = sqlite3.connect(sys.argv[4])
    db.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')")
    db.executemany("INSERT INTO t (content) VALUES (?)", [(item.content,) for item in items])
    db.commit()
    db.close()
print(json.dumps(gen.queries(60, [item.content for item in items[:2000]])))
'''
#: A floor for ``mnemon_recall``: an ``MCPServer`` whose one tool runs a plain FTS5 trigram query over the same
#: 10,000 texts (the query's words of 3+ characters as quoted phrases joined by OR, ``ORDER BY rank LIMIT 8``, as
#: bench/recall_100k.py's ``words`` floor) and answers the rows' texts, one a line: what any keyword recall over
#: this store must at least do, on the same SDK.
FTS_SERVER = ("import sqlite3, sys\nfrom mcp.server import MCPServer\ndb = sqlite3.connect(sys.argv[1], "
              "check_same_thread=False)\napp = MCPServer('fts')\n\n@app.tool()\ndef recall(query: str) -> str:\n"
              "    words = [w for w in query.split() if len(w) >= 3] or [query]\n"
              "    match = ' OR '.join('\"' + w.replace('\"', '\"\"') + '\"' for w in words)\n"
              "    rows = db.execute('SELECT rowid, content FROM t WHERE t MATCH ? ORDER BY rank LIMIT 8', (match,))"
              ".fetchall()\n    return '\\n'.join(f'{r[0]}: {r[1]}' for r in rows)\n\napp.run('stdio')\n")
OURS_MARKER, MINIMAL_MARKER, ECHO_MARKER = "mnemon_ls", "MCPServer('minimal')", "MCPServer('echo')"
FTS_MARKER = "MCPServer('fts')"
AIMS = {"start": 1.05, "mnemon_wake": 1.5, "mnemon_recall": 2.0}


def _server_pid(marker: str, exclude: set[int] = frozenset()) -> int | None:
    """The pid of this process's newest child whose command line holds ``marker`` (``None``: none, or no /proc)."""
    me, found = os.getpid(), []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit() or int(name) in exclude:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return max(found) if found else None


def _cpu_ns(pid: int | None) -> int | None:
    """Nanoseconds every thread of ``pid`` has run on a CPU (``None`` when Linux does not say)."""
    if pid is None:
        return None
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:  # a thread that ended meanwhile
                continue
    except OSError:
        return None
    return total


def params(argv: list[str], env: dict[str, str], cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=argv, cwd=str(cwd), env=env)


async def time_start(server: StdioServerParameters, marker: str) -> tuple[float, float, int, float | None]:
    """``(ms to the initialize result, ms to the first tools/list answer, tools listed, server CPU ms to the
    initialize result or None)``; ``marker``: a part of the server's command line."""
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            at_initialize = time.perf_counter()
            cpu = _cpu_ns(_server_pid(marker))
            paused = time.perf_counter() - at_initialize  # reading the CPU time is not timed
            listed = await session.list_tools()
            tools = (time.perf_counter() - started - paused) * 1000
            initialized = (at_initialize - started) * 1000
    return initialized, tools, len(listed.tools), None if cpu is None else cpu / 1e6


async def time_calls(ours: StdioServerParameters, echo: StdioServerParameters, fts: StdioServerParameters,
                     calls: int, items: int, queries: list[str]) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall ms per call, and server CPU ms per call (empty lists when Linux does not say), by tool (``fts``: the
    :data:`FTS_SERVER` floor's ``recall``)."""
    out: dict[str, list[float]] = {name: [] for name in SERVER_OF}
    cpu: dict[str, list[float]] = {name: [] for name in SERVER_OF}
    async with stdio_client(ours) as (r1, w1), ClientSession(r1, w1) as mine, \
            stdio_client(echo) as (r2, w2), ClientSession(r2, w2) as floor, \
            stdio_client(fts) as (r3, w3), ClientSession(r3, w3) as plain:
        await mine.initialize()
        await floor.initialize()
        await plain.initialize()
        pids = {"ours": _server_pid(OURS_MARKER), "echo": _server_pid(ECHO_MARKER), "fts": _server_pid(FTS_MARKER)}
        size = 0  # characters of the wake's text
        for _ in range(5):  # warm-up: the host, the store's connection, the side index
            size = len((await mine.call_tool("mnemon_wake", {})).content[0].text)
            await mine.call_tool("mnemon_recall", {"query": queries[0]})
            await floor.call_tool("echo", {"text": "warm"})
            await plain.call_tool("recall", {"query": queries[0]})
        for n in range(calls):
            query = queries[n % len(queries)]
            for name, session, tool, arguments in (("echo", floor, "echo", {"text": f"echo {n}"}),
                                                   ("mnemon_wake", mine, "mnemon_wake", {}),
                                                   ("echo", floor, "echo", {"text": f"echo {n}"}),
                                                   ("mnemon_recall", mine, "mnemon_recall", {"query": query}),
                                                   ("fts", plain, "recall", {"query": query}),
                                                   ("echo-sized", floor, "sized", {"size": size})):
                pid = pids[SERVER_OF[name]]
                cpu_before = _cpu_ns(pid)
                started = time.perf_counter()
                result = await session.call_tool(tool, arguments)
                out[name].append((time.perf_counter() - started) * 1000)
                cpu_after = _cpu_ns(pid)
                if cpu_before is not None and cpu_after is not None:
                    cpu[name].append((cpu_after - cpu_before) / 1e6)
                if result.is_error:
                    raise SystemExit(f"{name} failed: {result.content}")
                if name == "mnemon_wake" and n == 0:
                    text = result.content[0].text
                    assert "fact 29:" in text and f"{items} items" in text, text[:300]
    return out, cpu


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-int(q * len(ordered) * 100) // 100) - 1))]


def summary(values: list[float]) -> dict[str, float]:
    return {"medianMs": round(statistics.median(values), 2), "p95Ms": round(nearest_rank(values, 0.95), 2),
            "n": len(values)}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    repo = Path(args.repo).resolve()
    base = Path(tempfile.mkdtemp(prefix="bench-mcp-start-"))
    try:
        ws = base / "repo"
        env = child_env(base, repo, False)
        subprocess.run([sys.executable, "-c", FIXTURE, str(ws), "30", "0"], check=True, env=env, cwd=str(base))
        made = subprocess.run([sys.executable, "-c", SPACE, str(ws), str(args.items), str(HERE), str(base / "floor.db")],
                              check=True, env=env, cwd=str(base), capture_output=True, text=True)
        queries = json.loads(made.stdout.strip().splitlines()[-1])
        ours = params(["-m", "mnemon_ls", "mcp", "--workspace", str(ws)], env, ws)
        minimal = params(["-c", MINIMAL_SERVER], env, ws)
        echo = params(["-c", ECHO_SERVER], env, ws)
        fts = params(["-c", FTS_SERVER, str(base / "floor.db")], env, ws)
        markers = {"ours": OURS_MARKER, "minimal": MINIMAL_MARKER}
        for server, marker in ((ours, OURS_MARKER), (minimal, MINIMAL_MARKER), (echo, ECHO_MARKER),
                               (ours, OURS_MARKER), (minimal, MINIMAL_MARKER)):  # warm-up: fills the bytecode cache
            await time_start(server, marker)
        load_before = os.getloadavg()[0]
        starts: dict[str, list[float]] = {"ours": [], "minimal": [], "oursTools": [], "minimalTools": [],
                                          "oursCpu": [], "minimalCpu": []}
        tools = 0
        for n in range(args.starts):
            pair = (("ours", ours), ("minimal", minimal)) if n % 2 == 0 else (("minimal", minimal), ("ours", ours))
            for name, server in pair:
                initialized, listed, count, cpu_ms = await time_start(server, markers[name])
                starts[name].append(initialized)
                if cpu_ms is not None:
                    starts[name + "Cpu"].append(cpu_ms)
                starts[name + "Tools"].append(listed)
                if name == "ours":
                    tools = count
        calls, calls_cpu = await time_calls(ours, echo, fts, args.calls, args.items, queries)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    pairs = [a / b for a, b in zip(starts["ours"], starts["minimal"])]
    tool_pairs = [a / b for a, b in zip(starts["oursTools"], starts["minimalTools"])]
    result: dict[str, Any] = {
        "start": {"ours": summary(starts["ours"]), "minimal": summary(starts["minimal"]),
                  "ratioOfMedians": round(statistics.median(starts["ours"]) / statistics.median(starts["minimal"]), 3),
                  "medianOfRatios": round(statistics.median(pairs), 3)},
        "startToToolsList": {"ours": summary(starts["oursTools"]), "minimal": summary(starts["minimalTools"]),
                             "ratioOfMedians": round(statistics.median(starts["oursTools"])
                                                     / statistics.median(starts["minimalTools"]), 3),
                             "medianOfRatios": round(statistics.median(tool_pairs), 3), "toolsListed": tools},
        "calls": {name: summary(values) for name, values in calls.items()},
    }
    for name in ("mnemon_wake", "mnemon_recall", "fts"):
        result["calls"][name]["ratioToEcho"] = round(statistics.median(calls[name]) / statistics.median(calls["echo"]), 3)
    result["calls"]["mnemon_recall"]["ratioToFts"] = round(statistics.median(calls["mnemon_recall"])
                                                           / statistics.median(calls["fts"]), 3)
    result["calls"]["mnemon_wake"]["ratioToSized"] = round(statistics.median(calls["mnemon_wake"])
                                                           / statistics.median(calls["echo-sized"]), 3)
    if starts["oursCpu"] and len(starts["oursCpu"]) == len(starts["minimalCpu"]):
        cpu_pairs = [a / b for a, b in zip(starts["oursCpu"], starts["minimalCpu"])]
        result["startCpu"] = {"ours": summary(starts["oursCpu"]), "minimal": summary(starts["minimalCpu"]),
                              "ratioOfMedians": round(statistics.median(starts["oursCpu"])
                                                      / statistics.median(starts["minimalCpu"]), 3),
                              "medianOfRatios": round(statistics.median(cpu_pairs), 3)}
    if all(calls_cpu.values()):
        result["callsCpu"] = {name: summary(values) for name, values in calls_cpu.items()}
        for name in ("mnemon_wake", "mnemon_recall", "fts"):
            result["callsCpu"][name]["ratioToEcho"] = round(statistics.median(calls_cpu[name])
                                                            / statistics.median(calls_cpu["echo"]), 3)
        result["callsCpu"]["mnemon_recall"]["ratioToFts"] = round(statistics.median(calls_cpu["mnemon_recall"])
                                                                  / statistics.median(calls_cpu["fts"]), 3)
        result["callsCpu"]["mnemon_wake"]["ratioToSized"] = round(statistics.median(calls_cpu["mnemon_wake"])
                                                                  / statistics.median(calls_cpu["echo-sized"]), 3)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "mnemon_ls"], capture_output=True,
                           text=True).stdout.strip()
    import mcp

    return {"label": args.label, "commit": commit + ("+changes" if dirty else ""), "at": time.strftime("%Y-%m-%d %H:%M"),
            "python": platform.python_version(), "mcp": getattr(mcp, "__version__", None) or _version("mcp"),
            "cores": os.cpu_count(), "loadBefore": round(load_before, 2), "loadAfter": round(load_after, 2),
            "starts": args.starts, "callsPerTool": args.calls, "items": args.items, "results": result}


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def _marked(ratio: float, aim: float | None) -> str:
    """``ratio`` as ``1.234x``, bold when it is within ``aim``."""
    return f"**{ratio:.3f}x**" if aim is not None and ratio <= aim else f"{ratio:.3f}x"


def markdown(runs: dict[str, Any]) -> str:
    lines = ["# MCP server: spawn -> initialize and tool calls against minimal servers of the same SDK", "",
             "`python bench/mcp_start.py --label LABEL` (module doc). Wall ms, median / p95 (server CPU ms where a row "
             "says so); ratios in the same run. "
             f"Aims: start <= {AIMS['start']}x the minimal server, `mnemon_wake` <= {AIMS['mnemon_wake']}x and "
             f"`mnemon_recall` (10,000 items) <= {AIMS['mnemon_recall']}x the echo tool.", ""]
    for label, run in runs.items():
        r = run["results"]
        lines += [f"## {label} ({run['commit']}, {run['at']}, mcp {run['mcp']}, load {run['loadBefore']} -> "
                  f"{run['loadAfter']})", "",
                  "| measurement | ours | floor | ratio (medians) | median of ratios |", "|---|---:|---:|---:|---:|"]
        for key, title in (("start", "spawn -> initialize"), ("startToToolsList", "spawn -> first tools/list")):
            row = r[key]
            ratio = _marked(row["ratioOfMedians"], AIMS["start"] if key == "start" else None)
            lines.append(f"| {title} (n={row['ours']['n']}) | {row['ours']['medianMs']:.1f} / {row['ours']['p95Ms']:.1f} | "
                         f"{row['minimal']['medianMs']:.1f} / {row['minimal']['p95Ms']:.1f} | "
                         f"{ratio} | {row['medianOfRatios']:.3f}x |")
        if "startCpu" in r:
            row = r["startCpu"]
            lines.append(f"| server CPU, spawn -> initialize (n={row['ours']['n']}) | {row['ours']['medianMs']:.1f} / "
                         f"{row['ours']['p95Ms']:.1f} | {row['minimal']['medianMs']:.1f} / {row['minimal']['p95Ms']:.1f} | "
                         f"{_marked(row['ratioOfMedians'], AIMS['start'])} | {row['medianOfRatios']:.3f}x |")
        for key, what in (("calls", "tools/call"), ("callsCpu", "server CPU, tools/call")):
            if key not in r:
                continue
            echo = r[key]["echo"]
            for name in ("mnemon_wake", "mnemon_recall"):
                row = r[key][name]
                lines.append(f"| {what} {name} vs echo (n={row['n']}) | {row['medianMs']:.2f} / {row['p95Ms']:.2f} | "
                             f"{echo['medianMs']:.2f} / {echo['p95Ms']:.2f} | {_marked(row['ratioToEcho'], AIMS[name])} | |")
            if "echo-sized" in r[key]:
                row, sized = r[key]["mnemon_wake"], r[key]["echo-sized"]
                lines.append(f"| {what} mnemon_wake vs an echo of the wake's size (n={row['n']}) | {row['medianMs']:.2f} / "
                             f"{row['p95Ms']:.2f} | {sized['medianMs']:.2f} / {sized['p95Ms']:.2f} | "
                             f"{row['ratioToSized']:.3f}x | |")
            if "fts" in r[key]:
                row, fts = r[key]["mnemon_recall"], r[key]["fts"]
                lines.append(f"| {what} FTS5 floor vs echo (n={fts['n']}) | {fts['medianMs']:.2f} / {fts['p95Ms']:.2f} | "
                             f"{echo['medianMs']:.2f} / {echo['p95Ms']:.2f} | {fts['ratioToEcho']:.3f}x | |")
                lines.append(f"| {what} mnemon_recall vs the FTS5 floor (n={row['n']}) | {row['medianMs']:.2f} / "
                             f"{row['p95Ms']:.2f} | {fts['medianMs']:.2f} / {fts['p95Ms']:.2f} | {row['ratioToFts']:.3f}x | |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--label", default="after")
    parser.add_argument("--repo", default=str(HERE.parent), help="the checkout to measure (default: this one)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="directory of mcp_start.json/.md")
    args = parser.parse_args()
    run = asyncio.run(measure(args))
    path = args.out / "mcp_start.json"
    runs = json.loads(path.read_text("utf-8")) if path.exists() else {}
    runs[args.label] = run
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n", "utf-8")
    (args.out / "mcp_start.md").write_text(markdown(runs) + "\n", "utf-8")
    print(markdown({args.label: run}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
