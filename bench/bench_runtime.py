"""Benchmark of the Runtime store's hot paths: durable mutations, the wake snapshot, the branch probe
and the cold start of ``mnemon-ls wake``.

Run::

    python bench/bench_runtime.py            # full run (>= 300 samples per hot path), writes bench/results/runtime.md
    python bench/bench_runtime.py --quick    # smoke run (few samples), prints only
    python bench/bench_runtime.py --profile  # also cProfile the hot paths -> bench/results/runtime-profile.txt
    python bench/bench_runtime.py --dir /work/tmp   # put the store on another filesystem (default: system temp dir)

What is measured (``time.perf_counter_ns``, warm-up runs excluded, median and nearest-rank p95):

1. ``RuntimeStore.mutate`` add / replace / remove on a full store (MEMORY.md ~10 KB of the 10240-byte
   limit: 100 entries of ~96 bytes; USER.md ~4 KB), with the real lock, the real fsyncs and the real
   disk. Each timed mutation is undone untimed (add -> remove, remove -> re-add, replace alternates
   between two texts, both directions timed) so every sample sees the same store size.
   A component table splits one mutation into lock, read+parse, apply, encode and the durable write
   (with real fsync and with ``os.fsync`` replaced by a no-op *in this process only*, to separate
   CPU from disk).
2. The wake snapshot on that full store: ``WorkspaceHost.wake()`` (branch probe + repair check + read +
   render), ``RuntimeSource.wake()`` with a given branch (no probe), ``render_wake`` alone, and the
   repair check / read alone.
3. ``mnemon_ls.gitstate.probe_branch`` on a pygit2-made repository (the detailed scenario bench is
   ``bench/bench_gitstate.py``; this only measures the plain-branch case for the summary).
4. Cold start: wall time of ``mnemon-ls wake`` as a subprocess, next to ``python -c pass`` and
   ``python -c "import mnemon_ls.cli.full"``, plus the top ``-X importtime`` offenders.

0. Side by side with the TypeScript reference (issue 15): the same add / replace / remove on three
   identical full stores, interleaved sample by sample in one run (the order rotates every sample):
   ``RuntimeStore.mutate`` durable (the fsyncs it does are counted with a wrapper around the real
   ``os.fsync``), ``RuntimeStore.mutate`` with ``os.fsync`` a no-op in this process (the non-durable work),
   and the npm package ``dsh-mnemon-source-runtime``'s own ``RuntimeMemoryController.mutate`` (which never
   fsyncs), driven by ``bench/ts_runtime_driver.mjs`` under ``node`` and timed inside node. The package is
   installed with ``npm install --legacy-peer-deps`` into ``--tsref`` (default ``/tmp/tsref``, outside the
   repository) when it is not there yet; ``--no-reference`` skips the section.

Nothing in ``mnemon_ls`` is modified; the store lives in a throw-away temp directory.
"""

from __future__ import annotations

import argparse
import cProfile
import contextlib
import datetime as _dt
import gc
import io
import math
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import pygit2

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from mnemon_ls import fsio, gitstate  # noqa: E402
from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.runtime import ops  # noqa: E402
from mnemon_ls.runtime.model import (  # noqa: E402
    TARGETS,
    parse_store,
    projection_bytes,
    revision_of,
    serialize_store,
    used_bytes,
)
from mnemon_ls.runtime.snapshot import render_wake  # noqa: E402
from mnemon_ls.runtime.store import RuntimeStore  # noqa: E402
from mnemon_ls.settings import load_settings  # noqa: E402
from runtime_common import FsyncCounter, TsDriver, content, ensure_reference, fill, plans, validated  # noqa: E402

AIMS_MS = {"mutation": 3.0, "wake": 2.0, "probe": 0.5}
SIG = pygit2.Signature("Bench", "bench@example.com", 1_700_000_000, 0)

# --------------------------------------------------------------------------- statistics


def pct(sorted_ns: list[int], q: float) -> int:
    """Nearest-rank percentile of an already sorted list."""
    return sorted_ns[max(0, math.ceil(q * len(sorted_ns)) - 1)]


