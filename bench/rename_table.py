"""The rename table of cited files (:mod:`mnemon_ls.citations.renames`) on a large real repository: how long its
build takes, on the wake path when a cited file is missing, against git's own rename search of the same history.

Usage::

    python bench/rename_table.py [--files 3000] [--commits 220] [--runs 15]

Set-up (not timed), in a temp directory: a git repository of ``--files`` Python files (``pkg_<k>/mod_<n>.py``, 40
lines each, one commit), then ``--commits`` commits made with the real git, each renaming 3 files (``git mv``, one of
them with an edit) and editing 2 others; then one ``git mv`` staged. Every rename is one git's ``-M`` finds.

Timed, interleaved (one sample of each per round), wall milliseconds, median and max of ``--runs``:

1. **the whole table**: ``renames._table`` built cold (the per-repository cache cleared) with no time budget, the
   repository opened by pygit2 as ``renamed_to`` does: HEAD's tree against the index, then each of the last
   :data:`~mnemon_ls.citations.renames.HISTORY` first-parent commits against its parent, ``find_similar`` on each
   (the build before :data:`~mnemon_ls.citations.renames.BUDGET`);
2. **the bounded table**: the same with :data:`~mnemon_ls.citations.renames.BUDGET` (100 ms), and how many commits
   it searched before it was cut short;
3. **the floor**: ``git log --first-parent -n HISTORY --name-status -M --diff-filter=R --format=%H`` on the same
   repository, a process (what a person would run to see the same renames);

and the ratio of the medians. Results: ``bench/results/rename_table.md`` (with the 1-minute load average before
and after). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from mnemon_ls.citations import renames  # noqa: E402

BOUNDED = renames.BUDGET
WHOLE = renames.Budget(seconds=float("inf"), commits=renames.HISTORY)

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b"}


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True,
                          env=ENV).stdout


def body(n: int, edit: int = 0) -> str:
    return "".join(f"def handler_{n}_{i}(request):\n    return {i + edit} * request.size\n" for i in range(20))


def make_repo(path: Path, files: int, commits: int) -> int:
    """The repository of the module doc; returns how many renames its history holds."""
    path.mkdir(parents=True)
    names = []
    for n in range(files):
        rel = f"pkg_{n // 100:03d}/mod_{n:05d}.py"
        (path / rel).parent.mkdir(exist_ok=True)
        (path / rel).write_text(body(n))
        names.append(rel)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "files")
    renamed = 0
    for c in range(commits):
        for k in range(3):
            index = (c * 7 + k * 991) % files
            old = names[index]
            new = f"pkg_{index // 100:03d}/moved_{c:04d}_{k}.py"
            git(path, "mv", old, new)
            if k == 0:
                with open(path / new, "a") as fh:
                    fh.write(f"# renamed in commit {c}\n")
            names[index] = new
            renamed += 1
        for k in range(2):
            index = (c * 13 + k * 577 + 1) % files
            with open(path / names[index], "a") as fh:
                fh.write(f"# edit {c}.{k}\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {c}")
    git(path, "mv", names[0], "pkg_000/staged.py")
    return renamed + 1


def time_table(path: Path, budget: renames.Budget) -> tuple[float, int, int | None]:
    """Wall ms of one cold build under ``budget``, the renames it holds and where it was cut short."""
    import pygit2

    renames.clear()
    renames.BUDGET = budget
    try:
        start = time.perf_counter_ns()
        repo = pygit2.Repository(str(path))
        table, cut = renames._table(repo, os.path.realpath(repo.workdir))
        return (time.perf_counter_ns() - start) / 1e6, len(table), cut
    finally:
        renames.BUDGET = BOUNDED


def time_floor(path: Path) -> tuple[float, int]:
    start = time.perf_counter_ns()
    out = subprocess.run(["git", "-C", str(path), "log", "--first-parent", f"-n{renames.HISTORY}", "--name-status",
                          "-M", "--diff-filter=R", "--format=%H"], check=True, capture_output=True, text=True).stdout
    return (time.perf_counter_ns() - start) / 1e6, sum(1 for line in out.splitlines() if line.startswith("R"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--commits", type=int, default=220)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", default=str(HERE / "results" / "rename_table.md"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rename-bench-") as tmp:
        path = Path(tmp) / "repo"
        built = time.monotonic()
        renamed = make_repo(path, args.files, args.commits)
        built = time.monotonic() - built
        load_before = os.getloadavg()[0]
        time_table(path, WHOLE)
        time_floor(path)  # warm-up: the object files in the page cache for both
        whole_ms, bounded_ms, floor_ms, sizes, cuts, found = [], [], [], set(), [], set()
        for _ in range(args.runs):
            ms, size, _cut = time_table(path, WHOLE)
            whole_ms.append(ms)
            sizes.add(size)
            ms, _size, cut = time_table(path, BOUNDED)
            bounded_ms.append(ms)
            cuts.append(cut if cut is not None else renames.HISTORY)
            ms, count = time_floor(path)
            floor_ms.append(ms)
            found.add(count)
        load_after = os.getloadavg()[0]
    whole, bounded, floor = (statistics.median(v) for v in (whole_ms, bounded_ms, floor_ms))
    lines = [
        "# Rename table build (citations/renames.py)",
        "",
        f"`python bench/rename_table.py --files {args.files} --commits {args.commits} --runs {args.runs}`; "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; repository built in {built:.0f} s "
        f"({args.files} files, {args.commits + 1} commits, {renamed} renames of which one staged; "
        f"HISTORY = {renames.HISTORY} commits).",
        f"1-minute load average: {load_before:.2f} before, {load_after:.2f} after.",
        "",
        "| what | median ms | max ms | renames found | commits searched |",
        "|---|---|---|---|---|",
        f"| `renames._table` cold, whole history (no time budget: the build before BUDGET) | {whole:.1f} | "
        f"{max(whole_ms):.1f} | {', '.join(map(str, sorted(sizes)))} | {renames.HISTORY} |",
        f"| `renames._table` cold, BUDGET ({BOUNDED.seconds * 1000:.0f} ms) | {bounded:.1f} | {max(bounded_ms):.1f} | "
        f"- | median {statistics.median(cuts):.0f} (min {min(cuts)}, max {max(cuts)}) |",
        f"| floor: `git log --first-parent -n{renames.HISTORY} --name-status -M --diff-filter=R` (a process) | "
        f"{floor:.1f} | {max(floor_ms):.1f} | {', '.join(map(str, sorted(found)))} (committed only) | "
        f"{renames.HISTORY} |",
        "",
        f"Ratio of the medians, whole table / floor: **{whole / floor:.2f}x**; bounded table / floor: "
        f"**{bounded / floor:.2f}x**.",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
