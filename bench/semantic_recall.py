"""Semantic (hybrid keyword + vector) recall benchmark (issue 11). Needs ``pip install -e '.[semantic]'``.

Usage: ``python bench/semantic_recall.py [--distractors 1000] [--sizes 10000,100000] [--queries 200]
[--remembers 100] [--out bench/results/semantic.md]``; ``--vector-sizes 10000,100000`` runs only the vector
side (item 5 below) and prints its table.

1. **Quality** on tests/fixtures/semantic_paraphrases.json (100 facts: 30 English, 10 code identifiers,
   20 Chinese, 20 Japanese, 20 Korean) stored in one space with ``--distractors`` generated items
   (bench_spaces.Generator: synthetic English-like and Chinese text), every item embedded with the bundled
   model. 200 labelled queries: the 100 paraphrases (no indexed keyword shared with the answer; checked by
   tests/test_semantic.py) and the 100 exact queries (an identifier or phrase of the answer). hit@5 and MRR
   (rank within the recall results, strict-v1 policy, limit 10; a miss counts 0) for keyword-only
   (``SpacesService`` without the engine) and hybrid over the same files; per language.
   Embedding throughput = items / wall seconds of the background worker (one thread), and per CPU second.
2. **Latency** at each ``--sizes``: a space built with ``import_items``; its vectors are written straight
   into the vector index, cycling the real vectors of part 1 with Gaussian noise (sigma 0.02, renormalised)
   because embedding 100,000 items takes longer than this run (recall cost depends on the matrix size, not
   on which vectors are in it). ``--queries`` recalls (the paraphrase and exact queries, cycled) keyword-only
   and hybrid, interleaved; median / p95 ms and the ratio hybrid / keyword. Hybrid includes embedding the
   query.
3. **Resident memory** with the largest size: a fresh process opens the root and runs 200 hybrid recalls;
   ``VmRSS`` after, against a fresh keyword-only process on the same root (the peer).
4. **Remember and recall while embedding runs** (the smallest size): all vectors dropped, the engine
   starts re-embedding in the background; ``--remembers`` remembers and as many recalls timed meanwhile,
   against the same operations with the engine idle.

5. **Vector side alone** (``--vector-sizes``): a fresh process per size loads the model and ``size`` vectors
   into the in-memory matrix; CPU ms of embedding the query and of the matrix search, and ``VmRSS`` at each
   step. Cheap enough to run at 100,000 on a loaded machine (no 100,000-item ``mnemon.db`` to build).

The machine is shared: absolute numbers are inflated by other load; the ratios are the comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_spaces import Generator, percentile  # noqa: E402

from mnemon_ls.semantic import SemanticConfig, SemanticEngine  # noqa: E402
from mnemon_ls.semantic.vectors import VECTOR_FILE, VectorStore  # noqa: E402
from mnemon_ls.spaces import SpacesService  # noqa: E402
from mnemon_ls.spaces.index import content_hash  # noqa: E402

FACTS = json.loads((HERE.parent / "tests" / "fixtures" / "semantic_paraphrases.json").read_text("utf-8"))


def _engine() -> SemanticEngine:
    return SemanticEngine(SemanticConfig(enabled=True), env={})


def _rss_mib(field: str = "VmRSS") -> float:
    """``field`` of /proc/self/status (``VmRSS``, ``RssAnon``, ``RssFile``) in MiB."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _rank(service: SpacesService, query: str, answer: str) -> int | None:
    results = service.recall(query, limit=10).to_dict()["results"]
    return next((i for i, r in enumerate(results) if r["content"] == answer), None)