class Result:
    def __init__(self, name: str, samples: list[int], aim_ms: float | None = None, note: str = "") -> None:
        self.name = name
        self.samples = sorted(samples)
        self.aim_ms = aim_ms
        self.note = note

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples) / 1e6

    @property
    def p95_ms(self) -> float:
        return pct(self.samples, 0.95) / 1e6

    @property
    def max_ms(self) -> float:
        return self.samples[-1] / 1e6

    def verdict(self) -> str:
        if self.aim_ms is None:
            return ""
        return f"{'ok' if self.median_ms < self.aim_ms else 'MISS'} (< {self.aim_ms:g} ms)"

    def row(self) -> str:
        return (f"| {self.name} | {self.n} | {self.median_ms:.3f} | {self.p95_ms:.3f} | {self.max_ms:.3f} | "
                f"{self.verdict()} | {self.note} |")

    def line(self) -> str:
        return (f"{self.name:<58} n={self.n:<5} median {self.median_ms:8.3f} ms  p95 {self.p95_ms:8.3f} ms  "
                f"max {self.max_ms:8.3f} ms  {self.verdict()}")


def sample(fn: Callable[[], object], n: int, warmup: int, between: Callable[[], object] | None = None) -> list[int]:
    """Time ``fn`` ``n`` times after ``warmup`` untimed calls; ``between`` runs untimed after each call."""
    for _ in range(warmup):
        fn()
        if between:
            between()
    gc.collect()
    clock = time.perf_counter_ns
    out = []
    for _ in range(n):
        start = clock()
        fn()
        out.append(clock() - start)
        if between:
            between()
    return out


# --------------------------------------------------------------------------- fixture


def build_workspace(tmp: Path) -> tuple[Path, Path]:
    """A pygit2 repository on branch ``main`` (3 commits) and an empty storage root."""
    repo_dir = tmp / "workspace"
    repo = pygit2.init_repository(str(repo_dir), initial_head="main")
    for n in range(3):
        (repo_dir / "file.txt").write_text(f"version {n}\n")
        repo.index.add("file.txt")
        repo.index.write()
        tree = repo.index.write_tree()
        parents = [] if repo.head_is_unborn else [repo.head.target]
        repo.create_commit("HEAD", SIG, SIG, f"commit {n}", tree, parents)
    root = tmp / "root"
    root.mkdir()
    return repo_dir, root


def fill_store(host: WorkspaceHost, memory_entries: int = 100, user_entries: int = 40) -> None:
    """Fill through the public mutate API: ~10 KB MEMORY.md (every 10th entry branch-scoped), ~4 KB USER.md."""
    fill(host.runtime, memory_entries, user_entries)


# --------------------------------------------------------------------------- benches


def bench_mutations(host: WorkspaceHost, n: int, warmup: int) -> list[Result]:
    runtime = host.runtime
    extra = content(900)
    other = content(901)
    victim = content(50)
    add_x = ops.validate_request("add", "memory", extra)
    rm_x = ops.validate_request("remove", "memory", old_text=extra)
    results = []

    def check(receipt) -> None:
        assert receipt.changed, receipt.message

    results.append(Result("mutate add (durable commit)",
                          sample(lambda: check(runtime.mutate(add_x)), n, warmup, lambda: check(runtime.mutate(rm_x))),
                          AIMS_MS["mutation"], "remove undone untimed"))

    # replace alternates a <-> b, both directions timed
    to_other = ops.validate_request("replace", "memory", other, old_text=victim)
    to_victim = ops.validate_request("replace", "memory", victim, old_text=other)
    flip = [to_other, to_victim]
    state = {"i": 0}

    def do_replace() -> None:
        check(runtime.mutate(flip[state["i"] % 2]))
        state["i"] += 1

    if warmup % 2:
        warmup += 1
    results.append(Result("mutate replace (durable commit)", sample(do_replace, n, warmup),
                          AIMS_MS["mutation"], "alternates two texts"))
    if state["i"] % 2:
        do_replace()

    # remove the last entry and re-add it untimed (re-add appends, so the store stays identical)
    last = runtime.read().memory[-1]
    rm_last = ops.validate_request("remove", "memory", old_text=last.content)
    re_add = ops.validate_request("add", "memory", last.content, importance=last.importance,
                                  branches=list(last.branches) or None)
    results.append(Result("mutate remove (durable commit)",
                          sample(lambda: check(runtime.mutate(rm_last)), n, warmup,
                                 lambda: check(runtime.mutate(re_add))),
                          AIMS_MS["mutation"], "re-add undone untimed"))
    return results


