"""A durable Runtime mutation against the bare durable commit of the same bytes and against the TypeScript
reference (issue 27 item 4): aims 1.2x the bare commit (wall time), CPU 1.0x the reference, 2 fsyncs or fewer.

Usage::

    python bench/runtime_mutation.py [--label after] [--repo DIR] [--rounds 200] [--strace [K]] [--steps [N]]
                                     [--tsref DIR] [--reset]

Set-up (not timed): three identical full stores (100 MEMORY.md entries, ~10 KB of the 10240-byte limit, every
10th branch-scoped; 40 USER.md entries, ~4 KB), made through ``RuntimeStore.mutate`` of the code under
measurement (``--repo``, default this checkout; a ``git worktree`` of the base commit measures the code before
a change), in one temp directory on the same file system.

Timed, interleaved (one sample of each implementation per round, the order rotating every round), for add,
replace and remove (each timed step undone untimed, so every sample sees the same store size):

- ``mnemon-ls``: ``RuntimeStore.mutate`` of a store object kept across calls, as a server keeps it (lock,
  read under the lock, apply, capacity check, commit with its fsyncs, which are counted);
- ``mnemon-ls, fsync no-op``: the same on its own store with ``os.fsync`` a no-op in this process (the
  non-durable work, the figure earlier runs compared with the reference);
- ``bare commit``: the floor, a durable commit of the same bytes written by plain ``os`` calls: the files the
  last ``mnemon-ls`` sample of that step wrote (MEMORY.md, ``.memories.last-good.json``, ``memories.json``:
  same sizes, same content but the timestamps), each to a temp file, the ``memories.json`` temp fsynced, three
  renames, the directory fsynced; no lock, no read, no check;
- ``bare read-modify-write``: what any durable read-modify-write of this store must do at least, by plain
  ``os`` and ``json`` calls: take an exclusive ``flock`` on a lock file (open, lock, and unlock, close after),
  read ``memories.json`` (its parse kept from the commit that wrote it, as mnemon-ls keeps its own: the bytes
  read are looked up, not parsed), serialise the document (compact: the C encoder), then the bare commit above
  (of the same payload); no check, no projection rendered. Reported as ``wall vs bare
  read-modify-write`` beside the aim's ratio, for the proposal that the aim be measured against it (issue 27
  item 4);
- ``TypeScript reference``: the npm package ``dsh-mnemon-source-runtime``'s own ``RuntimeMemoryController.mutate``
  under node (``bench/ts_runtime_driver.mjs``; it never fsyncs; installed into ``--tsref`` when missing).

Wall time is ``perf_counter_ns`` (node: ``process.hrtime``) around the call; CPU time is the process's user +
system time (``time.process_time_ns``; node: ``process.cpuUsage``, every thread, microsecond resolution)
around the same call. Ratios are of medians: mnemon-ls wall / bare wall, mnemon-ls CPU / reference CPU.

``--strace`` also counts system calls per mutation with ``strace -f -c``: a child process of this script (or
the node driver) runs K add + remove pairs after the set-up, another runs none, and the difference is divided
by 2K (so set-up, imports and interpreter start cancel out).

``--steps N`` also times each step of N add + remove pairs in CPU time with ``os.fsync`` a no-op (each step a
function of the code under measurement wrapped by a timer in this process): where the non-durable work goes.

Results: appended under ``--label`` to ``bench/results/runtime_mutation.json`` (``--reset`` starts it anew);
``bench/results/runtime_mutation.md`` is rewritten from every run there.
"""

from __future__ import annotations

import argparse
import gc
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

from runtime_common import FsyncCounter, TsDriver, content, ensure_reference, fill, plans, validated

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
AIM_BARE, AIM_CPU, AIM_FSYNCS = 1.2, 1.0, 2
IMPLS = ("mnemon", "nofsync", "bare", "rmw", "ts")
NAMES = {"mnemon": "mnemon-ls durable", "nofsync": "mnemon-ls, os.fsync no-op", "bare": "bare durable commit",
         "rmw": "bare read-modify-write",
         "ts": "TypeScript reference (no fsync)"}
STAT_CALLS = ("newfstatat", "fstatat64", "statx", "stat", "lstat", "fstat", "stat64", "lstat64", "fstat64")


def full_store(root: Path) -> Any:
    """A ``RuntimeStore`` on ``root`` filled to ~10 KB MEMORY.md / ~4 KB USER.md (see the module doc)."""
    from mnemon_ls.runtime.store import RuntimeStore

    return fill(RuntimeStore(root))