def quality(distractors: int) -> tuple[dict, Path, str, object]:
    root = Path(tempfile.mkdtemp(prefix="bench-semantic-q-"))
    engine = _engine()
    service = SpacesService(root, semantic=engine)
    space_id = service.create_space("facts", "labelled facts", active=True).to_dict()["id"]
    provider = service.provider(service.state().all[0])
    gen = Generator(seed=11)
    provider.import_items([gen.item(i) for i in range(distractors)], batch=1000)
    for fact in FACTS:
        service.remember(fact["text"], space_id=space_id)
    engine.embedder()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    provider.semantic.remembered([], sweep=True)
    engine.wait_idle(7200)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    embedded = provider.semantic.status()["embedded"]
    keyword = SpacesService(root)
    keyword.recall("warm up")
    table: dict = {}
    for fact in FACTS:
        for kind in ("paraphrase", "exact"):
            for name, svc in (("keyword", keyword), ("hybrid", service)):
                rank = _rank(svc, fact[kind], fact["text"])
                for group in (kind, f"{kind}:{fact['lang']}"):
                    cell = table.setdefault(group, {}).setdefault(name, {"n": 0, "hit5": 0, "rr": 0.0})
                    cell["n"] += 1
                    cell["hit5"] += rank is not None and rank < 5
                    cell["rr"] += 1 / (rank + 1) if rank is not None else 0.0
    lost = sum(1 for fact in FACTS if (_rank(keyword, fact["exact"], fact["text"]) or 99) <
               (_rank(service, fact["exact"], fact["text"]) or 99))
    store = provider.semantic._vectors.store
    keyword.close()
    return ({"table": table, "embedded": embedded, "embed_wall_s": wall, "embed_cpu_s": cpu,
             "exact_lost_or_lowered": lost, "items": distractors + len(FACTS)}, root, space_id,
            (store._matrix[: store.count()].copy(), engine))


def build(size: int, base_vectors) -> tuple[Path, str]:
    import numpy as np

    root = Path(tempfile.mkdtemp(prefix=f"bench-semantic-{size}-"))
    service = SpacesService(root)
    space_id = service.create_space("bench", "generated", active=True).to_dict()["id"]
    provider = service.provider(service.state().all[0])
    gen = Generator(seed=size)
    items = [gen.item(i) for i in range(size - len(FACTS))]
    for start in range(0, len(items), 1000):
        provider.import_items(items[start:start + 1000], batch=1000)
    for fact in FACTS:
        service.remember(fact["text"], space_id=space_id)
    service.close()
    rng = np.random.default_rng(size)
    store = VectorStore(root / "data" / space_id / VECTOR_FILE, "multilingual-e5-small-q4", 384)
    import sqlite3

    db = sqlite3.connect(root / "data" / space_id / "mnemon.db")
    rows = db.execute("SELECT id, content FROM insights WHERE deleted_at IS NULL").fetchall()
    db.close()
    batch = []
    for index, (key, content) in enumerate(rows):
        vec = base_vectors[index % len(base_vectors)] + rng.normal(0, 0.02, 384).astype("float32")
        batch.append((key, content_hash(content), vec / np.linalg.norm(vec)))
        if len(batch) == 5000:
            store.put(batch)
            batch = []
    store.put(batch)
    store.close()
    return root, space_id