def bench_reference(tmp: Path, modules: Path, n: int, warmup: int) -> list[Result]:
    """Section 0: three identical full stores, one sample of each implementation per round (rotating)."""
    roots = {name: tmp / f"ref-{name}" for name in ("durable", "nofsync", "ts")}
    seed = fill(RuntimeStore(roots["durable"]))
    for name in ("nofsync", "ts"):
        (roots[name] / "runtime").mkdir(parents=True)
        shutil.copy(roots["durable"] / "runtime" / "memories.json", roots[name] / "runtime" / "memories.json")
    stores = {name: RuntimeStore(roots[name]) for name in ("durable", "nofsync")}
    for store in stores.values():
        store.projections.repair()
    ts = TsDriver(modules, roots["ts"])
    counter = FsyncCounter()
    noop = lambda fd: None  # noqa: E731

    # op -> list of (request, timed?) steps; each round runs the steps of one op on each implementation; the last
    # memory entry is removed and re-added, so the store stays identical
    steps_of = plans(seed.read().entries[99])
    validated_steps = {op: [(validated(r), t) for r, t in steps] for op, steps in steps_of.items()}

    def run_ours(name: str, request: ops.MutationRequest) -> int:
        os.fsync = counter if name == "durable" else noop  # type: ignore[assignment]
        try:
            start = time.perf_counter_ns()
            receipt = stores[name].mutate(request)
            elapsed = time.perf_counter_ns() - start
        finally:
            os.fsync = counter.real  # type: ignore[assignment]
        assert receipt.changed, receipt.message
        return elapsed

    samples = {(op, impl): [] for op in steps_of for impl in ("durable", "nofsync", "ts")}
    commits = 0
    gc.collect()
    try:
        for round_no in range(warmup + n):
            for op in steps_of:
                order = ("durable", "nofsync", "ts")[round_no % 3:] + ("durable", "nofsync", "ts")[:round_no % 3]
                for impl in order:
                    for (raw, timed), (request, _) in zip(steps_of[op], validated_steps[op]):
                        ns = ts.mutate(raw)[0] if impl == "ts" else run_ours(impl, request)
                        if impl == "durable":
                            commits += 1
                        if timed and round_no >= warmup:
                            samples[(op, impl)].append(ns)
    finally:
        ts.close()
    fsyncs_per_commit = counter.calls / commits
    same = [(roots[k] / "runtime" / "memories.json").read_bytes() for k in roots]
    shape = [[(e.content, e.target, e.importance, e.branches) for e in parse_store(b)] for b in same]
    assert shape[1:] == [shape[0]] * 2, "the three stores diverged"

    results = []
    for op in steps_of:
        ref = Result(f"{op}: TypeScript reference (no fsync)", samples[(op, "ts")])
        durable = Result(f"{op}: mnemon-ls durable ({fsyncs_per_commit:g} fsyncs per commit, counted)",
                         samples[(op, "durable")])
        nofsync = Result(f"{op}: mnemon-ls, os.fsync no-op (non-durable work)", samples[(op, "nofsync")])
        durable.note = f"**{durable.median_ms / ref.median_ms:.2f}x** the reference (aim <= 1.5x)"
        nofsync.note = f"**{nofsync.median_ms / ref.median_ms:.2f}x** the reference (aim <= 1.0x)"
        ref.note = "RuntimeMemoryController.mutate, timed in node"
        results += [durable, nofsync, ref]
    pooled = {impl: [x for op in steps_of for x in samples[(op, impl)]] for impl in ("durable", "nofsync", "ts")}
    ref = Result("all three ops: TypeScript reference", pooled["ts"])
    for impl, label, aim in (("durable", "durable", "1.5"), ("nofsync", "os.fsync no-op", "1.0")):
        r = Result(f"all three ops: mnemon-ls {label}", pooled[impl])
        r.note = f"**{r.median_ms / ref.median_ms:.2f}x** the reference (aim <= {aim}x)"
        results.append(r)
    ref.note = "pooled medians"
    results.append(ref)
    return results


@contextlib.contextmanager
def fsync_disabled():
    """Replace ``os.fsync`` by a no-op in this process (diagnostic only: shows what the disk costs)."""
    real = os.fsync
    os.fsync = lambda fd: None  # type: ignore[assignment]
    try:
        yield
    finally:
        os.fsync = real  # type: ignore[assignment]


