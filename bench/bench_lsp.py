"""Benchmark of the language server over stdio, as an editor sees it.

Run::

    python bench/bench_lsp.py           # full run, writes bench/results/lsp.md
    python bench/bench_lsp.py --quick   # few samples, prints only

What is measured (``time.perf_counter_ns`` in this process, warm-up samples excluded; median and
nearest-rank p95), all against real ``python -m mnemon_ls serve`` subprocesses driven by a minimal
JSON-RPC client written here (Content-Length framing over pipes, no pygls on the client side, so the
numbers are the server's plus the pipe's):

1. start: from spawning the process to the ``initialize`` result (a fresh process per sample), for
   ``python -m mnemon_ls serve`` and, interleaved in the same run (alternating which goes first), for
   an empty pygls 2 server started the same way (:data:`EMPTY_SERVER`: a ``LanguageServer`` with no
   features, ``start_io()``); the ratio of the medians is the start-up cost of mnemon-ls itself
   (aim <= 1.15x). ``--start-only`` runs just this.
2. ``mnemon/wake`` round trip on a store of 60 entries (MEMORY.md ~5 KB, USER.md ~1 KB).
3. ``mnemon/runtime/mutate`` round trips on that store: an add, then the remove that undoes it (both
   timed, reported apart and together), so every sample sees the same store.
4. external edit -> ``mnemon/projectionRepaired``: from just before MEMORY.md is rewritten in place to
   the notification's arrival (the server's watcher, repair, hand-edit preservation and notify).
5. checkout -> ``mnemon/branchChanged``: from just before ``pygit2.Repository.set_head`` switches HEAD
   between two branches to the notification's arrival.

The client advertises no capabilities (like Neovim 0.7 it has no ``workspace/configuration``), so the
server is ready once a ``mnemon/status`` round trip after ``initialized`` has come back. Everything
runs in a throw-away temp directory; storage scope ``workspace``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.gitrepo import create_branch, make_repo  # noqa: E402

SERVER = [sys.executable, "-m", "mnemon_ls", "serve"]
#: The floor: an empty pygls 2 language server, the same interpreter, started the same way (stdio).
EMPTY_SERVER = [sys.executable, "-c",
                "from pygls.lsp.server import LanguageServer; LanguageServer('empty', '0').start_io()"]
#: ``--starts N`` overrides the number of start samples per server.
STARTS = 0
#: Aim for the start ratio (ours / empty pygls 2 server, medians).
START_RATIO_AIM = 1.15
RESULTS = REPO_ROOT / "bench" / "results" / "lsp.md"
AIMS_MS = {"start": 400.0, "wake": 5.0, "mutate": 8.0, "notification": 300.0}


class RawClient:
    """A minimal LSP client over a subprocess's stdio."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._waiters: dict[str, list[asyncio.Future[tuple[int, Any]]]] = {}
        self.notifications: list[tuple[int, str, Any]] = []
        self._reader: asyncio.Task[None] | None = None

    async def spawn(self, env: dict[str, str], cwd: Path, command: list[str] = SERVER) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd)
        self._reader = asyncio.create_task(self._read())

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any = None, timeout: float = 30.0) -> Any:
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def expect(self, method: str) -> asyncio.Future[tuple[int, Any]]:
        """Arm a wait for the next ``method`` notification (before the trigger); resolves to (ns, params)."""
        future: asyncio.Future[tuple[int, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(method, []).append(future)
        return future

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stream = self.proc.stdout
        while True:
            length = 0
            while True:
                line = await stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            message = json.loads(await stream.readexactly(length))
            now = time.perf_counter_ns()
            if "id" in message and "method" not in message:
                future = self._pending.pop(message["id"], None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError(str(message["error"])))
                    else:
                        future.set_result(message.get("result"))
            elif "id" in message:  # a server -> client request: answer it plainly
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [None] * len(message["params"]["items"])
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            else:
                self.notifications.append((now, message["method"], message.get("params")))
                for future in self._waiters.pop(message["method"], []):
                    if not future.done():
                        future.set_result((now, message.get("params")))

    async def initialize(self, folder: Path) -> Any:
        return await self.request("initialize", {
            "processId": os.getpid(), "rootUri": folder.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
            "initializationOptions": {"mnemon": {"storageScope": "workspace"}},
        })

    async def close(self) -> None:
        if self.proc is None:
            return
        try:
            await self.request("shutdown", None, timeout=5)
            self.notify("exit")
            await asyncio.wait_for(self.proc.wait(), 5)
        except Exception:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()


def summary(samples_ns: list[int]) -> dict[str, float]:
    ms = sorted(s / 1e6 for s in samples_ns)
    p95 = ms[max(0, math.ceil(0.95 * len(ms)) - 1)]
    return {"n": len(ms), "median": statistics.median(ms), "p95": p95, "min": ms[0], "max": ms[-1]}


def environment(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MNEMON_DATA_DIR"] = str(base / "data")
    env["HOME"] = str(base / "home")
    (base / "home").mkdir(exist_ok=True)
    return env


async def bench_start(base: Path, runs: int, warmup: int) -> dict[str, list[int]]:
    """Spawn -> ``initialize`` result for ours and the empty pygls 2 server, interleaved (order alternates)."""
    folder = base / "start-repo"
    make_repo(folder)
    samples: dict[str, list[int]] = {"start": [], "empty": []}
    for i in range(runs + warmup):
        order = [("start", SERVER), ("empty", EMPTY_SERVER)]
        if i % 2:
            order.reverse()
        for key, command in order:
            client = RawClient()
            t0 = time.perf_counter_ns()
            await client.spawn(environment(base), base, command)
            await client.initialize(folder)
            elapsed = time.perf_counter_ns() - t0
            client.notify("initialized", {})
            await client.close()
            if i >= warmup:
                samples[key].append(elapsed)
    return samples


def bench_imports(runs: int) -> dict[str, list[int]]:
    """Wall time of fresh interpreters, to split the start: interpreter, lsprotocol/pygls, the server module."""
    import subprocess

    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import lsprotocol.types": [sys.executable, "-c", "import lsprotocol.types"],
        "import pygls.lsp.server": [sys.executable, "-c", "import pygls.lsp.server"],
        "import mnemon_ls.lsp.server": [sys.executable, "-c", "import mnemon_ls.lsp.server"],
    }
    samples: dict[str, list[int]] = {name: [] for name in commands}
    for i in range(runs + 1):
        for name, command in commands.items():
            t0 = time.perf_counter_ns()
            subprocess.run(command, check=True, cwd=REPO_ROOT)
            if i:
                samples[name].append(time.perf_counter_ns() - t0)
    return samples


async def ready_client(base: Path, folder: Path) -> RawClient:
    client = RawClient()
    await client.spawn(environment(base), base)
    await client.initialize(folder)
    client.notify("initialized", {})
    await client.request("mnemon/status", {})  # barrier: watchers armed (see the module doc)
    await client.request("mnemon/status", {})
    return client


async def bench_requests(base: Path, runs: int, warmup: int) -> dict[str, list[int]]:
    folder = base / "request-repo"
    make_repo(folder)
    client = await ready_client(base, folder)
    try:
        for i in range(20):
            await client.request("mnemon/runtime/mutate", {"action": "add", "target": "user",
                                                           "content": f"User preference {i:02d}: short answers, code first"})
        for i in range(40):
            await client.request("mnemon/runtime/mutate", {
                "action": "add", "content": f"Project fact {i:02d}: the build uses ruff, mypy and pytest; keep diffs small",
                **({"branches": ["main"]} if i % 5 == 0 else {})})
        wake, add, remove = [], [], []
        for i in range(runs + warmup):
            t0 = time.perf_counter_ns()
            await client.request("mnemon/wake", {})
            t1 = time.perf_counter_ns()
            await client.request("mnemon/runtime/mutate", {"action": "add", "content": f"bench entry {i}"})
            t2 = time.perf_counter_ns()
            await client.request("mnemon/runtime/mutate", {"action": "remove", "oldText": f"bench entry {i}"})
            t3 = time.perf_counter_ns()
            if i >= warmup:
                wake.append(t1 - t0)
                add.append(t2 - t1)
                remove.append(t3 - t2)
        size = len((folder / ".mnemon" / "runtime" / "MEMORY.md").read_bytes())
        print(f"  store: 60 entries, MEMORY.md {size} bytes", file=sys.stderr)
        return {"wake": wake, "add": add, "remove": remove}
    finally:
        await client.close()


async def bench_repair(base: Path, runs: int, warmup: int) -> list[int]:
    folder = base / "repair-repo"
    make_repo(folder)
    client = await ready_client(base, folder)
    try:
        for i in range(10):
            await client.request("mnemon/runtime/mutate", {"action": "add", "content": f"fact {i}"})
        memory = folder / ".mnemon" / "runtime" / "MEMORY.md"
        samples = []
        for i in range(runs + warmup):
            armed = client.expect("mnemon/projectionRepaired")
            shown = client.expect("window/showMessage")
            t0 = time.perf_counter_ns()
            memory.write_bytes(memory.read_bytes() + f"hand edit {i}\n".encode())
            arrived, params = await asyncio.wait_for(armed, 10)
            await asyncio.wait_for(shown, 10)
            assert params["preservedAs"], params
            if i >= warmup:
                samples.append(arrived - t0)
        return samples
    finally:
        await client.close()


async def bench_branch(base: Path, runs: int, warmup: int) -> list[int]:
    folder = base / "branch-repo"
    repo = make_repo(folder)
    create_branch(repo, "topic")
    client = await ready_client(base, folder)
    try:
        samples = []
        names = ["topic", "main"]
        for i in range(runs + warmup):
            target = names[i % 2]
            armed = client.expect("mnemon/branchChanged")
            t0 = time.perf_counter_ns()
            repo.set_head(f"refs/heads/{target}")
            arrived, params = await asyncio.wait_for(armed, 10)
            assert params["branch"] == target, params
            if i >= warmup:
                samples.append(arrived - t0)
        return samples
    finally:
        await client.close()


def verdict(value: float, aim: float) -> str:
    return "ok" if value < aim else "miss"


def render(results: dict[str, dict[str, float]], meta: dict[str, str], imports: dict[str, dict[str, float]]) -> str:
    rows = [
        ("server start -> `initialize` result", "start", AIMS_MS["start"]),
        ("  empty pygls 2 server, same way, interleaved", "empty", AIMS_MS["start"]),
        ("`mnemon/wake` round trip", "wake", AIMS_MS["wake"]),
        ("`mnemon/runtime/mutate` round trip (add and remove)", "mutate", AIMS_MS["mutate"]),
        ("  add only", "add", AIMS_MS["mutate"]),
        ("  remove only", "remove", AIMS_MS["mutate"]),
        ("external edit of MEMORY.md -> `mnemon/projectionRepaired`", "repair", AIMS_MS["notification"]),
        ("`set_head` checkout -> `mnemon/branchChanged`", "branch", AIMS_MS["notification"]),
    ]
    lines = [
        f"# mnemon-ls over stdio ({meta['date']})",
        "",
        "`python bench/bench_lsp.py` (see its docstring for what each row measures). Times in ms, median and",
        "nearest-rank p95 over n samples after warm-up; the verdict compares the p95 with the aim.",
        "",
        f"Machine: {meta['machine']}; Python {meta['python']}; load average at start {meta['load']}"
        f" (other jobs were running on the same 2 cores).",
        "",
        "| what | n | median | p95 | min | max | aim | verdict (p95) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for title, key, aim in rows:
        r = results[key]
        lines.append(f"| {title} | {r['n']} | {r['median']:.2f} | {r['p95']:.2f} | {r['min']:.2f} | "
                     f"{r['max']:.2f} | < {aim:g} | {verdict(r['p95'], aim)} |")
    ratio = results["start"]["median"] / results["empty"]["median"]
    lines += ["", f"Start ratio, mnemon-ls / empty pygls 2 server (medians): **{ratio:.2f}x** (aim <= "
                  f"{START_RATIO_AIM:.2f}x: {'ok' if ratio <= START_RATIO_AIM else 'miss'}).",
              "", meta.get("notes", ""), "",
              "Where the start goes: wall time of a fresh interpreter doing only this (n/median/p95 as above). These",
              "include interpreter teardown, which is not part of the start (freeing lsprotocol's thousands of",
              "classes takes tens of ms), so the last row can exceed the start itself.", "",
              "| command | n | median | p95 |", "|---|---:|---:|---:|"]
    for name, r in imports.items():
        lines.append(f"| `{name}` | {r['n']} | {r['median']:.1f} | {r['p95']:.1f} |")
    lines.append("")
    return "\n".join(lines)


async def main_async(quick: bool, start_only: bool = False) -> dict[str, dict[str, float]]:
    base = Path(tempfile.mkdtemp(prefix="mnemon-bench-lsp-"))
    try:
        starts, warm = (5, 1) if quick else (40, 3)
        starts = STARTS or starts
        runs = 30 if quick else 400
        notes = 5 if quick else 60
        print("start ...", file=sys.stderr)
        start = await bench_start(base, starts, warm)
        if start_only:
            return {key: summary(value) for key, value in start.items()}
        print("requests ...", file=sys.stderr)
        requests = await bench_requests(base, runs, 20)
        print("projection repair ...", file=sys.stderr)
        repair = await bench_repair(base, notes, 3)
        print("branch change ...", file=sys.stderr)
        branch = await bench_branch(base, notes, 3)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        "start": summary(start["start"]), "empty": summary(start["empty"]), "wake": summary(requests["wake"]),
        "mutate": summary(requests["add"] + requests["remove"]),
        "add": summary(requests["add"]), "remove": summary(requests["remove"]),
        "repair": summary(repair), "branch": summary(branch),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few samples; print only")
    parser.add_argument("--start-only", action="store_true", help="only the start comparison; print only")
    parser.add_argument("--starts", type=int, default=0, help="start samples per server (default 40, quick 5)")
    args = parser.parse_args()
    global STARTS
    STARTS = args.starts
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    results = asyncio.run(main_async(args.quick, args.start_only))
    if args.start_only:
        for key, r in results.items():
            print(f"{key}: n={r['n']} median={r['median']:.1f} ms p95={r['p95']:.1f} ms")
        print(f"ratio (medians): {results['start']['median'] / results['empty']['median']:.2f}x")
        return 0
    imports = {name: summary(v) for name, v in bench_imports(3 if args.quick else 15).items()}
    meta = {
        "date": _dt.date.today().isoformat(),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load": load,
        "notes": ("Notification latency includes the watcher's batching (watchfiles step 20 ms, debounce "
                  "up to 80 ms) before the server even looks at the change."),
    }
    text = render(results, meta, imports)
    print(text)
    if not args.quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text)
        print(f"written to {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