def latency(root: Path, queries: int) -> dict:
    engine = _engine()
    hybrid = SpacesService(root, semantic=engine)
    keyword = SpacesService(root)
    qs = [f[k] for f in FACTS for k in ("paraphrase", "exact")]
    hybrid.recall(qs[0])
    keyword.recall(qs[0])
    engine.wait_idle(600)
    times = {"keyword": [], "hybrid": []}
    cpu = {"keyword": [], "hybrid": []}
    embed = []
    embedder = engine.embedder()
    for index in range(queries):
        query = qs[index % len(qs)]
        for name, svc in (("keyword", keyword), ("hybrid", hybrid)):
            c0, t0 = time.process_time(), time.perf_counter()
            svc.recall(query, limit=10)
            times[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
        c0 = time.process_time()
        embedder.embed_query(query)
        embed.append((time.process_time() - c0) * 1000)
    engine.stop()
    hybrid.close()
    keyword.close()
    out = {name: {"median": statistics.median(v), "p95": percentile(v, 95),
                  "cpu_median": statistics.median(cpu[name]), "cpu_p95": percentile(cpu[name], 95)}
           for name, v in times.items()}
    out["embed_cpu_median"] = statistics.median(embed)
    return out


def memory_probe(root: Path, hybrid: bool) -> dict:
    before = _rss_mib()
    engine = _engine() if hybrid else None
    service = SpacesService(root, semantic=engine)
    qs = [f[k] for f in FACTS for k in ("paraphrase", "exact")]
    for index in range(200):
        service.recall(qs[index % len(qs)], limit=10)
    if engine is not None:
        engine.wait_idle(600)
    return {"before": before, "after": _rss_mib()}


def memory(root: Path) -> dict:
    out = {}
    for mode in ("keyword", "hybrid"):
        done = subprocess.run([sys.executable, __file__, "--memory-probe", str(root), "--mode", mode],
                              capture_output=True, text=True, check=True)
        out[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def while_embedding(root: Path, space_id: str, count: int) -> dict:
    gen = Generator(seed=99)
    results = {}
    for phase in ("idle", "embedding"):
        engine = _engine()
        service = SpacesService(root, semantic=engine)
        service.recall("warm up")
        engine.wait_idle(600)
        if phase == "embedding":
            vectors = root / "data" / space_id / VECTOR_FILE
            side = service.provider(service.state().all[0]).semantic
            side.close()
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{vectors}{suffix}")
                except FileNotFoundError:
                    pass
            service.recall("warm up")  # re-attaches: the sweep of every item starts
        remember, recall = [], []
        qs = [f["paraphrase"] for f in FACTS]
        for index in range(count):
            t0 = time.perf_counter()
            service.remember(gen.english() + f" {phase} {index}", space_id=space_id)
            remember.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            service.recall(qs[index % len(qs)], limit=10)
            recall.append((time.perf_counter() - t0) * 1000)
        progress = engine.progress()
        engine.stop()
        service.close()
        results[phase] = {"remember": {"median": statistics.median(remember), "p95": percentile(remember, 95)},
                          "recall": {"median": statistics.median(recall), "p95": percentile(recall, 95)},
                          "embedded_meanwhile": sum(s["embedded"] for s in progress["spaces"].values())}
    return results


def vector_probe(size: int, queries: int) -> dict:
    """Run in a fresh process (``--vector-probe``): the vector side alone at ``size`` items: the model loaded,
    ``size`` vectors (real query-set vectors cycled with noise) stored and loaded into the matrix; CPU ms of
    the query embedding and of :meth:`VectorStore.search` (top 384, the candidate pool of limit 10 and
    more), and ``VmRSS`` before the model, after it, after the matrix."""
    import numpy as np

    before = _rss_mib()
    engine = _engine()
    embedder = engine.embedder()
    with_model = _rss_mib()
    base = np.concatenate([embedder.embed_passages([f["text"] for f in FACTS[i:i + 16]])
                           for i in range(0, len(FACTS), 16)])  # batches of 16, as the worker embeds
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-semantic-vec-{size}-"))
    store = VectorStore(workdir / VECTOR_FILE, embedder.model_id, embedder.dim)
    rng = np.random.default_rng(size)
    for start in range(0, size, 10000):
        rows = []
        for index in range(start, min(size, start + 10000)):
            vec = base[index % len(base)] + rng.normal(0, 0.02, embedder.dim).astype("float32")
            rows.append((f"id-{index}", "x", vec / np.linalg.norm(vec)))
        store.put(rows)
    store.close()
    del store, rows  # the writer's own matrix: only the reader's is measured
    import gc

    gc.collect()
    reader = VectorStore(workdir / VECTOR_FILE, embedder.model_id, embedder.dim)
    reader.sync()
    loaded = _rss_mib()
    qs = [f[k] for f in FACTS for k in ("paraphrase", "exact")]
    embed, search = [], []
    for index in range(queries):
        c0 = time.process_time()
        qvec = embedder.embed_query(qs[index % len(qs)])
        c1 = time.process_time()
        reader.search(qvec, 384)
        c2 = time.process_time()
        embed.append((c1 - c0) * 1000)
        search.append((c2 - c1) * 1000)
    return {"size": reader.count(), "rss_before": before, "rss_model": with_model, "rss_vectors": loaded,
            "rss_after": _rss_mib(), "anon_after": _rss_mib("RssAnon"), "file_after": _rss_mib("RssFile"),
            "embed_median": statistics.median(embed), "embed_p95": percentile(embed, 95),
            "search_median": statistics.median(search), "search_p95": percentile(search, 95)}


def _fmt(cell: dict) -> str:
    return f"{100 * cell['hit5'] / cell['n']:.0f}% / {cell['rr'] / cell['n']:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--distractors", type=int, default=1000)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=100)
    parser.add_argument("--out", default=str(HERE / "results" / "semantic.md"))
    parser.add_argument("--memory-probe")
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--vector-probe", type=int, help="only the vector side at this many items (fresh process)")
    parser.add_argument("--vector-sizes", help="run --vector-probe for these sizes and print a table, nothing else")
    args = parser.parse_args()
    if args.memory_probe:
        print(json.dumps(memory_probe(Path(args.memory_probe), args.mode == "hybrid")))
        return
    if args.vector_probe:
        print(json.dumps(vector_probe(args.vector_probe, args.queries)))
        return
    if args.vector_sizes:
        print("| vectors | query embedding CPU ms median / p95 | vector search CPU ms median / p95 | VmRSS MiB: "
              "start / model loaded / vectors loaded / after queries (anonymous + file-backed) |\n|---|---|---|---|")
        for size in [int(x) for x in args.vector_sizes.split(",")]:
            done = subprocess.run([sys.executable, __file__, "--vector-probe", str(size), "--queries",
                                   str(args.queries)], capture_output=True, text=True, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"| {r['size']:,} | {r['embed_median']:.1f} / {r['embed_p95']:.1f} | {r['search_median']:.1f} / "
                  f"{r['search_p95']:.1f} | {r['rss_before']:.0f} / {r['rss_model']:.0f} / {r['rss_vectors']:.0f} / "
                  f"{r['rss_after']:.0f} ({r['anon_after']:.0f} + {r['file_after']:.0f}) |", flush=True)
        return
    lines = ["# Semantic recall benchmark", "",
             f"`python bench/semantic_recall.py --distractors {args.distractors} --sizes {args.sizes} "
             f"--queries {args.queries} --remembers {args.remembers}`; {platform.platform()}, "
             f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start (shared machine).", ""]
    q, _qroot, _qspace, (base, qengine) = quality(args.distractors)
    qengine.stop()
    import gc

    gc.collect()
    t = q["table"]
    lines += ["## Quality (hit@5 / MRR, strict-v1, limit 10)", "",
              f"{q['items']} items ({args.distractors} generated distractors + 100 labelled facts).", "",
              "| queries | n | keyword-only | hybrid |", "|---|---|---|---|"]
    for group in ["paraphrase", "exact"] + sorted(k for k in t if ":" in k):
        lines.append(f"| {group} | {t[group]['keyword']['n']} | {_fmt(t[group]['keyword'])} | {_fmt(t[group]['hybrid'])} |")
    lines += ["", f"Exact queries whose answer hybrid ranked lower than keyword-only: {q['exact_lost_or_lowered']}.", "",
              f"Embedding: {q['embedded']} items in {q['embed_wall_s']:.1f} s wall = "
              f"{q['embedded'] / q['embed_wall_s']:.1f} items/s ({q['embedded'] / max(q['embed_cpu_s'], 1e-9):.1f} "
              "items per CPU second; one worker thread).", ""]
    print("\n".join(lines), flush=True)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    lat_lines = ["## Recall latency (ms; full SpacesService.recall; wall, then process CPU)", "",
                 "| items | keyword median / p95 | hybrid median / p95 | p95 ratio | keyword CPU median / p95 | "
                 "hybrid CPU median / p95 | of which query embedding (CPU median) |", "|---|---|---|---|---|---|---|"]
    roots = {}
    for size in sizes:
        root, space_id = build(size, base)
        roots[size] = (root, space_id)
        lat = latency(root, args.queries)
        k, h = lat["keyword"], lat["hybrid"]
        lat_lines.append(f"| {size:,} | {k['median']:.1f} / {k['p95']:.1f} | {h['median']:.1f} / {h['p95']:.1f} | "
                         f"{h['p95'] / k['p95']:.2f} | {k['cpu_median']:.1f} / {k['cpu_p95']:.1f} | "
                         f"{h['cpu_median']:.1f} / {h['cpu_p95']:.1f} | {lat['embed_cpu_median']:.1f} |")
        print(lat_lines[-1], flush=True)
    lines += lat_lines + [""]
    if sizes:
        big = max(sizes)
        mem = memory(roots[big][0])
        lines += [f"## Resident memory, {big:,} items (fresh process, 200 recalls)", "",
                  "| mode | VmRSS before (MiB) | VmRSS after (MiB) |", "|---|---|---|",
                  f"| keyword-only | {mem['keyword']['before']:.0f} | {mem['keyword']['after']:.0f} |",
                  f"| hybrid | {mem['hybrid']['before']:.0f} | {mem['hybrid']['after']:.0f} |", ""]
        print("\n".join(lines[-6:]), flush=True)
        small = min(sizes)
        emb = while_embedding(*roots[small], args.remembers)
        lines += [f"## While embedding runs ({small:,} items re-embedding in the background)", "",
                  "| phase | remember median / p95 | recall median / p95 | items embedded meanwhile |", "|---|---|---|---|"]
        for phase, r in emb.items():
            lines.append(f"| {phase} | {r['remember']['median']:.1f} / {r['remember']['p95']:.1f} | "
                         f"{r['recall']['median']:.1f} / {r['recall']['p95']:.1f} | {r['embedded_meanwhile']} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