def bench_components(host: WorkspaceHost, n: int, warmup: int, whole_ms: float) -> list[Result]:
    """One add split into the steps ``RuntimeStore.mutate`` runs, each timed alone on the same full store.

    ``whole_ms`` (the measured median of a whole add) turns each median into a share. The steps overlap
    nothing, but timing them alone runs them with warmer caches, so the shares add up to a bit less.
    """
    store = host.runtime.memory_store
    add_x = ops.validate_request("add", "memory", content(902))
    data = store.memories_path.read_bytes()
    state = store.read()
    now = store.now()
    outcome = ops.apply_mutation(state.entries, add_x, now)
    after = outcome.entries
    scratch = store.runtime_dir.parent / "scratch"
    fsio.ensure_dir(scratch)
    body = serialize_store(after)
    writes = [(scratch / "MEMORY.md", projection_bytes(after, "memory")),
              (scratch / ".memories.last-good.json", body), (scratch / "memories.json", body)]
    proj_paths = [store.projection_path(t) for t in TARGETS]

    def lock_cycle() -> None:
        with store.locked():
            pass

    def projections() -> None:
        for t, p in zip(TARGETS, proj_paths):
            fsio.read_bytes_or_none(p) == projection_bytes(after, t)
            projection_bytes(state.entries, t)

    def receipt() -> None:
        store.receipt("Entry added.", "memory", after, "r", True, {})

    def commit_write() -> None:
        fsio.write_files_atomically(writes, unsynced={path for path, _ in writes[:-1]})

    steps = [
        ("lock acquire + release (filelock SoftFileLock, incl. 2x ensure_dir)", lock_cycle),
        ("read memories.json bytes", lambda: fsio.read_bytes_or_none(store.memories_path)),
        ("parse_store (json.loads + entry_from_json x140)", lambda: parse_store(data)),
        ("revision_of (runs twice per mutate: read + receipt)", lambda: revision_of(after)),
        ("ops.apply_mutation (add)", lambda: ops.apply_mutation(state.entries, add_x, now)),
        ("projection reads/compares in _commit", projections),
        ("serialize_store (indent=2 -> pure-Python json encoder)", lambda: serialize_store(after)),
        ("_receipt (used_bytes, counts)", receipt),
        ("write_files_atomically, 3 files (memories.json + dir fsynced, as a commit)", commit_write),
    ]
    rows = []
    for name, fn in steps:
        r = Result("  " + name, sample(fn, n, warmup))
        r.note = f"{100 * r.median_ms / whole_ms:.0f}% of an add"
        rows.append(r)
    with fsync_disabled():
        r = Result("  write_files_atomically, 3 files (os.fsync no-op)", sample(commit_write, n, warmup))
        r.note = f"{100 * r.median_ms / whole_ms:.0f}% of an add; fsync cost = difference to the row above"
        rows.append(r)
        rm_x = ops.validate_request("remove", "memory", old_text=content(902))
        r = Result("  mutate add, whole (os.fsync no-op) = CPU + page cache",
                   sample(lambda: host.runtime.mutate(add_x), n, warmup, lambda: host.runtime.mutate(rm_x)))
        r.note = f"{100 * r.median_ms / whole_ms:.0f}% of an add"
        rows.append(r)
    shutil.rmtree(scratch)
    return rows


