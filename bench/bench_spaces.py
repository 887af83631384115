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
- disk: ``mnemon.db`` (+WAL) and ``.mnemon-ls-index.db`` (+WAL) in MiB;
- memory (largest size only): a fresh process opens the built root and runs ``--recalls`` recalls
  (default 1,000); resident memory from ``/proc/self/status`` (``VmRSS`` = ``RssAnon`` + ``RssFile``)
  before the first recall, after it and after the last, then ``tracemalloc`` over 200 more recalls
  (growth of the Python heap: a leak would show there). The provider's bound is documented in
  :mod:`mnemon_ls.spaces.providers.native` (``CACHE_KIB``/``INDEX_CACHE_KIB``/``MMAP_BYTES``);
- identifier ranking (largest size only): 15 identifiers such as ``retry_backoff``, each with one exact
  item (importance 1-3, first half of the year) and 8 near-miss decoys (``retry_backoff_ms``,
  ``max_retry_backoff``, ``retry_backoff.default``...; importance 3-5, second half) added to the space; the query is the identifier; a hit is the
  exact item in the top 5 of ``SpacesService.recall``. The peer, in the same run, is a plain FTS5
  ``trigram`` table over the same texts (``MATCH '"<identifier>"' ORDER BY rank LIMIT 5``).

Numbers depend on the machine; results are written as Markdown to ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
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


# --------------------------------------------------------------------------- identifier ranking vs FTS5 trigram

RANKING_IDENTIFIERS = ["retry_backoff", "max_conn", "cache_ttl", "flush_interval", "read_timeout", "batch_size",
                       "lock_wait", "gc_pause", "pool_min", "log_level", "queue_depth", "shard_count",
                       "idle_timeout", "rate_limit", "span_id"]
DECOY_FORMS = ["{}_ms", "{}_max", "max_{}", "{}.default", "{}_sec", "{}_v2", "old_{}", "{}_override"]


def ranking_items(gen: Generator) -> tuple[list[ExportItem], dict[str, str]]:
    """One exact item and len(DECOY_FORMS) decoys per identifier; ``{identifier: exact item's source id}``."""
    rng = random.Random(15)
    items, exact = [], {}
    for number, ident in enumerate(RANKING_IDENTIFIERS):
        for form_index, form in enumerate(["{}", *DECOY_FORMS]):
            name = form.format(ident)
            text = f"{gen.english()[:-1]} Set {name} to {rng.randint(2, 900)} in the service config."
            # the exact identifier was noted once, early and plainly; the longer ones later and as important
            days = rng.randint(0, 180) if form_index == 0 else rng.randint(181, 364)
            importance = rng.randint(1, 3) if form_index == 0 else rng.randint(3, 5)
            created = gen.base + timedelta(days=days, seconds=rng.randint(0, 86399))
            key = f"rank-{number}-{form_index}"
            items.append(ExportItem(key, text, "fact", importance, [], [], "user", rfc3339(created)))
            if form_index == 0:
                exact[ident] = key
    return items, exact


def run_ranking(service: SpacesService, provider: NativeProvider, corpus: list[ExportItem], workdir: Path) -> dict:
    """Top-5 hits of the exact identifier item: ours (full recall path) vs a plain FTS5 trigram table."""
    extra, exact = ranking_items(Generator(seed=15))
    report = provider.import_items(extra, batch=1000)
    ids = {row["source_id"]: row["id"] for row in report["results"]}
    ours = 0
    for ident, key in exact.items():
        top = [r["id"] for r in service.recall(ident, limit=5).results[:5]]
        ours += ids[key] in top
    peer_path = workdir / "trigram-peer.db"
    db = sqlite3.connect(peer_path)
    db.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')")
    texts = [it.content for it in corpus] + [it.content for it in extra]
    db.executemany("INSERT INTO t(rowid, content) VALUES(?, ?)", enumerate(texts, start=1))
    db.commit()
    position = {it.id: len(corpus) + index + 1 for index, it in enumerate(extra)}
    peer = 0
    for ident, key in exact.items():
        rows = [r[0] for r in db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT 5",
                                         ('"' + ident + '"',))]
        peer += position[key] in rows
    db.close()
    return {"queries": len(exact), "ours": ours, "peer": peer}


