"""Citations in the wake at scale (issue 24 item 9): 200 cited MEMORY.md entries over a 5,000-file repository
against the same 200 entries uncited, and the check of one cited file after a save.

Usage::

    python bench/cite_wake.py [--cli-runs 15] [--host-rounds 200] [--files 5000] [--entries 200]

Set-up (not timed), in a temp directory: a git repository of ``--files`` Python files (``pkg_<k>/mod_<n>.py``, 60
lines each, one commit) and two storage roots (``storageScope: custom``, ``memoryLimitBytes`` raised to 65,536 so
that 200 entries fit: the default 10,240 holds ~150 of these), each with the same ``--entries`` MEMORY.md entries;
in one root every entry cites 3 lines of its own file (200 distinct files), in the other none does.

Timed, interleaved (one sample of each per round):

1. **the hook path**: ``mnemon-ls wake`` as the session-start hook runs it, a fresh process per sample: CPU time
   of the child (user + system, ``RUSAGE_CHILDREN``) and wall time; ratio of the medians cited / uncited (aim
   1.3x). Every file a citation names is read and hashed in each of these processes (no cache survives it);
2. **a long-lived host** (the language server, the MCP server): ``WorkspaceHost.wake()`` in this process,
   CPU time per wake (``time.process_time``); ratio of the medians (aim 1.3x). As those servers run it: with
   the cited-file watch (:class:`mnemon_ls.citations.watch.CitedWatch`, started, and waited for until it
   stands behind every cited file's directory), whose trusted views cost no system call; and, beside it, with
   no watch (``MNEMON_WATCH_CITED_FILES=0``), where a wake looks each cited file up once (one ``stat``);
3. **after a save**: one cited file changed on disk and its cache entry dropped (what the language server does
   on ``textDocument/didSave``), then the freshness of the citations into it evaluated (read, hash, locate):
   milliseconds wall, median of ``--host-rounds`` (aim 5 ms), beside a floor that reads and hashes the same file
   in the same loop.

Results: ``bench/results/cite_wake.json`` and ``.md`` (with the 1-minute load average before and after).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from mnemon_ls.citations import freshness  # noqa: E402
from mnemon_ls.citations.store import runtime_key  # noqa: E402
from mnemon_ls.citations.watch import CitedWatch  # noqa: E402
from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.runtime.ops import validate_request  # noqa: E402
from mnemon_ls.settings import load_settings  # noqa: E402

LIMIT = 65536


def make_repo(path: Path, files: int) -> list[str]:
    """``files`` Python files of 60 lines in ``path`` (a git repository, one commit); their relative paths."""
    path.mkdir(parents=True)
    names = []
    for n in range(files):
        rel = f"pkg_{n // 100:03d}/mod_{n:05d}.py"
        target = path / rel
        target.parent.mkdir(exist_ok=True)
        target.write_text("".join(f"def handler_{n}_{i}(request):\n    return {i} * request.size\n"
                                  for i in range(30)))
        names.append(rel)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "files"], check=True, env=env)
    return names


def settings(root: Path) -> dict[str, Any]:
    return {"storageScope": "custom", "dataDir": str(root), "runtimeUserScope": "storage",
            "runtimeMemory": {"memoryLimitBytes": LIMIT}}


def fill(host: WorkspaceHost, names: list[str], entries: int, cite: bool) -> None:
    """``entries`` MEMORY.md entries; with ``cite`` each cites lines 5-7 of its own file."""
    for i in range(entries):
        content = f"handler {i} of module {i:05d} multiplies the request size by its index"
        receipt = host.mutate_runtime(validate_request("add", "memory", content))
        assert receipt.changed, receipt.message
        if cite:
            cites = host.citations.resolve([{"path": names[i * (len(names) // entries)], "startLine": 5,
                                              "endLine": 7}])
            host.citations.put("runtime", {runtime_key(content): cites})


def cli_wake(workspace: Path, root: Path) -> tuple[float, float]:
    """``(CPU ms, wall ms)`` of one ``mnemon-ls wake`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mnemon_ls", "wake", "--workspace", str(workspace), "--scope",
                           "custom", "--data-dir", str(root), "--runtime-user-scope", "storage",
                           "--memory-limit-bytes", str(LIMIT)], capture_output=True, text=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"wake failed: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return cpu, wall


def cpu_ms(call: Any) -> float:
    start = time.process_time()
    call()
    return (time.process_time() - start) * 1000


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 3),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3), "n": len(ordered)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli-runs", type=int, default=15)
    parser.add_argument("--host-rounds", type=int, default=200)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--entries", type=int, default=200)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-cite-wake-") as tmp:
        base = Path(tmp)
        workspace = base / "repo"
        names = make_repo(workspace, args.files)
        roots = {"uncited": base / "root-uncited", "cited": base / "root-cited"}
        hosts = {name: WorkspaceHost(workspace, load_settings(settings(root))) for name, root in roots.items()}
        fill(hosts["uncited"], names, args.entries, False)
        fill(hosts["cited"], names, args.entries, True)
        text = hosts["cited"].wake()[0].text
        assert text.count("handler ") >= args.entries and "Citations:" not in text, text[:400]

        cli: dict[str, dict[str, list[float]]] = {n: {"cpu": [], "wall": []} for n in roots}
        for _ in range(2):  # warm-up: bytecode, page cache
            for name, root in roots.items():
                cli_wake(workspace, root)
        for run in range(args.cli_runs):
            for name in (("uncited", "cited") if run % 2 == 0 else ("cited", "uncited")):
                cpu, wall = cli_wake(workspace, roots[name])
                cli[name]["cpu"].append(cpu)
                cli[name]["wall"].append(wall)

        host_cpu: dict[str, list[float]] = {n: [] for n in roots}
        unwatched: dict[str, list[float]] = {n: [] for n in roots}
        for name in roots:
            hosts[name].wake()
        for run in range(args.host_rounds):  # no watch: one stat per cited file
            for name in (("uncited", "cited") if run % 2 == 0 else ("cited", "uncited")):
                unwatched[name].append(cpu_ms(hosts[name].wake))
        watch = CitedWatch()
        watch.start()
        hosts["cited"].wake()  # its views ask the watch for their directories
        cited_dirs = sorted({os.path.dirname(os.path.realpath(workspace / c.path))
                             for cites in hosts["cited"].citations.table("runtime").values() for c in cites})
        if not watch.wait_armed(cited_dirs, 120):
            raise SystemExit("the cited-file watch did not stand behind the cited directories in 120 s")
        for name in roots:
            hosts[name].wake()
        for run in range(args.host_rounds):
            for name in (("uncited", "cited") if run % 2 == 0 else ("cited", "uncited")):
                host_cpu[name].append(cpu_ms(hosts[name].wake))
        watch.stop()

        # after a save: one cited file changed, its cache entry dropped, its citations evaluated again
        cited_host = hosts["cited"]
        table = cited_host.citations.table("runtime")
        first = sorted(table.values(), key=lambda c: c[0].path)[0]
        target = workspace / first[0].path
        original = target.read_text()
        save_ms: list[float] = []
        floor_ms: list[float] = []
        for n in range(args.host_rounds):
            target.write_text(f"# edit {n}\n" + original)
            freshness.invalidate(target)
            start = time.perf_counter()
            views = cited_host.citations.views(first)
            save_ms.append((time.perf_counter() - start) * 1000)
            assert views[0]["freshness"] == "moved", views
            start = time.perf_counter()
            hashlib.sha256(target.read_bytes()).hexdigest()
            floor_ms.append((time.perf_counter() - start) * 1000)
        for host in hosts.values():
            host.close()
    load_after = os.getloadavg()[0]
    result = {
        "at": time.strftime("%Y-%m-%d %H:%M"), "python": platform.python_version(), "cores": os.cpu_count(),
        "loadBefore": round(load_before, 2), "loadAfter": round(load_after, 2), "files": args.files,
        "entries": args.entries,
        "commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "cliWake": {name: {k: summary(v) for k, v in d.items()} for name, d in cli.items()},
        "hostWake": {name: summary(v) for name, v in host_cpu.items()},
        "hostWakeNoWatch": {name: summary(v) for name, v in unwatched.items()},
        "watchedDirectories": len(cited_dirs),
        "afterSave": {"citations": summary(save_ms), "floorReadAndHash": summary(floor_ms)},
    }
    result["ratios"] = {
        "cliCpu": round(result["cliWake"]["cited"]["cpu"]["median"] / result["cliWake"]["uncited"]["cpu"]["median"], 3),
        "cliWall": round(result["cliWake"]["cited"]["wall"]["median"]
                         / result["cliWake"]["uncited"]["wall"]["median"], 3),
        "hostCpu": round(result["hostWake"]["cited"]["median"] / result["hostWake"]["uncited"]["median"], 3),
        "hostCpuNoWatch": round(result["hostWakeNoWatch"]["cited"]["median"]
                                / result["hostWakeNoWatch"]["uncited"]["median"], 3),
    }
    (HERE / "results" / "cite_wake.json").write_text(json.dumps(result, indent=2) + "\n")
    r = result
    lines = [
        "# Citations in the wake at scale (issue 24 item 9)", "",
        f"`python bench/cite_wake.py` (module doc) at {r['commit']}, {r['at']} UTC, Python {r['python']}, "
        f"{r['cores']} cores, load {r['loadBefore']} -> {r['loadAfter']}: {r['entries']} MEMORY.md entries over a "
        f"{r['files']}-file repository (memoryLimitBytes 65,536), each citing 3 lines of its own file, against the "
        "same entries uncited. Medians (p95) in ms.", "",
        "| measurement | uncited | cited | ratio (aim) |", "|---|---:|---:|---:|",
        f"| `mnemon-ls wake` process, CPU | {r['cliWake']['uncited']['cpu']['median']} | "
        f"{r['cliWake']['cited']['cpu']['median']} | **{r['ratios']['cliCpu']}x** (1.3x) |",
        f"| `mnemon-ls wake` process, wall | {r['cliWake']['uncited']['wall']['median']} | "
        f"{r['cliWake']['cited']['wall']['median']} | {r['ratios']['cliWall']}x (1.3x) |",
        f"| long-lived host `wake()`, CPU (cited-file watch on {r['watchedDirectories']} directories, the default) | "
        f"{r['hostWake']['uncited']['median']} | {r['hostWake']['cited']['median']}"
        f" | **{r['ratios']['hostCpu']}x** (1.3x) |",
        f"| long-lived host `wake()`, CPU, no watch (`MNEMON_WATCH_CITED_FILES=0`: one stat per cited file) | "
        f"{r['hostWakeNoWatch']['uncited']['median']} | {r['hostWakeNoWatch']['cited']['median']}"
        f" | {r['ratios']['hostCpuNoWatch']}x |", "",
        f"After a save (one cited file changed, its cache entry dropped): its citations evaluated in "
        f"**{r['afterSave']['citations']['median']} ms** (p95 {r['afterSave']['citations']['p95']}; aim 5 ms); "
        f"reading and hashing the same file alone: {r['afterSave']['floorReadAndHash']['median']} ms.", ""]
    (HERE / "results" / "cite_wake.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