def bench_wake(host: WorkspaceHost, n: int, warmup: int) -> list[Result]:
    runtime = host.runtime
    snapshot, repairs = host.wake()
    assert not any(r.repaired for _, r in repairs), "wake should not need a repair on a consistent store"
    assert snapshot.branch == "main" and snapshot.omitted == 0, snapshot.text[:300]
    eff = runtime.read()
    limits = host.settings.runtime_memory
    now_ms = int(time.time() * 1000)

    def render() -> None:
        render_wake(user_entries=eff.user, memory_entries=eff.memory, revision=eff.revision, used=eff.used,
                    limits={"user": limits.user_limit_bytes, "memory": limits.memory_limit_bytes},
                    branch="main", branch_reason=None, now_ms=now_ms, budget_chars=host.settings.wake_budget_chars)

    note = (f"{eff.used['memory']} B MEMORY.md + {eff.used['user']} B USER.md, "
            f"{len(eff.memory) + len(eff.user)} entries, {snapshot.chars} chars")
    whole = Result("WorkspaceHost.wake() (probe + repair check + read + render)", sample(host.wake, n, warmup),
                   AIMS_MS["wake"], note)
    rows = [whole, Result("RuntimeSource.wake('main') (repair check + read + render)",
                          sample(lambda: runtime.wake("main", "given"), n, warmup), AIMS_MS["wake"], "no probe")]
    store = runtime.memory_store
    data = store.memories_path.read_bytes()
    for name, fn in (
        ("gitstate.probe_branch", host.branch_state),
        ("RuntimeSource.repair() (no-op check: read + parse + 2 projection compares)", runtime.repair),
        ("RuntimeSource.read() (read + parse again)", runtime.read),
        ("  of which parse_store", lambda: parse_store(data)),
        ("  of which revision_of", _rev_fn(store)),
        ("render_wake alone", render),
    ):
        r = Result("  " + name, sample(fn, n, warmup))
        r.note = f"{100 * r.median_ms / whole.median_ms:.0f}% of a wake"
        rows.append(r)
    return rows


def _rev_fn(store) -> Callable[[], object]:
    entries = store.read().entries
    return lambda: revision_of(entries)


def bench_probe(workspace: Path, n: int, warmup: int) -> list[Result]:
    state = gitstate.probe_branch(workspace)
    assert state.branch == "main", state
    return [Result("gitstate.probe_branch (plain branch)", sample(lambda: gitstate.probe_branch(workspace), n, warmup),
                   AIMS_MS["probe"], "details: bench/bench_gitstate.py")]


def _wall(cmd: list[str], runs: int, warmup: int, env: dict[str, str]) -> list[int]:
    def once() -> None:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} failed: {proc.stderr.decode(errors='replace')}")
    return sample(once, runs, warmup)


def bench_cold_start(workspace: Path, root: Path, runs: int, warmup: int, pycache: Path) -> tuple[list[Result], str]:
    """Wall time of whole processes, in two bytecode setups.

    "as configured": the caller's environment. When it sets ``PYTHONDONTWRITEBYTECODE`` (this sandbox
    does) an editable install has no ``mnemon_ls/__pycache__``, so every start compiles the package.
    "bytecode cached": ``PYTHONPYCACHEPREFIX`` points at a temp dir and writing is allowed, as after a
    wheel install (pip compiles at install time); the warm-up runs fill the cache. Nothing is written to
    the source tree either way.
    """
    exe = shutil.which("mnemon-ls")
    base = dict(os.environ)
    base.pop("PYTHONPROFILEIMPORTTIME", None)
    cached = dict(base)
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    cached["PYTHONPYCACHEPREFIX"] = str(pycache)
    wake_cmd = ([exe] if exe else [sys.executable, "-m", "mnemon_ls"]) + [
        "wake", "--scope", "custom", "--data-dir", str(root), "--runtime-user-scope", "storage",
        "--workspace", str(workspace)]
    how = "console script" if exe else "python -m (no console script on PATH)"
    configured = "PYTHONDONTWRITEBYTECODE=1: mnemon_ls compiled at every start" \
        if base.get("PYTHONDONTWRITEBYTECODE") else "environment as is"
    results = [
        Result("`mnemon-ls wake`, bytecode cached", _wall(wake_cmd, runs, max(warmup, 2), cached), None, how),
        Result("`mnemon-ls wake`, as configured", _wall(wake_cmd, runs, warmup, base), None, configured),
        Result("`python -c \"import mnemon_ls.cli.full\"`, bytecode cached",
               _wall([sys.executable, "-c", "import mnemon_ls.cli.full"], runs, warmup, cached)),
        Result("`python -c pass` (interpreter + site floor)", _wall([sys.executable, "-c", "pass"], runs, warmup, cached)),
    ]
    return results, importtime_report(cached)


