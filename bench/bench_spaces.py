"""Memory Spaces benchmark: embedded native spaces of 1,000 / 10,000 / 100,000 generated insights.

Usage: ``python bench/bench_spaces.py [--sizes 1000,10000,100000] [--queries 200] [--remembers 200]
[--out bench/results/spaces.md]``.

Each space is built in a fresh temporary root through ``NativeProvider.import_items`` (batches of 1,000,
with the automatic entity/causal edges and the temporal backbone), half English and half Chinese text:
English words drawn Zipf-like from a 4,000-word synthetic vocabulary, Chinese from 1,500 Han characters,
identifiers (CamelCase, snake_case, file names) as entities, created times spread over one year. Then:

- recall: ``SpacesService.recall`` (the full path: registry, federation, policy, branch filter) over
  ``--queries`` queries (1/3 English words, 1/3 Chinese phrases cut from stored items, 1/3 identifiers),
  median and p95 in ms, plus the provider-only ``search`` p95;
- remember: ``SpacesService.remember`` of ``--remembers`` new items (each a durable commit), median/p95;
- index rebuild: ``SpacesService.reindex`` (delete + rebuild the side index from ``mnemon.db``);
- disk: ``mnemon.db`` (+WAL) and ``.mnemon-ls-index.db`` (+WAL) in MiB.

Numbers depend on the machine; results are written as Markdown to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemon_ls.spaces import SpacesService  # noqa: E402
from mnemon_ls.spaces.model import rfc3339  # noqa: E402
from mnemon_ls.spaces.providers.base import ExportItem  # noqa: E402
from mnemon_ls.spaces.providers.native import NativeProvider  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ren", "to", "sa", "vek", "dor", "pli", "zan", "qu", "el", "ori", "tus", "bra",
             "nex", "cal", "fi", "mon", "gra", "sel", "ux", "tor", "vin", "ha", "pe", "ri", "dun", "col", "ast"]
HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 20000, 13)][:1500]
IDENT_PARTS = ["User", "Config", "Cache", "Session", "Token", "Parser", "Index", "Store", "Queue", "Worker",
               "Router", "Schema", "Branch", "Commit", "Memory", "Space", "Graph", "Edge", "Batch", "Lock"]
CATEGORIES = ["preference", "decision", "fact", "insight", "context", "general"]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words: list[str] = []
    seen = set()
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def identifiers(rng: random.Random, size: int = 300) -> list[str]:
    out = set()
    while len(out) < size:
        a, b = rng.sample(IDENT_PARTS, 2)
        form = rng.randint(0, 2)
        out.add(f"{a}{b}" if form == 0 else (f"{a.lower()}_{b.lower()}" if form == 1 else f"{a.lower()}_{b.lower()}.py"))
    return sorted(out)


class Generator:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.weights = [1 / (rank + 1) ** 0.9 for rank in range(len(self.words))]
        self.idents = identifiers(self.rng)
        self.base = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def english(self) -> str:
        words = self.rng.choices(self.words, self.weights, k=self.rng.randint(10, 28))
        return " ".join(words).capitalize() + "."

    def chinese(self) -> str:
        return "".join(self.rng.choice(HAN) for _ in range(self.rng.randint(18, 60))) + "。"

    def item(self, index: int) -> ExportItem:
        rng = self.rng
        ident = rng.choice(self.idents)
        text = (self.english() if index % 2 == 0 else self.chinese()) + f" See {ident}."
        created = self.base + timedelta(seconds=rng.randint(0, 365 * 86400))
        return ExportItem(f"gen-{index}", text, rng.choice(CATEGORIES), rng.randint(1, 5),
                          rng.sample(["arch", "ops", "ui", "db", "perf", "team"], rng.randint(0, 2)), [ident],
                          rng.choice(["user", "agent"]), rfc3339(created))

    def queries(self, count: int, stored: list[str]) -> list[str]:
        rng = self.rng
        out = []
        for index in range(count):
            kind = index % 3
            if kind == 0:
                out.append(" ".join(rng.sample(self.words[20:2000], rng.randint(2, 4))))
            elif kind == 1:
                text = rng.choice([s for s in stored if not s[0].isascii()] or stored)
                start = rng.randint(0, max(0, len(text) - 12))
                out.append(text[start:start + rng.randint(4, 8)])
            else:
                out.append(rng.choice(self.idents))
        return out


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def size_mib(*paths: Path) -> float:
    total = 0
    for path in paths:
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{path}{suffix}").st_size
            except FileNotFoundError:
                pass
    return total / (1024 * 1024)


def run_size(size: int, queries: int, remembers: int) -> dict:
    gen = Generator(seed=size)
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-spaces-{size}-"))
    try:
        service = SpacesService(workdir)
        space = service.create_space("Bench", "Generated insights for the benchmark", active=True)
        provider = service.provider(space.record)
        assert isinstance(provider, NativeProvider)
        items = [gen.item(i) for i in range(size)]
        started = time.perf_counter()
        for start in range(0, size, 1000):
            provider.import_items(items[start:start + 1000], batch=1000)
        build = time.perf_counter() - started
        stored = [it.content for it in gen.rng.sample(items, min(2000, size))]
        qs = gen.queries(queries, stored)
        service.recall(qs[0])  # warm: connections, caches
        recall_ms, search_ms, hits = [], [], 0
        for query in qs:
            t0 = time.perf_counter()
            result = service.recall(query, limit=10)
            recall_ms.append((time.perf_counter() - t0) * 1000)
            hits += bool(result.results)
            t0 = time.perf_counter()
            provider.search(query, limit=30)
            search_ms.append((time.perf_counter() - t0) * 1000)
        remember_ms = []
        for index in range(remembers):
            text = (gen.english() if index % 2 == 0 else gen.chinese()) + f" Bench note {index}."
            t0 = time.perf_counter()
            receipt = service.remember(text, tags=["bench"], entities=[gen.rng.choice(gen.idents)])
            remember_ms.append((time.perf_counter() - t0) * 1000)
            assert receipt.status == "committed", receipt.to_dict()
        rebuild = service.reindex(space.record.id)
        db = workdir / "data" / space.record.id / "mnemon.db"
        with sqlite3.connect(db) as conn:
            edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
        result = {
            "size": size, "build_s": build, "edges": edges,
            "recall_median": statistics.median(recall_ms), "recall_p95": percentile(recall_ms, 95),
            "search_p95": percentile(search_ms, 95), "hit_rate": hits / len(qs),
            "remember_median": statistics.median(remember_ms), "remember_p95": percentile(remember_ms, 95),
            "rebuild_s": rebuild["seconds"], "db_mib": size_mib(db),
            "index_mib": size_mib(db.parent / ".mnemon-ls-index.db"),
        }
        service.close()
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=200)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "spaces.md"))
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        row = run_size(size, args.queries, args.remembers)
        rows.append(row)
        print(f"{size:>7}: build {row['build_s']:.1f} s, recall median {row['recall_median']:.2f} ms "
              f"p95 {row['recall_p95']:.2f} ms (provider search p95 {row['search_p95']:.2f} ms, hits "
              f"{row['hit_rate']:.0%}), remember median {row['remember_median']:.2f} ms p95 "
              f"{row['remember_p95']:.2f} ms, rebuild {row['rebuild_s']:.2f} s, mnemon.db {row['db_mib']:.1f} MiB, "
              f"index {row['index_mib']:.1f} MiB, edges {row['edges']}", flush=True)
    lines = [
        "# Memory Spaces benchmark (embedded native provider)", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}. Command: `python bench/bench_spaces.py --sizes {args.sizes} "
        f"--queries {args.queries} --remembers {args.remembers}`.", "",
        "Generated spaces (half English, half Chinese; identifiers as entities; one year of created times), "
        "built with `import_items`. Recall = `SpacesService.recall` (registry, federation, strict-v1 policy, "
        "branch filter, batched access bookkeeping incl. its periodic flush); remember = `SpacesService.remember` (durable commit, "
        "synchronous=FULL, automatic edges, side index update).", "",
        "| insights | build (s) | edges | recall median (ms) | recall p95 (ms) | search p95 (ms) | hit rate "
        "| remember median (ms) | remember p95 (ms) | index rebuild (s) | mnemon.db (MiB) | index (MiB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['size']:,} | {r['build_s']:.1f} | {r['edges']:,} | {r['recall_median']:.2f} | "
                     f"{r['recall_p95']:.2f} | {r['search_p95']:.2f} | {r['hit_rate']:.0%} | "
                     f"{r['remember_median']:.2f} | {r['remember_p95']:.2f} | {r['rebuild_s']:.2f} | "
                     f"{r['db_mib']:.1f} | {r['index_mib']:.1f} |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
