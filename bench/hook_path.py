"""The hook path (issue 27 item 1): what ``mnemon-ls hook prompt``, ``hook session-start`` and ``wake`` cost a
cold process, as a ratio to ``python -c pass`` measured in the same run.

Usage::

    python bench/hook_path.py [--rounds 20] [--label after] [--repo DIR] [--stress N] [--documents N] [--out DIR]

Set-up (not timed): a git repository (branch ``main``, one commit) whose storage root (the default
``workspaces`` scope under a temp ``MNEMON_DATA_DIR``) holds 30 Runtime entries (6 in USER.md, 24 in
MEMORY.md), one active native Memory Space of 10,000 items and, with ``--documents N``, N project Documents (a
title, a description and a paragraph each; the wake then shows the Documents block too); it is built by a child
process running the code under measurement (``--repo``, default this checkout; a ``git worktree`` of the base
commit measures the code before a change). The hook commands read ``{"cwd": <repository>}`` on stdin, as Claude
Code sends.

Timed: every command of :data:`COMMANDS` once per round, in an order that rotates each round (interleaved),
each a fresh ``python`` process from the repository as its working directory. CPU time is the child's user +
system time (``resource.getrusage(RUSAGE_CHILDREN)`` before and after ``subprocess.run``), which the other
jobs on a shared machine disturb far less than wall time; wall time is recorded too. Two interpreters:

- ``venv``: ``python`` as installed here (site on; this checkout's editable install adds a finder to every
  start, ``python -c pass`` included);
- ``bare``: ``python -S`` with the checkout and site-packages on ``PYTHONPATH``, what a start costs without
  that finder (the floor a wheel install gets; the ratios are stricter here).

Both use bytecode cached in a temp ``PYTHONPYCACHEPREFIX`` (``PYTHONDONTWRITEBYTECODE`` is dropped; the
warm-up round fills it), so no run compiles ``mnemon_ls``. Each command's output is checked (exit 0; the
session-start hook and ``wake`` show the 30 entries and the space's item count, or say what was left out).

Ratios: median CPU of a command / median CPU of ``python -c pass`` of the same interpreter, and the
median of the per-round ratios. The 1-minute load average is recorded before and after. ``--stress N``
runs ``stress-ng --cpu N`` (started and stopped by this script) during the timed rounds, for the figure at
load N; the hooks' wall time is then compared with the 10 s timeout ``mnemon-ls setup`` gives them.

Results: merged by ``--label`` into ``<out>/hook_path.json``; ``<out>/hook_path.md`` is rewritten from every
run there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: name -> (argv after the interpreter, reads the hook JSON on stdin)
COMMANDS: dict[str, tuple[list[str], bool]] = {
    "python -c pass": (["-c", "pass"], False),
    "hook prompt": (["-m", "mnemon_ls", "hook", "prompt"], True),
    "hook session-start": (["-m", "mnemon_ls", "hook", "session-start"], True),
    "wake": (["-m", "mnemon_ls", "wake"], False),
}
#: Ratio aims of issue 27 (CPU, to ``python -c pass``).
AIMS = {"hook prompt": 3.0, "hook session-start": 5.0, "wake": 5.0}
#: Seconds ``mnemon-ls setup`` gives a hook (mnemon_ls.clients.HOOK_TIMEOUT_SECONDS).
HOOK_TIMEOUT_SECONDS = 10

FIXTURE = r'''
import os, random, subprocess, sys
from pathlib import Path
ws, entries, items = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
documents = int(sys.argv[4]) if len(sys.argv) > 4 else 0
subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
(ws / "README.md").write_text("bench\n")
subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
subprocess.run(["git", "-C", str(ws), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                "commit", "-qm", "init"], check=True)
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.settings import load_settings
from mnemon_ls.spaces.model import rfc3339, utc_now
from mnemon_ls.spaces.providers.base import ExportItem
host = WorkspaceHost(ws, load_settings({}))
for i in range(entries):
    target = "user" if i < entries // 5 else "memory"
    host.mutate_runtime(validate_request("add", target, f"fact {i}: service {i} keeps its cache in .cache/svc-{i}; "
                                                        "clear it after upgrades"))
if items:  # 0: no space (bench/mcp_start.py makes its own)
    record = host.spaces.create_space("Project", "Build and service facts", active=True).record
    provider = host.spaces.provider(record)
    rng = random.Random(7)
    words = ["cache", "deploy", "service", "token", "queue", "worker", "index", "parser", "retry", "build"]
    now, batch = rfc3339(utc_now()), []
    for i in range(items):
        batch.append(ExportItem(f"gen-{i}", " ".join(rng.choice(words) for _ in range(12)) + f" item {i}", "fact",
                                rng.randint(1, 5), [], [], "user", now))
        if len(batch) == 1000 or i == items - 1:
            provider.import_items(batch, batch=1000)
            batch = []
for i in range(documents):
    host.documents.create(f"Design {i}: service {i} cache layout", f"# Service {i}\n\nThe cache of service {i} "
                          f"lives in .cache/svc-{i}; it is cleared after upgrades and rebuilt on the first request.\n",
                          description=f"where service {i} keeps its cache and when it is cleared")
host.close()
'''


def child_env(base: Path, repo: Path, bare: bool) -> dict[str, str]:
    """The environment of every timed child: no ``MNEMON_*``/``GIT_*`` of the caller, the temp data dir,
    bytecode cached under ``base``, the measured checkout first on the path."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MNEMON_", "GIT_", "CLAUDE_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["MNEMON_DATA_DIR"] = str(base / "data")
    env["MNEMON_SEMANTIC"] = "off"  # the semantic extra, when installed, is not what this measures
    env["PYTHONPYCACHEPREFIX"] = str(base / ("pycache-bare" if bare else "pycache-venv"))
    paths = [str(repo)] + ([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]] if bare else [])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def run_once(argv: list[str], stdin: bytes | None, env: dict[str, str], cwd: Path) -> tuple[float, float, bytes, int]:
    """One child: ``(cpu ms, wall ms, stdout, exit code)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, input=stdin if stdin is not None else b"", stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, cwd=str(cwd))
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
    return cpu, wall, proc.stdout, proc.returncode


def check_output(name: str, out: bytes, entries: int, items: int, documents: int = 0) -> str:
    """``complete`` or ``partial`` (the hook said what it left out); raises when the output is wrong."""
    text = out.decode("utf-8")
    if name == "python -c pass":
        return "complete"
    if name == "hook prompt":
        if not text.startswith("[mnemon]"):
            raise SystemExit(f"hook prompt printed {text[:200]!r}")
        return "complete"
    if "left out" in text and name == "hook session-start":
        return "partial"
    missing = [f"fact {i}:" for i in range(entries) if f"fact {i}:" not in text]
    if missing or f"{items} items" not in text:
        raise SystemExit(f"{name} output lacks {missing[:3]} or the item count: {text[:300]!r}")
    if documents and f"Active: {documents} document" not in text:
        raise SystemExit(f"{name} output lacks the Documents block of {documents} documents: {text[:300]!r}")
    return "complete"


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-int(q * len(ordered) * 100) // 100) - 1))]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    repo = Path(args.repo).resolve()
    base = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    stress = None
    try:
        ws = base / "repo"
        built = time.perf_counter()
        subprocess.run([sys.executable, "-c", FIXTURE, str(ws), str(args.entries), str(args.items),
                        str(args.documents)], check=True,
                       env=child_env(base, repo, False), cwd=str(base))
        build_seconds = time.perf_counter() - built
        stdin = json.dumps({"cwd": str(ws), "hook_event_name": "SessionStart", "session_id": "bench"}).encode()
        modes = {"venv": [sys.executable], "bare": [sys.executable, "-S"]}
        envs = {mode: child_env(base, repo, mode == "bare") for mode in modes}
        samples: dict[str, dict[str, dict[str, list]]] = {
            mode: {name: {"cpu": [], "wall": [], "outcome": []} for name in COMMANDS} for mode in modes}
        for mode, interpreter in modes.items():  # warm-up: fills the bytecode cache, checks every output
            for name, (argv, reads) in COMMANDS.items():
                for _ in range(2):
                    _, _, out, _ = run_once(interpreter + argv, stdin if reads else None, envs[mode], ws)
                check_output(name, out, args.entries, args.items, args.documents)
        if args.stress:
            stress = subprocess.Popen(["stress-ng", "--cpu", str(args.stress), "--quiet"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 150  # the 1-minute load average climbs for a minute or two
            while os.getloadavg()[0] < 0.8 * args.stress and time.monotonic() < deadline:
                time.sleep(1)
        load_before = os.getloadavg()[0]
        names = list(COMMANDS)
        for round_ in range(args.rounds):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            for mode, interpreter in modes.items():
                for name in order:
                    argv, reads = COMMANDS[name]
                    cpu, wall, out, _ = run_once(interpreter + argv, stdin if reads else None, envs[mode], ws)
                    cell = samples[mode][name]
                    cell["cpu"].append(cpu)
                    cell["wall"].append(wall)
                    cell["outcome"].append(check_output(name, out, args.entries, args.items, args.documents))
        load_after = os.getloadavg()[0]
    finally:
        if stress is not None:
            stress.terminate()
            stress.wait()
        shutil.rmtree(base, ignore_errors=True)
    results: dict[str, Any] = {}
    for mode, per in samples.items():
        floor = per["python -c pass"]["cpu"]
        rows = {}
        for name, cell in per.items():
            ratios = [c / f for c, f in zip(cell["cpu"], floor)]
            rows[name] = {
                "cpuMedianMs": round(statistics.median(cell["cpu"]), 2),
                "cpuP95Ms": round(nearest_rank(cell["cpu"], 0.95), 2),
                "wallMedianMs": round(statistics.median(cell["wall"]), 2),
                "wallMaxMs": round(max(cell["wall"]), 2),
                "ratioOfMedians": round(statistics.median(cell["cpu"]) / statistics.median(floor), 2),
                "medianOfRatios": round(statistics.median(ratios), 2),
                "partial": cell["outcome"].count("partial"),
                "n": len(cell["cpu"]),
            }
        results[mode] = rows
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "mnemon_ls"],
                           capture_output=True, text=True).stdout.strip()
    return {"label": args.label, "commit": commit + ("+changes" if dirty else ""),
            "at": time.strftime("%Y-%m-%d %H:%M"), "python": platform.python_version(), "cores": os.cpu_count(),
            "stress": args.stress, "loadBefore": round(load_before, 2), "loadAfter": round(load_after, 2),
            "rounds": args.rounds, "entries": args.entries, "items": args.items, "documents": args.documents,
            "fixtureSeconds": round(build_seconds, 1), "results": results}


def markdown(runs: dict[str, Any]) -> str:
    lines = ["# Hook path: cold `hook prompt`, `hook session-start` and `wake` against `python -c pass`", "",
             "`python bench/hook_path.py --label LABEL` (module doc): a repository with 30 Runtime entries and an "
             "active space of 10,000 items; CPU time (user + system) of each cold process, interleaved rounds, "
             "bytecode cached. `venv`: `python` as installed here (editable install); `bare`: `python -S` with the "
             "paths set (no editable finder: the floor a wheel gets). Ratio: median CPU / median CPU of "
             "`python -c pass` of the same interpreter in the same run (median of per-round ratios in brackets). "
             f"Aims: hook prompt <= {AIMS['hook prompt']}x, hook session-start and wake <= {AIMS['wake']}x.", ""]
    for label, run in runs.items():
        load = f"load {run['loadBefore']} -> {run['loadAfter']}" + (f", under `stress-ng --cpu {run['stress']}`"
                                                                    if run["stress"] else "")
        documents = f", {run['documents']} Documents" if run.get("documents") else ""
        lines += [f"## {label} ({run['commit']}, {run['at']}, {run['rounds']} rounds, {load}{documents})", "",
                  "| interpreter | command | CPU median ms | CPU p95 ms | ratio | wall median ms | wall max ms | "
                  "partial answers |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        for mode, rows in run["results"].items():
            for name, row in rows.items():
                aim = AIMS.get(name)
                ratio = f"{row['ratioOfMedians']:.2f}x ({row['medianOfRatios']:.2f}x)"
                if aim is not None:
                    ratio = f"**{ratio}**" if row["ratioOfMedians"] <= aim else ratio
                lines.append(f"| {mode} | {name} | {row['cpuMedianMs']:.1f} | {row['cpuP95Ms']:.1f} | {ratio} | "
                             f"{row['wallMedianMs']:.1f} | {row['wallMaxMs']:.1f} | {row['partial']}/{row['n']} |")
        lines.append("")
        if run["stress"]:
            worst = max(run["results"][m]["hook session-start"]["wallMaxMs"] for m in run["results"])
            lines += [f"Slowest session-start hook: {worst / 1000:.2f} s of the {HOOK_TIMEOUT_SECONDS} s timeout.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--label", default="after", help="the run's name in the results (before, after, ...)")
    parser.add_argument("--repo", default=str(REPO), help="the checkout to measure (default: this one)")
    parser.add_argument("--stress", type=int, default=0, metavar="N", help="run stress-ng --cpu N meanwhile")
    parser.add_argument("--entries", type=int, default=30)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--documents", type=int, default=0, metavar="N", help="also N project Documents")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="directory of hook_path.json/.md")
    args = parser.parse_args()
    if args.stress and shutil.which("stress-ng") is None:
        parser.error("--stress needs stress-ng on PATH")
    run = measure(args)
    path = args.out / "hook_path.json"
    runs = json.loads(path.read_text("utf-8")) if path.exists() else {}
    runs[args.label] = run
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n", "utf-8")
    (args.out / "hook_path.md").write_text(markdown(runs) + "\n", "utf-8")
    print(markdown({args.label: run}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