def importtime_report(env: dict[str, str], top: int = 15) -> str:
    """Best of 3 ``-X importtime`` runs (by total), top modules by cumulative and by self time."""
    best: list[tuple[int, int, str]] | None = None
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import mnemon_ls.cli.full"],
                              capture_output=True, text=True, env=env)
        rows = []
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cum_us, name = line[len("import time:"):].split("|", 2)
            rows.append((int(self_us), int(cum_us), name.rstrip()))
        if best is None or sum(r[0] for r in rows) < sum(r[0] for r in best):
            best = rows
    assert best is not None
    total = sum(r[0] for r in best)
    by_top: dict[str, int] = {}
    for self_us, _, name in best:
        pkg = name.strip().split(".")[0]
        by_top[pkg] = by_top.get(pkg, 0) + self_us
    lines = [f"Bytecode cached (see the cold-start note). Total import self time: {total / 1000:.1f} ms over "
             f"{len(best)} modules (best of 3 runs; -X importtime itself inflates times).", "",
             "Self time by top-level package:", "", "| package | self ms | share |", "|---|---:|---:|"]
    for pkg, us in sorted(by_top.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {pkg} | {us / 1000:.1f} | {100 * us / total:.0f}% |")
    lines += ["", f"Top {top} modules by cumulative time (includes their imports):", "",
              "| module | cumulative ms | self ms |", "|---|---:|---:|"]
    for self_us, cum_us, name in sorted(best, key=lambda r: -r[1])[:top]:
        lines.append(f"| `{name}` | {cum_us / 1000:.1f} | {self_us / 1000:.1f} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- profiling


def profile_hot_paths(host: WorkspaceHost, calls: int) -> str:
    runtime = host.runtime
    add_x = ops.validate_request("add", "memory", content(903))
    rm_x = ops.validate_request("remove", "memory", old_text=content(903))
    out = io.StringIO()
    for title, fn in (
        ("mutate add + remove (2 durable commits per call)", lambda: (runtime.mutate(add_x), runtime.mutate(rm_x))),
        ("WorkspaceHost.wake()", host.wake),
    ):
        for _ in range(20):
            fn()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            fn()
        prof.disable()
        for key in ("tottime", "cumulative"):
            out.write(f"\n===== {title}: {calls} calls, sorted by {key} =====\n")
            stats = pstats.Stats(prof, stream=out)
            stats.strip_dirs().sort_stats(key).print_stats(30)
    return out.getvalue()


# --------------------------------------------------------------------------- report


def loadavg() -> str:
    """The 1-minute load average (other work on this 2-core machine shows up here and in p95/max)."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def machine_info(store_dir: Path) -> dict[str, str]:
    def run(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
        except OSError as exc:
            return f"({exc})"

    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    df = run(["df", "-T", str(store_dir)]).splitlines()
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": run(["nproc"]),
        "cpu": cpu or platform.processor(),
        "python": run([sys.executable, "-V"]),
        "kernel": platform.release(),
        "store_dir": str(store_dir),
        "df": df[-1] if df else "",
        "fstype": df[-1].split()[1] if len(df) > 1 else "?",
        "versions": f"pygit2 {pygit2.__version__} (libgit2 {pygit2.LIBGIT2_VERSION}), "
                    f"filelock {__import__('filelock').__version__}",
    }


def render_markdown(info: dict[str, str], sections: list[tuple[str, list[Result]]], importtime: str,
                    args: argparse.Namespace) -> str:
    out = [
        "# Runtime benchmark results",
        "",
        f"- date: {info['date']}",
        f"- machine: nproc={info['nproc']}, {info['cpu']}, kernel {info['kernel']}",
        f"- {info['python']}; {info['versions']}",
        f"- store on `{info['store_dir']}`, filesystem **{info['fstype']}** (`df -T`: `{info['df']}`)",
        f"- command: `python bench/bench_runtime.py{' --quick' if args.quick else ''}`"
        f"{' --dir ' + args.dir if args.dir else ''}; times in ms (median, nearest-rank p95, max); "
        "warm-up runs excluded; GC enabled (as in production)",
        "",
    ]
    for title, results in sections:
        out += [f"## {title}", "", "| what | n | median ms | p95 ms | max ms | aim | note |",
                "|---|---:|---:|---:|---:|---|---|"]
        out += [r.row() for r in results]
        out.append("")
    if importtime:
        out += ["## Import time (`python -X importtime -c \"import mnemon_ls.cli.full\"`)", "", importtime, ""]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description="mnemon-ls Runtime benchmark (see module docstring)")
    parser.add_argument("--quick", action="store_true", help="few samples; prints only (unless --out)")
    parser.add_argument("--dir", help="directory to create the temp store under (default: system temp dir)")
    parser.add_argument("--samples", type=int, help="samples per hot path (default 300 mutations / 1000 reads)")
    parser.add_argument("--cold-runs", type=int, help="cold-start runs (default 30)")
    parser.add_argument("--profile", action="store_true", help="cProfile mutate and wake -> bench/results/runtime-profile.txt")
    parser.add_argument("--out", help="markdown output (default bench/results/runtime.md; none with --quick)")
    parser.add_argument("--tsref", default="/tmp/tsref",
                        help="where the npm reference package is (installed there when missing; default /tmp/tsref)")
    parser.add_argument("--no-reference", action="store_true", help="skip section 0 (the TypeScript reference)")
    parser.add_argument("--only-reference", action="store_true", help="run section 0 only")
    args = parser.parse_args()

    n_mut = args.samples or (40 if args.quick else 300)
    n_read = args.samples or (100 if args.quick else 1000)
    n_probe = args.samples or (200 if args.quick else 3000)
    warm = 10 if args.quick else 30
    cold_runs = args.cold_runs or (5 if args.quick else 30)
    out_path = Path(args.out) if args.out else (None if args.quick else REPO_ROOT / "bench" / "results" / "runtime.md")

    with tempfile.TemporaryDirectory(prefix="bench-runtime-", dir=args.dir) as tmp_name:
        tmp = Path(tmp_name)
        info = machine_info(tmp)
        print(f"{info['python']}, nproc={info['nproc']}, store on {tmp} ({info['fstype']}: {info['df']})")
        workspace, root = build_workspace(tmp)
        settings = load_settings({"storageScope": "custom", "dataDir": str(root), "runtimeUserScope": "storage"})
        host = WorkspaceHost(workspace, settings)
        fill_store(host)
        eff = host.runtime.read()
        print(f"store: MEMORY.md {used_bytes(eff.memory, 'memory')} B ({len(eff.memory)} entries), "
              f"USER.md {used_bytes(eff.user, 'user')} B ({len(eff.user)} entries)\n")

        sections: list[tuple[str, list[Result]]] = []

        def run(title: str, fn: Callable[[], list[Result]]) -> None:
            before = loadavg()
            print(f"== {title}   (1-min load average {before})")
            results = fn()
            title += f" [load avg {before} -> {loadavg()}]"
            for r in results:
                print(r.line())
            print()
            sections.append((title, results))

        modules = None if args.no_reference else ensure_reference(Path(args.tsref))
        if modules is not None:
            run("0. Side by side with the TypeScript reference (interleaved, one run)",
                lambda: bench_reference(tmp, modules, n_mut, warm))
        if args.only_reference:
            if out_path:
                out_path.parent.mkdir(parents=True, exist_ok=True)
                out_path.write_text(render_markdown(info, sections, "", args))
            return 0
        run("1. Mutations on a full store (durable commit: lock + 2 fsyncs, memories.json and the directory)",
            lambda: bench_mutations(host, n_mut, warm))
        add_ms = sections[-1][1][0].median_ms
        run("1b. Where one add goes (steps of RuntimeStore.mutate timed alone)",
            lambda: bench_components(host, n_mut, warm, add_ms))
        run("2. Wake snapshot on a full store", lambda: bench_wake(host, n_read, warm))
        run("3. Branch probe", lambda: bench_probe(workspace, n_probe, 100))
        load_before = loadavg()
        print(f"== 4. Cold start (subprocess wall time)   (1-min load average {load_before})")
        cold, importtime = bench_cold_start(workspace, root, cold_runs, 3 if not args.quick else 1, tmp / "pycache")
        for r in cold:
            print(r.line())
        print()
        print(importtime)
        sections.append((f"4. Cold start (whole process, wall time) [load avg {load_before} -> {loadavg()}]", cold))

        if args.profile:
            text = profile_hot_paths(host, 100 if args.quick else 300)
            prof_path = REPO_ROOT / "bench" / "results" / "runtime-profile.txt"
            prof_path.parent.mkdir(parents=True, exist_ok=True)
            prof_path.write_text(text)
            print(f"\nprofile written to {prof_path}")

    if out_path:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(render_markdown(info, sections, importtime, args))
        print(f"\nresults written to {out_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
