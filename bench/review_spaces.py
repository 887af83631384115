"""``citations.review`` with a large Memory Space (issue 24 item 6): what listing the space items due for review
costs, against the same review with that space not scanned.

Usage::

    python bench/review_spaces.py [--items 100000] [--rounds 30]

Set-up (not timed), in a temp directory: a git repository whose storage root is ``<repo>/.mnemon``
(``storageScope: workspace``) with 3 MEMORY.md entries, 1 record and one active native Memory Space of
``--items`` items from ``bench/bench_spaces.py``'s generator (created over one year, so about three quarters are
older than ``reviewAfterDays`` 90), imported by ``NativeProvider.import_items``.

Timed, interleaved (one sample of each per round, the order alternating), in this process (a long-lived host, as
the language server runs it), CPU time (``time.process_time``) and wall time of:

1. ``citations.review`` with the space active: the space's due items found by one SQL query on the time columns
   (at most ``SPACE_ITEMS_PER_SPACE`` = 200 listed per space);
2. the same with the space deactivated (not scanned): the baseline, everything else equal;
3. the space's query alone (``SpacesService.review_candidates``).

Results: ``bench/results/review_spaces.json`` and ``.md``: medians (p95) in ms, the ratio 1/2, the 1-minute load
average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_spaces import Generator  # noqa: E402

from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.ops.execute import call, parse  # noqa: E402
from mnemon_ls.ops.registry import operations  # noqa: E402
from mnemon_ls.settings import load_settings  # noqa: E402


def run(host: WorkspaceHost, op: str, **raw):
    operation = operations()[op]
    return call(operation, host, parse(operation, raw), surface="lsp")


def timed(body) -> tuple[float, float]:
    cpu, wall = time.process_time_ns(), time.perf_counter_ns()
    body()
    return (time.process_time_ns() - cpu) / 1e6, (time.perf_counter_ns() - wall) / 1e6


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 3),
            "p95": round(ordered[max(0, -(-95 * len(ordered) // 100) - 1)], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemon-bench-review-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        host = WorkspaceHost(repo, load_settings({"storageScope": "workspace"}))
        for n in range(3):
            run(host, "runtime.mutate", action="add", target="memory", content=f"entry {n} of the bench")
        run(host, "records.create", record_scope="project", type="fact", title="ci", content="ci runs on push")
        space = run(host, "spaces.create", name="Big", description="bench", active=True)["id"]
        record = next(r for r in host.spaces.state().all if r.id == space)
        gen = Generator()
        gen.base = datetime.now(timezone.utc) - timedelta(days=365)
        host.spaces.provider(record).import_items([gen.item(i) for i in range(args.items)])
        days = host.settings.review_after_days
        before = (host.now() - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
        listed = sum(1 for m in run(host, "citations.review")["memories"] if m["source"] == "spaces")
        load_before = os.getloadavg()[0]
        samples: dict[str, list[tuple[float, float]]] = {"scanned": [], "notScanned": [], "query": []}
        for n in range(args.rounds):
            order = ["scanned", "notScanned"] if n % 2 == 0 else ["notScanned", "scanned"]
            for name in order:
                run(host, "spaces.activate" if name == "scanned" else "spaces.deactivate", spaceId=space)
                samples[name].append(timed(lambda: run(host, "citations.review")))
            run(host, "spaces.activate", spaceId=space)
            samples["query"].append(timed(lambda: host.spaces.review_candidates(before, 200)))
        load_after = os.getloadavg()[0]
        host.close()
    result = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": platform.python_version(),
              "cores": os.cpu_count(), "items": args.items, "rounds": args.rounds, "spaceItemsListed": listed,
              "loadBefore": round(load_before, 2), "loadAfter": round(load_after, 2),
              "commit": subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True).stdout.strip()}
    for name, values in samples.items():
        result[name] = {"cpu": summary([c for c, _ in values]), "wall": summary([w for _, w in values])}
    result["ratio"] = {kind: round(result["scanned"][kind]["median"] / result["notScanned"][kind]["median"], 3)
                       for kind in ("cpu", "wall")}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "review_spaces.json").write_text(json.dumps(result, indent=2) + "\n")
    rows = [("`citations.review`, space scanned", "scanned"), ("`citations.review`, space not scanned", "notScanned"),
            ("the space's query alone (`review_candidates`, limit 200)", "query")]
    md = [f"# citations.review with a {args.items:,}-item Memory Space (issue 24 item 6)", "",
          f"`python bench/review_spaces.py` (module doc) at {result['commit']}, {result['date']}, Python "
          f"{result['python']}, {result['cores']} cores, load {result['loadBefore']} -> {result['loadAfter']}, "
          f"{args.rounds} rounds; {listed} space items listed (the cap is 200). Medians (p95) in ms.", "",
          "| measurement | CPU | wall |", "|---|---:|---:|"]
    for label, name in rows:
        r = result[name]
        md.append(f"| {label} | {r['cpu']['median']} ({r['cpu']['p95']}) | {r['wall']['median']} ({r['wall']['p95']}) |")
    md += ["", f"Ratio scanned / not scanned (medians): CPU **{result['ratio']['cpu']}x**, wall {result['ratio']['wall']}x."]
    (args.out / "review_spaces.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
