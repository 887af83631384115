"""MEMORY.md overflow archival benchmark (issue 9): an add that overflows MEMORY.md and archives exactly 40
entries, into an embedded Memory Space of 10,000 items and into the local archive.

Usage: ``python bench/maintenance_runtime.py [--samples 30] [--items 10000] [--dir DIR]``. Plain Python,
everything in a throw-away temp directory; prints medians and nearest-rank p95 in milliseconds.

Set-up (not timed): a git-free workspace root (``storageScope custom``) whose MEMORY.md limit is 13,095
bytes holds 90 normal + 40 low entries of 96 bytes (12,996 bytes); the 97th-byte add overflows and the
greedy packing (budget floor(0.7 x 13095) - 96 - 4 = 9,066) keeps the 90 normal ones and archives the
40 low ones. Before each sample the store is reset to that state (memories.json, its last-good copy and
MEMORY.md rewritten to the same bytes a commit would leave).

Timed, interleaved per sample through ``WorkspaceHost.mutate_runtime`` (the operation every surface calls):

- ``space``: the overflowing add with one active native space of ``--items`` items (``SpacesService``
  kept warm, as in the language server): plan, packing, 40 ``remember`` writes (each a durable SQLite
  commit), their evidence, the lineage append, the fenced compaction commit;
- ``local``: the same with no space: the local archive (``runtime/archived/``) and lineage, then the commit;
- floors in the same run: ``plain add`` (an add that fits: one durable commit), ``40 in one batch`` (the
  40 provider writes alone, ``SpacesService.remember_many``, into the same space) and ``40 remembers``
  (the same one by one, ``SpacesService.remember``: what archival would cost without the batch).

Ratios: space / (40 in one batch + plain add) is the archival's own overhead (plan, evidence, lineage,
second lock cycle); local / plain add likewise.
Aims (issue 9): space under 150 ms, local under 30 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemon_ls import fsio  # noqa: E402
from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.runtime import ops  # noqa: E402
from mnemon_ls.runtime.model import Entry, projection_bytes, serialize_store  # noqa: E402
from mnemon_ls.settings import load_settings  # noqa: E402
from mnemon_ls.spaces.model import rfc3339, utc_now  # noqa: E402
from mnemon_ls.spaces.providers.base import ExportItem  # noqa: E402

LIMIT = 13_095
SIZE = 96
NORMAL, LOW = 90, 40
STAMP = "2026-11-01T08:00:00.000Z"


def entry_text(label: str, n: int) -> str:
    text = f"{label} {n:05d}: the build cache for service {n} lives in .cache/svc-{n}; clear it after upgrades"
    return (text + " " + "x" * SIZE)[:SIZE]


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 1)) - 1))]


class Workspace:
    """One root and its host; ``reset(round)`` writes the full-store state for sample ``round``."""

    def __init__(self, base: Path, name: str) -> None:
        self.root = base / name
        self.root.mkdir()
        settings = load_settings({"storageScope": "custom", "dataDir": str(self.root), "runtimeUserScope": "storage",
                                  "runtimeMemory": {"memoryLimitBytes": LIMIT}})
        self.host = WorkspaceHost(None, settings)
        self.store = self.host.runtime.memory_store

    def reset(self, sample: int) -> str:
        entries = [Entry(entry_text("Normal", i), STAMP, STAMP, "memory", "normal") for i in range(NORMAL)]
        entries += [Entry(entry_text(f"Low{sample}", i), STAMP, STAMP, "memory", "low") for i in range(LOW)]
        body = serialize_store(entries)
        runtime = self.root / "runtime"
        fsio.ensure_dir(runtime)
        fsio.write_files_atomically([(runtime / "MEMORY.md", projection_bytes(entries, "memory")),
                                     (runtime / "USER.md", b""), (self.store.last_good_path, body),
                                     (self.store.memories_path, body)])
        return entry_text(f"Pending{sample}", 0)


def build_space(host: WorkspaceHost, items: int) -> str:
    record = host.spaces.create_space("Project", "Build and service facts", active=True).record
    provider = host.spaces.provider(record)
    rng = random.Random(7)
    words = ["cache", "deploy", "service", "token", "queue", "worker", "index", "parser", "retry", "build"]
    now = rfc3339(utc_now())
    batch = []
    for i in range(items):
        text = " ".join(rng.choice(words) for _ in range(12)) + f" item {i}"
        batch.append(ExportItem(f"gen-{i}", text, "fact", rng.randint(1, 5), [], [], "user", now))
        if len(batch) == 1000:
            provider.import_items(batch, batch=1000)
            batch = []
    if batch:
        provider.import_items(batch, batch=1000)
    return record.id


def timed(fn) -> float:
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--dir", default=None, help="create the temp roots under DIR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemon-bench-maint-", dir=args.dir) as tmp:
        base = Path(tmp)
        spaced, local = Workspace(base, "space"), Workspace(base, "local")
        t0 = time.perf_counter()
        space_id = build_space(spaced.host, args.items)
        print(f"built a native space of {spaced.host.spaces.provider(spaced.host.spaces.state().find(space_id)).count()} "
              f"items in {time.perf_counter() - t0:.1f} s; load {os.getloadavg()[0]:.2f}")
        results: dict[str, list[float]] = {"space": [], "local": [], "plain add": [], "40 remembers": [],
                                           "40 in one batch": []}
        for sample in range(args.samples + 2):  # the first two are warm-up
            row = {}
            for name, ws in (("space", spaced), ("local", local)):
                pending = ws.reset(sample)
                request = ops.validate_request("add", "memory", pending)
                receipts = []
                row[name] = timed(lambda: receipts.append(ws.host.mutate_runtime(request)))
                maintenance = receipts[0].detail["maintenance"]
                assert len(maintenance["archived"]) == LOW, len(maintenance["archived"])
                assert maintenance["kind"] == ("mnemon-archive" if name == "space" else "local-archive")
            local.reset(sample)
            small = ops.validate_request("add", "memory", "short fact that fits")
            local.host.runtime.mutate(ops.validate_request("remove", "memory", None, entry_text("Normal", 0)))
            row["plain add"] = timed(lambda: local.host.mutate_runtime(small))
            contents = [entry_text(f"Floor{sample}", i) for i in range(LOW)]
            row["40 remembers"] = timed(lambda: [spaced.host.spaces.remember(
                c, space_id=space_id, category="context", importance=1, source="agent") for c in contents])
            batch = [{"content": entry_text(f"Batch{sample}", i), "category": "context", "importance": 1,
                      "source": "agent"} for i in range(LOW)]
            row["40 in one batch"] = timed(lambda: spaced.host.spaces.remember_many(space_id, batch))
            if sample >= 2:
                for name, value in row.items():
                    results[name].append(value)
        print(f"samples {args.samples}; load after {os.getloadavg()[0]:.2f}")
        print("| case | median ms | p95 ms |")
        print("|---|---|---|")
        medians = {}
        for name, values in results.items():
            medians[name] = statistics.median(values)
            print(f"| {name} | {medians[name]:.1f} | {nearest_rank(values, 0.95):.1f} |")
        print(f"space / (40 in one batch + plain add) = "
              f"{medians['space'] / (medians['40 in one batch'] + medians['plain add']):.2f}")
        print(f"space / (40 remembers one by one + plain add) = "
              f"{medians['space'] / (medians['40 remembers'] + medians['plain add']):.2f}")
        print(f"local / plain add = {medians['local'] / medians['plain add']:.2f}")
        spaced.host.close()
        local.host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