# --------------------------------------------------------------------------- the floor


def bare_commit(directory: Path, files: list[tuple[str, bytes]]) -> None:
    """Durably replace ``files`` (name, bytes) in ``directory``: temp files, the last one fsynced, renames in
    order, the directory fsynced (what a commit must do at least; two fsyncs)."""
    temps = []
    last = len(files) - 1
    for index, (name, data) in enumerate(files):
        tmp = os.path.join(directory, f".{name}.{os.getpid()}.bare.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)
            if index == last:
                os.fsync(fd)
        finally:
            os.close(fd)
        temps.append(tmp)
    for (name, _), tmp in zip(files, temps):
        os.rename(tmp, os.path.join(directory, name))
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def bare_read_modify_write(directory: Path, files: list[tuple[str, bytes]], parsed: dict[bytes, Any]) -> None:
    """The floor of a durable read-modify-write of ``directory`` (module doc): an exclusive ``flock`` on
    ``.bare.lock``, ``memories.json`` read (``parsed``: the documents of the bytes a commit wrote, kept as a
    writer keeps what it wrote; other bytes are parsed), serialised, then :func:`bare_commit` of ``files``."""
    import fcntl

    fd = os.open(os.path.join(directory, ".bare.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with open(os.path.join(directory, "memories.json"), "rb") as handle:
            data = handle.read()
        document = parsed.get(data)
        if document is None:
            document = json.loads(data)
        json.dumps(document, ensure_ascii=False).encode("utf-8")  # the C encoder: the least a serialisation costs
        bare_commit(directory, files)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- the interleaved run


def measure(tmp: Path, modules: Path | None, rounds: int, warmup: int) -> dict[str, Any]:
    roots = {impl: tmp / impl for impl in IMPLS}
    seed = full_store(roots["mnemon"])
    for impl in ("nofsync", "bare", "rmw", "ts"):
        shutil.copytree(roots["mnemon"] / "runtime", roots[impl] / "runtime",
                        ignore=shutil.ignore_patterns(".memories.lock*"))
    from mnemon_ls.runtime.store import RuntimeStore

    stores = {impl: RuntimeStore(roots[impl]) for impl in ("mnemon", "nofsync")}
    steps = plans(seed.read().entries[99])
    requests = {op: [(validated(raw), timed) for raw, timed in op_steps] for op, op_steps in steps.items()}
    ts = TsDriver(modules, roots["ts"]) if modules is not None else None
    impls = [impl for impl in IMPLS if impl != "ts" or ts is not None]
    counter = FsyncCounter()
    noop = lambda fd: None  # noqa: E731
    runtime_dir = roots["mnemon"] / "runtime"
    bare_dir = roots["bare"] / "runtime"
    rmw_dir = roots["rmw"] / "runtime"
    # (op, step) -> the files the last mnemon-ls sample of that step wrote (the bare commit's payload)
    payload: dict[tuple[str, int], list[tuple[str, bytes]]] = {}
    parsed: dict[bytes, Any] = {}  # memories.json bytes a commit wrote -> its document (the floor's kept parse)
    before_files = {name: (runtime_dir / name).read_bytes() for name in ("USER.md", "MEMORY.md")}

    def run_ours(impl: str, request: Any) -> tuple[int, int]:
        os.fsync = counter if impl == "mnemon" else noop  # type: ignore[assignment]
        try:
            cpu, wall = time.process_time_ns(), time.perf_counter_ns()
            receipt = stores[impl].mutate(request)
            wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
        finally:
            os.fsync = counter.real  # type: ignore[assignment]
        assert receipt.changed, receipt.message
        return wall, cpu

    def capture(op: str, index: int) -> None:
        files = []
        for name in ("USER.md", "MEMORY.md"):
            data = (runtime_dir / name).read_bytes()
            if data != before_files[name]:
                files.append((name, data))
            before_files[name] = data
        body = (runtime_dir / "memories.json").read_bytes()
        payload[(op, index)] = [*files, (".memories.last-good.json", body), ("memories.json", body)]
        parsed[body] = json.loads(body)  # what the read-modify-write floor's commit keeps of what it wrote (untimed)

    samples: dict[tuple[str, str], dict[str, list[int]]] = {(op, impl): {"wall": [], "cpu": []}
                                                             for op in steps for impl in impls}
    commits = 0
    gc.collect()
    try:
        for round_no in range(warmup + rounds):
            turn = round_no % len(impls)
            order = impls[turn:] + impls[:turn]
            if round_no == 0:  # the bare commit needs a payload: mnemon-ls goes first once
                order = ["mnemon", *[impl for impl in order if impl != "mnemon"]]
            for op in steps:
                for impl in order:
                    for index, ((raw, timed), (request, _)) in enumerate(zip(steps[op], requests[op])):
                        if impl == "ts":
                            wall, cpu = ts.mutate(raw)  # type: ignore[union-attr]
                        elif impl == "bare":
                            files = payload[(op, index)]
                            cpu, wall = time.process_time_ns(), time.perf_counter_ns()
                            bare_commit(bare_dir, files)
                            wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
                        elif impl == "rmw":
                            files = payload[(op, index)]
                            cpu, wall = time.process_time_ns(), time.perf_counter_ns()
                            bare_read_modify_write(rmw_dir, files, parsed)
                            wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
                        else:
                            wall, cpu = run_ours(impl, request)
                            if impl == "mnemon":
                                commits += 1
                                capture(op, index)
                        if timed and round_no >= warmup:
                            samples[(op, impl)]["wall"].append(wall)
                            samples[(op, impl)]["cpu"].append(cpu)
    finally:
        if ts is not None:
            ts.close()
    from mnemon_ls.runtime.model import parse_store

    shapes = [[(e.content, e.target, e.importance, e.branches) for e in
               parse_store((roots[impl] / "runtime" / "memories.json").read_bytes())] for impl in impls]
    assert all(shape == shapes[0] for shape in shapes), "the stores diverged"
    ms = lambda values: round(statistics.median(values) / 1e6, 4)  # noqa: E731
    rows: dict[str, dict[str, Any]] = {}
    for op in [*steps, "all"]:
        cells = {impl: {kind: [x for o in steps if op in ("all", o) for x in samples[(o, impl)][kind]]
                        for kind in ("wall", "cpu")} for impl in impls}
        row: dict[str, Any] = {impl: {"wallMs": ms(cells[impl]["wall"]), "cpuMs": ms(cells[impl]["cpu"]),
                                      "n": len(cells[impl]["wall"])} for impl in impls}
        row["vsBare"] = round(row["mnemon"]["wallMs"] / row["bare"]["wallMs"], 3)
        row["vsRmw"] = round(row["mnemon"]["wallMs"] / row["rmw"]["wallMs"], 3)
        if "ts" in row:
            row["cpuVsTs"] = round(row["mnemon"]["cpuMs"] / row["ts"]["cpuMs"], 3)
            row["nofsyncCpuVsTs"] = round(row["nofsync"]["cpuMs"] / row["ts"]["cpuMs"], 3)
            row["nofsyncWallVsTsWall"] = round(row["nofsync"]["wallMs"] / row["ts"]["wallMs"], 3)
        rows[op] = row
    return {"rows": rows, "fsyncsPerCommit": round(counter.calls / commits, 3)}


# --------------------------------------------------------------------------- system calls


def child(repo: Path, pairs: int) -> None:
    """``--child K``: set up a full store, then K add + remove pairs (run under strace by :func:`syscalls`)."""
    from mnemon_ls.runtime import ops

    with tempfile.TemporaryDirectory(prefix="bench-mutation-child-") as tmp:
        root = Path(tmp) / "root"
        full_store(root)
        from mnemon_ls.runtime.store import RuntimeStore

        store = RuntimeStore(root)  # a fresh object, as a server holds one across requests
        add = ops.validate_request("add", "memory", content(900))
        remove = ops.validate_request("remove", "memory", old_text=content(900))
        for _ in range(3):
            store.mutate(add)
            store.mutate(remove)
        for _ in range(pairs):
            store.mutate(add)
            store.mutate(remove)


def _strace_counts(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            counts[parts[-1]] = int(parts[3])
    return counts


def syscalls(repo: Path, modules: Path | None, pairs: int, tmp: Path) -> dict[str, dict[str, float]]:
    """System calls per mutation (``strace -f -c``, K pairs minus none, / 2K) of mnemon-ls and the reference."""
    out: dict[str, dict[str, float]] = {}
    runs: dict[str, list[list[str]]] = {
        "mnemon": [[sys.executable, str(Path(__file__).resolve()), "--repo", str(repo), "--child", str(k)]
                   for k in (0, pairs)]}
    for impl, commands in runs.items():
        counts = []
        for k, command in zip((0, pairs), commands):
            trace = tmp / f"strace-{impl}-{k}.txt"
            subprocess.run(["strace", "-f", "-c", "-o", str(trace), *command], check=True, capture_output=True)
            counts.append(_strace_counts(trace))
        out[impl] = _per_mutation(counts[0], counts[1], pairs)
    if modules is not None:
        counts = []
        for k in (0, pairs):
            root = tmp / f"strace-ts-{k}"
            shutil.copytree(tmp / "mnemon" / "runtime", root / "runtime", ignore=shutil.ignore_patterns(".memories.lock*"))
            trace = tmp / f"strace-ts-{k}.txt"
            driver = TsDriver(modules, root, ["strace", "-f", "-c", "-o", str(trace)])
            extra = content(900)
            for _ in range(3 + k):
                driver.mutate({"action": "add", "target": "memory", "content": extra})
                driver.mutate({"action": "remove", "target": "memory", "oldText": extra})
            driver.close()
            counts.append(_strace_counts(trace))
        out["ts"] = _per_mutation(counts[0], counts[1], pairs)
    return out


def _per_mutation(zero: dict[str, int], many: dict[str, int], pairs: int) -> dict[str, float]:
    diff = {name: (many.get(name, 0) - zero.get(name, 0)) / (2 * pairs) for name in set(zero) | set(many)}
    per = {name: round(value, 2) for name, value in sorted(diff.items(), key=lambda kv: -kv[1]) if value >= 0.05}
    per["(stat family)"] = round(sum(v for k, v in diff.items() if k in STAT_CALLS), 2)
    per["(fsync family)"] = round(sum(v for k, v in diff.items() if k in ("fsync", "fdatasync", "sync_file_range")), 2)
    per["(total)"] = round(sum(v for v in diff.values()), 2)
    return per


# --------------------------------------------------------------------------- where the time goes


def steps(tmp: Path, samples: int) -> dict[str, float]:
    """``--steps``: CPU time (``thread_time``) of each step of a durable add/remove on a full store, medians in
    microseconds, with ``os.fsync`` a no-op (the non-durable work). Each step is a function of the code under
    measurement wrapped by a timer in this process (a step missing from that code is skipped); nested steps
    are inside their parent's time."""
    import contextlib

    from mnemon_ls import fsio
    from mnemon_ls.runtime import handedit, ops
    from mnemon_ls.runtime import store as store_module
    from mnemon_ls.runtime.store import RuntimeStore

    full_store(tmp / "steps")
    store = RuntimeStore(tmp / "steps")
    spent: dict[str, int] = {}
    clock = time.thread_time_ns

    def wrap(owner: Any, name: str, label: str) -> None:
        fn = getattr(owner, name, None)
        if fn is None:
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0) + clock() - start

        setattr(owner, name, timed)

    real_lock = fsio.file_lock

    @contextlib.contextmanager
    def lock(*args: Any, **kwargs: Any):
        start = clock()
        held = real_lock(*args, **kwargs)
        value = held.__enter__()
        spent["lock: acquire"] = spent.get("lock: acquire", 0) + clock() - start
        try:
            yield value
        finally:
            start = clock()
            held.__exit__(None, None, None)
            spent["lock: release"] = spent.get("lock: release", 0) + clock() - start

    fsio.file_lock = lock  # type: ignore[assignment]
    wrap(fsio, "checked_dir_exists", "directory check (once per operation)")
    wrap(fsio, "ensure_dir", "ensure_dir (before: twice per operation)")
    wrap(RuntimeStore, "read_valid", "read memories.json + parse (cached)")
    wrap(ops, "apply_mutation", "apply the mutation")
    wrap(ops, "check_capacity", "capacity check")
    wrap(RuntimeStore, "commit", "commit (all of it)")
    wrap(fsio, "read_bytes_or_none", "file reads (memories.json, USER.md, MEMORY.md)")
    for name in ("serialized_with_revision", "serialize_store", "revision_of", "sweep_orphans"):
        wrap(store_module, name, f"commit: {name}")
    wrap(fsio, "write_files_atomically", "commit: write_files_atomically (the bare commit's work)")
    wrap(handedit, "record_history", "commit: projection history")
    wrap(RuntimeStore, "receipt", "receipt")
    add = ops.validate_request("add", "memory", content(900))
    remove = ops.validate_request("remove", "memory", old_text=content(900))
    real_fsync, os.fsync = os.fsync, (lambda fd: None)  # type: ignore[assignment]
    rows: dict[str, list[int]] = {}
    try:
        for index in range(samples + 20):
            for request in (add, remove):
                spent.clear()
                start = clock()
                store.mutate(request)
                total = clock() - start
                if index >= 20:
                    rows.setdefault("whole mutation", []).append(total)
                    for label, value in spent.items():
                        rows.setdefault(label, []).append(value)
    finally:
        os.fsync = real_fsync  # type: ignore[assignment]
        fsio.file_lock = real_lock  # type: ignore[assignment]
    return {label: round(statistics.median(values) / 1000, 1) for label, values in rows.items()}


# --------------------------------------------------------------------------- results


def markdown(runs: dict[str, list[dict[str, Any]]]) -> str:
    lines = ["# Runtime mutation: durable mutation vs bare durable commit vs the TypeScript reference", "",
             "`python bench/runtime_mutation.py --label LABEL` (module doc): full store (100 MEMORY.md entries, ~10 KB; "
             "40 USER.md entries, ~4 KB); add, replace, remove interleaved sample by sample with a bare durable "
             "commit of the same bytes (temp files, the memories.json temp fsynced, 3 renames, directory fsynced) "
             "and the TypeScript reference's `RuntimeMemoryController.mutate` (no fsync). Medians in ms. "
             f"Aims (issue 27 item 4): wall <= {AIM_BARE}x the bare commit, CPU <= {AIM_CPU}x the reference's, "
             f"<= {AIM_FSYNCS} fsyncs per commit. CPU = process user + system time around the call.", ""]
    lines += ["| label | runs | load | wall vs bare (all ops) | wall vs bare read-modify-write | CPU vs reference | "
              "no-fsync CPU vs reference | openat / stat / fsync per mutation |", "|---|---:|---|---|---|---|---|---|"]
    for label, label_runs in runs.items():
        span = lambda key: "-".join(f"{v:.2f}x" for v in sorted({min(r["rows"]["all"].get(key, 0) for r in label_runs),  # noqa: E731
                                                                  max(r["rows"]["all"].get(key, 0) for r in label_runs)}))
        loads = [x for r in label_runs for x in (r["loadBefore"], r["loadAfter"])]
        traced = [r["syscalls"]["mnemon"] for r in label_runs if r.get("syscalls")]
        calls = (f"{traced[-1].get('openat', 0):g} / {traced[-1].get('(stat family)', 0):g} / "
                 f"{traced[-1].get('(fsync family)', 0):g}") if traced else ""
        rmw = span("vsRmw") if all("vsRmw" in r["rows"]["all"] for r in label_runs) else ""
        lines.append(f"| {label} | {len(label_runs)} | {min(loads):g}-{max(loads):g} | {span('vsBare')} | {rmw} | "
                     f"{span('cpuVsTs')} | {span('nofsyncCpuVsTs')} | {calls} |")
    lines.append("")
    for label, label_runs in runs.items():
        lines += [f"## {label}", "",
                  "| run | commit | load before -> after | fsyncs/commit | op | mnemon-ls wall | bare wall | "
                  "**wall vs bare** | bare read-modify-write wall | wall vs it | mnemon-ls CPU | bare CPU | "
                  "reference CPU | **CPU vs reference** | "
                  "no-fsync CPU | no-fsync CPU vs reference | no-fsync wall | reference wall | no-fsync wall vs "
                  "reference wall |",
                  "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        nan = float("nan")
        for number, run in enumerate(label_runs, 1):
            for op, row in run["rows"].items():
                ts = row.get("ts") or {"cpuMs": nan, "wallMs": nan}
                rmw = row.get("rmw") or {"wallMs": nan}
                lines.append(
                    f"| {number} | {run['commit']} | {run['loadBefore']} -> {run['loadAfter']} | "
                    f"{run['fsyncsPerCommit']:g} | {op} | {row['mnemon']['wallMs']:.3f} | {row['bare']['wallMs']:.3f} | "
                    f"**{row['vsBare']:.2f}x** | {rmw['wallMs']:.3f} | {row.get('vsRmw', nan):.2f}x | "
                    f"{row['mnemon']['cpuMs']:.3f} | {row['bare']['cpuMs']:.3f} | "
                    f"{ts['cpuMs']:.3f} | **{row.get('cpuVsTs', nan):.2f}x** | {row['nofsync']['cpuMs']:.3f} | "
                    f"{row.get('nofsyncCpuVsTs', nan):.2f}x | {row['nofsync']['wallMs']:.3f} | {ts['wallMs']:.3f} | "
                    f"{row.get('nofsyncWallVsTsWall', nan):.2f}x |")
        lines.append("")
        stepped = [run for run in label_runs if run.get("steps")]
        if stepped:
            table = stepped[-1]["steps"]
            lines += [f"CPU per step of a durable add/remove with `os.fsync` a no-op ({label}, run "
                      f"{label_runs.index(stepped[-1]) + 1}; `--steps`, thread CPU time, medians in us; nested "
                      "steps are inside their parent):", "", "| step | us |", "|---|---:|"]
            lines += [f"| {name} | {value:g} |" for name, value in sorted(table.items(), key=lambda kv: -kv[1])]
            lines.append("")
        traced = [run for run in label_runs if run.get("syscalls")]
        if traced:
            calls = traced[-1]["syscalls"]
            names = [n for n in ("openat", "(fsync family)", "(stat family)", "newfstatat", "statx", "getpid", "close",
                                 "read", "write", "pread64", "pwrite64", "lseek", "ioctl", "rename", "unlink", "link",
                                 "getrandom", "getdents64", "mkdir", "fchmod", "(total)")
                     if any(n in per for per in calls.values())]
            lines += [f"System calls per mutation ({label}, run {label_runs.index(traced[-1]) + 1}; `strace -f -c`, "
                      f"{traced[-1]['stracePairs']} add + remove pairs minus none, / {2 * traced[-1]['stracePairs']}):", "",
                      "| syscall | " + " | ".join(NAMES[impl] for impl in calls) + " |",
                      "|---|" + "---:|" * len(calls)]
            for name in names:
                lines.append(f"| {name} | " + " | ".join(f"{per.get(name, 0):g}" for per in calls.values()) + " |")
            lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="after", help="the run's group in the results (before, after, ...)")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--rounds", type=int, default=200, help="timed rounds (each: 3 ops x every implementation)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--tsref", type=Path, default=Path("/tmp/tsref"), help="where the npm reference lives")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--strace", type=int, nargs="?", const=100, default=0, metavar="K",
                        help="also count system calls per mutation over K add + remove pairs (default 100)")
    parser.add_argument("--steps", type=int, nargs="?", const=400, default=0, metavar="N",
                        help="also time each step of N add + remove pairs (CPU, fsync a no-op; default 400)")
    parser.add_argument("--dir", help="directory to create the temp stores under (default: the system temp dir)")
    parser.add_argument("--reset", action="store_true", help="drop the label's earlier runs")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--render", action="store_true", help="only rewrite the .md from the .json")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(args.repo.resolve()))
    if args.child is not None:
        child(args.repo, args.child)
        return 0
    if args.render:
        runs = json.loads((args.out / "runtime_mutation.json").read_text("utf-8"))
        (args.out / "runtime_mutation.md").write_text(markdown(runs) + "\n", "utf-8")
        return 0
    modules = None if args.no_reference else ensure_reference(args.tsref)
    with tempfile.TemporaryDirectory(prefix="bench-mutation-", dir=args.dir) as tmp_name:
        tmp = Path(tmp_name)
        load_before = os.getloadavg()[0]
        result = measure(tmp, modules, args.rounds, args.warmup)
        load_after = os.getloadavg()[0]
        if args.strace:
            if shutil.which("strace") is None:
                parser.error("--strace needs strace on PATH")
            result["syscalls"] = syscalls(args.repo.resolve(), modules, args.strace, tmp)
            result["stracePairs"] = args.strace
        if args.steps:
            result["steps"] = steps(tmp, args.steps)
    commit = subprocess.run(["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(args.repo), "status", "--porcelain", "--", "mnemon_ls"],
                           capture_output=True, text=True).stdout.strip()
    fs = subprocess.run(["df", "-T", args.dir or tempfile.gettempdir()], capture_output=True, text=True).stdout.split()
    result.update({"commit": commit + ("+changes" if dirty else ""), "at": time.strftime("%Y-%m-%d %H:%M"),
                   "python": platform.python_version(), "cores": os.cpu_count(), "rounds": args.rounds,
                   "fs": fs[-6] if len(fs) >= 7 else "?", "loadBefore": round(load_before, 2),
                   "loadAfter": round(load_after, 2)})
    path = args.out / "runtime_mutation.json"
    runs = json.loads(path.read_text("utf-8")) if path.exists() else {}
    if args.reset:
        runs.pop(args.label, None)
    runs.setdefault(args.label, []).append(result)
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n", "utf-8")
    (args.out / "runtime_mutation.md").write_text(markdown(runs) + "\n", "utf-8")
    print(markdown({args.label: [result]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
