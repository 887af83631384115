"""Micro-benchmark for mnemon_ls.gitstate.probe_branch.

Run: ``python bench/bench_gitstate.py [--calls N]``

Builds throw-away repositories in a temp dir with pygit2 (a few commits, a
linked worktree, a stopped rebase written as git writes it), then times
``probe_branch`` with ``time.perf_counter_ns`` and prints median / p95 / max
per scenario in microseconds. Calls are on a warm repository (the OS page
cache holds the files), which is the case the language server lives in.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemon_ls.gitstate import main_worktree_root, probe_branch  # noqa: E402

SIG = pygit2.Signature("Bench", "bench@example.com", 1_700_000_000, 0)


def _commit(repo: pygit2.Repository, n: int) -> pygit2.Oid:
    workdir = Path(repo.workdir)
    (workdir / "file.txt").write_text(f"version {n}\n")
    repo.index.add("file.txt")
    repo.index.write()
    tree = repo.index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return repo.create_commit("HEAD", SIG, SIG, f"commit {n}", tree, parents)


def build(root: Path) -> dict[str, Path]:
    """Create one directory per scenario; returns scenario name -> path to probe."""
    scenarios: dict[str, Path] = {}

    main = pygit2.init_repository(str(root / "branch"), initial_head="main")
    for n in range(5):
        _commit(main, n)
    (root / "branch" / "src" / "pkg").mkdir(parents=True)
    scenarios["branch"] = root / "branch"
    scenarios["branch, subdir"] = root / "branch" / "src" / "pkg"

    detached = pygit2.init_repository(str(root / "detached"), initial_head="main")
    first = _commit(detached, 0)
    _commit(detached, 1)
    detached.set_head(first)
    scenarios["detached"] = root / "detached"

    rebase = pygit2.init_repository(str(root / "rebase"), initial_head="main")
    onto = _commit(rebase, 0)
    orig = _commit(rebase, 1)
    rebase.set_head(onto)
    state = Path(rebase.path) / "rebase-merge"
    state.mkdir()
    (state / "head-name").write_text("refs/heads/topic\n")
    (state / "onto").write_text(f"{onto}\n")
    (state / "orig-head").write_text(f"{orig}\n")
    (state / "interactive").write_text("")
    scenarios["rebase in progress"] = root / "rebase"

    main.add_worktree("wt", str(root / "worktree"), main.branches.local.create("wt-branch", main.head.peel(pygit2.Commit)))
    scenarios["linked worktree"] = root / "worktree"

    (root / "plain" / "a" / "b").mkdir(parents=True)
    scenarios["not a repo"] = root / "plain" / "a" / "b"
    return scenarios


def measure(fn, arg, calls: int) -> list[int]:
    for _ in range(50):  # warm-up
        fn(arg)
    samples = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        start = clock()
        fn(arg)
        samples.append(clock() - start)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-gitstate-") as tmp:
        scenarios = build(Path(tmp))
        print(f"pygit2 {pygit2.__version__} / libgit2 {pygit2.LIBGIT2_VERSION} / Python {sys.version.split()[0]}")
        print(f"{args.calls} calls each, microseconds\n")
        print(f"{'function':<20} {'scenario':<20} {'result':<36} {'median':>8} {'p95':>8} {'max':>8}")
        rows = [(probe_branch, name, path) for name, path in scenarios.items()]
        rows.append((main_worktree_root, "linked worktree", scenarios["linked worktree"]))
        for fn, name, path in rows:
            samples = sorted(measure(fn, path, args.calls))
            result = fn(path)
            shown = result.describe() if hasattr(result, "describe") else str(Path(result).name if result else None)
            median = statistics.median(samples) / 1000
            p95 = samples[int(len(samples) * 0.95) - 1] / 1000
            worst = samples[-1] / 1000
            print(f"{fn.__name__:<20} {name:<20} {shown[:36]:<36} {median:8.1f} {p95:8.1f} {worst:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