# --------------------------------------------------------------------------- resident memory


def _memory_status() -> dict[str, float]:
    """``VmRSS``, ``RssAnon``, ``RssFile`` of this process in MiB (``/proc/self/status``)."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024
    return out


def memory_probe(root: Path, queries_file: Path, recalls: int) -> dict:
    """Run in a fresh process (``--memory-probe``): resident memory around ``recalls`` recalls, then the
    Python heap growth over 200 more under ``tracemalloc``."""
    queries = json.loads(queries_file.read_text(encoding="utf-8"))
    before = _memory_status()
    service = SpacesService(root)
    service.recall(queries[0])
    warm = _memory_status()
    for index in range(recalls):
        service.recall(queries[index % len(queries)], limit=10)
    gc.collect()
    after = _memory_status()
    tracemalloc.start()
    start_bytes = tracemalloc.get_traced_memory()[0]
    for index in range(200):
        service.recall(queries[(recalls + index) % len(queries)], limit=10)
    gc.collect()
    heap_growth = (tracemalloc.get_traced_memory()[0] - start_bytes) / 1024
    tracemalloc.stop()
    service.close()
    return {"before": before, "warm": warm, "after": after, "recalls": recalls, "heap_growth_kib": heap_growth}


def run_memory(workdir: Path, queries: list[str], recalls: int) -> dict:
    queries_file = workdir / "memory-queries.json"
    queries_file.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([sys.executable, __file__, "--memory-probe", str(workdir), "--queries-file",
                           str(queries_file), "--recalls", str(recalls)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def run_size(size: int, queries: int, remembers: int, *, extras: bool = False, recalls: int = 1000) -> dict:
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
        ranking = run_ranking(service, provider, items, workdir) if extras else None
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
        if extras:
            result["ranking"] = ranking
            result["memory"] = run_memory(workdir, gen.queries(1000, stored), recalls)
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=200)
    parser.add_argument("--recalls", type=int, default=1000, help="recalls of the memory measurement")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "spaces.md"))
    parser.add_argument("--memory-probe", help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_probe:
        print(json.dumps(memory_probe(Path(args.memory_probe), Path(args.queries_file), args.recalls)))
        return
    rows = []
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        row = run_size(size, args.queries, args.remembers, extras=size == max(sizes), recalls=args.recalls)
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
    largest = rows[-1] if rows and "memory" in rows[-1] else next((r for r in rows if "memory" in r), None)
    if largest is not None:
        mem, rank = largest["memory"], largest["ranking"]
        print(f"memory at {largest['size']:,}: RSS {mem['warm']['VmRSS']:.0f} MiB after the first recall, "
              f"{mem['after']['VmRSS']:.0f} MiB after {mem['recalls']} (anon {mem['after']['RssAnon']:.0f}, file "
              f"{mem['after']['RssFile']:.0f}); Python heap growth over 200 more recalls "
              f"{mem['heap_growth_kib']:.0f} KiB; identifier top-5 hits ours {rank['ours']}/{rank['queries']} vs "
              f"FTS5 trigram {rank['peer']}/{rank['queries']}", flush=True)
        lines += [
            "", f"Resident memory and identifier ranking at {largest['size']:,} insights:", "",
            "| RSS before first recall (MiB) | after 1 recall | after " + f"{mem['recalls']:,}" + " recalls | of which "
            "anonymous | of which file-backed | Python heap growth, 200 more recalls (KiB) | identifier top-5 hits "
            "(ours) | FTS5 trigram peer | ratio ours/peer |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {mem['before']['VmRSS']:.0f} | {mem['warm']['VmRSS']:.0f} | {mem['after']['VmRSS']:.0f} | "
            f"{mem['after']['RssAnon']:.0f} | {mem['after']['RssFile']:.0f} | {mem['heap_growth_kib']:.0f} | "
            f"{rank['ours']}/{rank['queries']} | {rank['peer']}/{rank['queries']} | "
            f"{rank['ours'] / max(1, rank['peer']):.2f} |",
        ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
