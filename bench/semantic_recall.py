"""Semantic (hybrid keyword + vector) recall benchmark (issue 11). Needs ``pip install -e '.[semantic]'``.

Usage: ``python bench/semantic_recall.py [--parts quality,quantized,latency,memory,embedding,throughput]
[--distractors 1000] [--real 3000] [--sizes 10000,100000] [--queries 200] [--remembers 100]
[--embedding-size 100000] [--vector-pool-factors 2,6] [--out FILE]``. ``--latency-100k`` runs only the 100,000-item latency and memory
parts (about 2 minutes on a quiet 2-core machine: the build is ~1 minute of it). ``--vector-sizes
10000,100000`` runs only the vector side (item 7) and prints its table.

1. **quality**: tests/fixtures/semantic_paraphrases.json (100 facts: 30 English, 10 code identifiers,
   20 Chinese, 20 Japanese, 20 Korean) in one space with ``--distractors`` generated items
   (bench_spaces.Generator), every item embedded with the bundled model. 200 labelled queries: the 100
   paraphrases (no indexed keyword shared with the answer; checked by tests/semantic/test_semantic.py) and the 100
   exact queries. hit@5 and MRR (strict-v1, limit 10) for keyword-only and hybrid, per language.
2. **quantized**: the indexed vector search (mnemon_ls.semantic.vectors / .ivf, used above ``QUANTIZE_ABOVE``
   rows) against the exact scan on real embeddings: the facts plus ``--real`` real texts (this repository's
   paragraphs, then generated items), with the prefilter keeping the share of rows it keeps at 100,000.
3. **latency** at each ``--sizes``: a space built fast (:func:`build`: the CLI's ``insights`` rows written
   with one ``executemany``, the side index built by the provider, vectors written straight into the vector
   file); ``--queries`` recalls (paraphrase and exact queries) keyword-only and hybrid interleaved through
   ``SpacesService.recall`` (the path of the CLI, the language server and MCP), wall and CPU median / p95;
   hybrid includes embedding the query (each query once: no query-cache hit).
4. **memory** with the largest size: a fresh process opens the root and runs 200 recalls; ``VmRSS``,
   ``RssAnon`` and ``RssFile`` after, hybrid against keyword-only.
5. **embedding**: a ``--embedding-size`` space (default 100,000) with every vector present (idle), then
   with its vector file deleted (the worker sweeps the whole space as its backlog): ``--remembers``
   remembers and recalls interleaved, wall median / p95, the queue length and ``VmRSS`` at each step, items
   embedded and the worker thread's CPU seconds.
6. **throughput**: items per CPU second and per wall second of the bundled model on generated items, by
   batch size.
8. **crosslang**: cross-language recall (:func:`crosslang`).
7. **vector side alone** (``--vector-sizes``): a fresh process per size; CPU ms of the query embedding and of
   :meth:`VectorStore.search`, and ``VmRSS`` at each step.

``--vector-pool-factors 2,6`` runs hybrid once per factor in the quality and latency parts, side by side on the
same space in the same run (a recall reads ``max(64, factor x 30)`` vector candidates at the default policy's 30:
2 is the default, 64; 6 was the size before, the keyword pool of 180); the latency table then adds the ratios.

The machine is shared: wall times are inflated by other load (the load average is printed with each table);
CPU times and ratios measured side by side are the comparison.
"""

from __future__ import annotations

import argparse
import contextlib
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
from typing import Sequence

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_spaces import Generator, percentile  # noqa: E402

from mnemon_ls.semantic import SemanticConfig, SemanticEngine  # noqa: E402
from mnemon_ls.semantic.vectors import VECTOR_FILE, VectorStore  # noqa: E402
from mnemon_ls.spaces import RecallQuality, SpacesService  # noqa: E402
from mnemon_ls.spaces.index import content_hash  # noqa: E402

#: Hits found by meaning alone are low with this small model (bench/semantic_floor.py): the quality part also
#: measures balanced-v1, which shows low results after the others.
BALANCED = RecallQuality.from_dict({"policy": "balanced-v1"})
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


def _rank(service: SpacesService, query: str, answer: str, quality=None) -> int | None:
    results = service.recall(query, limit=10, quality=quality).to_dict()["results"]
    return next((i for i, r in enumerate(results) if r["content"] == answer), None)


@contextlib.contextmanager
def pool_factor(value: int | None):
    """Within it a hybrid recall reads ``max(VECTOR_POOL_MIN, value * provider limit)`` vector candidates
    (mnemon_ls.spaces.providers.hybrid; 6 gives the keyword pool, the size before 2026-12-01 21:00 UTC, 180
    at the default policy's 30 candidates; 2 is the default, 64). ``None``: as configured."""
    from mnemon_ls.spaces.providers import hybrid

    held = hybrid.VECTOR_POOL_FACTOR
    if value is not None:
        hybrid.VECTOR_POOL_FACTOR = value
    try:
        yield
    finally:
        hybrid.VECTOR_POOL_FACTOR = held


def pool_label(value: int) -> str:
    """``pool N``: the vector candidates of factor ``value`` at the default policy's 30 candidates."""
    from mnemon_ls.spaces.providers import hybrid

    return f"pool {max(hybrid.VECTOR_POOL_MIN, value * 30)}"


def quality(distractors: int, factors: Sequence[int] = (2,)) -> tuple[dict, Path, str, object]:
    """hit@5 / MRR of keyword-only and hybrid (strict-v1 and balanced-v1) on the labelled queries, the hybrid
    ones once per vector-pool factor (:func:`pool_factor`) on the same embedded space; ``table[group][name]``
    with ``name`` ``keyword``, ``hybrid`` (the first factor) or ``hybrid <pool label>``, and
    ``exact_lost_or_lowered`` per hybrid name."""
    root = Path(tempfile.mkdtemp(prefix=f"bench-semantic-q-{os.getpid()}-"))
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
    lost: dict[str, int] = {}
    runs = [("keyword", keyword, None, None), ("keyword balanced-v1", keyword, BALANCED, None)]
    names = []
    for number, value in enumerate(factors):
        suffix = "" if number == 0 else f" {pool_label(value)}"
        names.append((f"hybrid{suffix}", value))
        runs += [(f"hybrid{suffix}", service, None, value), (f"hybrid balanced-v1{suffix}", service, BALANCED, value)]
    for fact in FACTS:
        for kind in ("paraphrase", "exact"):
            for name, svc, policy, value in runs:
                with pool_factor(value):
                    rank = _rank(svc, fact[kind], fact["text"], policy)
                for group in (kind, f"{kind}:{fact['lang']}"):
                    cell = table.setdefault(group, {}).setdefault(name, {"n": 0, "hit5": 0, "rr": 0.0})
                    cell["n"] += 1
                    cell["hit5"] += rank is not None and rank < 5
                    cell["rr"] += 1 / (rank + 1) if rank is not None else 0.0
    for name, value in names:
        with pool_factor(value):
            lost[name] = sum(1 for fact in FACTS if (_rank(keyword, fact["exact"], fact["text"]) or 99) <
                             (_rank(service, fact["exact"], fact["text"]) or 99))
    store = provider.semantic._vectors.store
    keyword.close()
    return ({"table": table, "embedded": embedded, "embed_wall_s": wall, "embed_cpu_s": cpu,
             "exact_lost_or_lowered": lost, "pools": [pool_label(v) for v in factors],
             "items": distractors + len(FACTS)}, root, space_id, (store.matrix(), engine))


def fact_vectors():
    """The bundled model's vectors of the 100 labelled facts (batches of 16, as the worker embeds)."""
    import numpy as np

    embedder = _engine().embedder()
    return np.concatenate([embedder.embed_passages([f["text"] for f in FACTS[i:i + 16]])
                           for i in range(0, len(FACTS), 16)])


def build(size: int, base_vectors, vectors: bool = True) -> tuple[Path, str, dict]:
    """A root with one active native space of ``size`` items: the 100 labelled facts remembered through
    ``SpacesService.remember``, the rest generated (bench_spaces.Generator) and written straight into the
    Mnemon CLI's ``insights`` table with one ``executemany`` in one transaction (the CLI's schema, created
    by the provider; ``import_items`` takes 15 minutes at 100,000 on a loaded machine), then the side index
    built by the provider's own catch-up (a full reconcile). With ``vectors``, every item gets a vector of the
    current model with its real content hash (so nothing is re-embedded): the facts their own, the
    generated items a real fact vector plus Gaussian noise (sigma 0.02, renormalised), which puts the
    distractors in the facts' cosine range (the vector search and fusion do their full work). Returns
    ``(root, space id, {"seconds": {...}})``."""
    import sqlite3
    import uuid

    import numpy as np

    timings = {}
    t0 = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix=f"bench-semantic-{size}-{os.getpid()}-"))
    service = SpacesService(root)
    space_id = service.create_space("bench", "generated", active=True).to_dict()["id"]
    provider = service.provider(next(r for r in service.state().all if r.id == space_id))
    for fact in FACTS:
        service.remember(fact["text"], space_id=space_id)
    db_path = provider.db_path
    service.close()
    gen = Generator(seed=size)
    rows = []
    for index in range(size - len(FACTS)):
        item = gen.item(index)
        rows.append((str(uuid.UUID(int=random.Random(index * 7919 + size).getrandbits(128), version=4)),
                     item.content, item.category, item.importance, json.dumps(item.tags),
                     json.dumps(list(item.entities)), item.source, item.created_at, item.created_at, item.created_at))
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO insights(id, content, category, importance, tags, entities, source, stored_at, "
                   "created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    timings["insights"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    service = SpacesService(root)
    service.provider(service.state().all[0]).sync()
    service.close()
    timings["side_index"] = time.perf_counter() - t1
    if vectors:
        t2 = time.perf_counter()
        texts = dict(db.execute("SELECT id, content FROM insights WHERE deleted_at IS NULL"))
        facts = {f["text"]: index for index, f in enumerate(FACTS)}
        rng = np.random.default_rng(size)
        store = VectorStore(db_path.parent / VECTOR_FILE, "multilingual-e5-small-q4", 384)
        batch = []
        for index, (key, content) in enumerate(texts.items()):
            if content in facts:
                vec = base_vectors[facts[content]]
            else:
                vec = base_vectors[index % len(base_vectors)] + rng.normal(0, 0.02, 384).astype("float32")
                vec = vec / np.linalg.norm(vec)
            batch.append((key, content_hash(content), vec))
            if len(batch) == 5000:
                store.put(batch)
                batch = []
        store.put(batch)
        store.close()
        timings["vectors"] = time.perf_counter() - t2
    db.close()
    return root, space_id, {"seconds": timings}


def latency(root: Path, queries: int, factors: Sequence[int] = (2,)) -> dict:
    """Wall and CPU ms of keyword-only and hybrid recalls interleaved (each query once per configuration),
    hybrid once per vector-pool factor (:func:`pool_factor`; keys ``hybrid`` for the first, ``hybrid <pool
    label>`` for the others), then recalls right after a remember (the first factor)."""
    engine = _engine()
    hybrid = SpacesService(root, semantic=engine)
    keyword = SpacesService(root)
    qs = [f[k] for f in FACTS for k in ("paraphrase", "exact")]
    hybrid.recall(qs[0])
    keyword.recall(qs[0])
    engine.wait_idle(600)
    configs = [("keyword", keyword, None)] + [("hybrid" + ("" if i == 0 else f" {pool_label(v)}"), hybrid, v)
                                              for i, v in enumerate(factors)]
    times: dict[str, list[float]] = {name: [] for name, _s, _v in configs}
    cpu: dict[str, list[float]] = {name: [] for name, _s, _v in configs}
    embed = []
    embedder = engine.embedder()
    for index in range(queries):
        query = qs[index % len(qs)]
        turn = configs[index % len(configs):] + configs[:index % len(configs)]  # each goes first in turn
        for name, svc, value in turn:
            getattr(embedder, "_queries", {}).clear()  # each hybrid recall embeds its query: no cache hit
            with pool_factor(value):
                c0, t0 = time.process_time(), time.perf_counter()
                svc.recall(query, limit=10)
                times[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)
        getattr(embedder, "_queries", {}).clear()  # the recall left it in the query cache: measure a miss
        c0 = time.process_time()
        embedder.embed_query(query)
        embed.append((time.process_time() - c0) * 1000)
    # a hybrid recall right after a remember: by the same service (its own connection; the worker embeds the
    # new item meanwhile), and by another connection (another process's write: the catch-up path)
    gen = Generator(seed=queries)
    other = SpacesService(root)
    space_id = hybrid.state().all[0].id
    after: dict[str, list[float]] = {"own": [], "other": []}
    for index in range(max(10, queries // 10)):
        for name, writer in (("own", hybrid), ("other", other)):
            writer.remember(gen.english() + f" after-remember {name} {index}", space_id=space_id)
            with pool_factor(factors[0]):
                t0 = time.perf_counter()
                hybrid.recall(qs[index % len(qs)], limit=10)
                after[name].append((time.perf_counter() - t0) * 1000)
        engine.wait_idle(600)
    other.close()
    engine.stop()
    hybrid.close()
    keyword.close()
    out = {name: {"median": statistics.median(v), "p95": percentile(v, 95),
                  "cpu_median": statistics.median(cpu[name]), "cpu_p95": percentile(cpu[name], 95)}
           for name, v in times.items()}
    for name, values in after.items():
        out[f"after_{name}"] = {"median": statistics.median(values), "p95": percentile(values, 95), "n": len(values)}
    out["embed_cpu_median"] = statistics.median(embed)
    out["embed_cpu_p95"] = percentile(embed, 95)
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
    return {"before": before, "after": _rss_mib(), "anon": _rss_mib("RssAnon"), "file": _rss_mib("RssFile")}


def memory(root: Path) -> dict:
    out = {}
    for mode in ("keyword", "hybrid"):
        done = subprocess.run([sys.executable, __file__, "--memory-probe", str(root), "--mode", mode],
                              capture_output=True, text=True, check=True)
        out[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def while_embedding(root: Path, space_id: str, count: int) -> dict:
    """Remember and recall latency (wall ms) with the engine idle (every vector present), then with the
    vector file deleted (the worker has the whole space as its backlog, sweeping it in the background):
    ``count`` remembers and ``count`` recalls, interleaved. Also, while embedding: the queue length and
    ``VmRSS`` sampled at every operation, the items embedded and the worker thread's CPU seconds
    (``pthread_getcpuclockid``)."""
    gen = Generator(seed=99)
    results = {}
    qs = [f["paraphrase"] for f in FACTS]
    for phase in ("idle", "embedding"):
        import gc

        gc.collect()
        rss_open = _rss_mib()
        engine = _engine()
        service = SpacesService(root, semantic=engine)
        service.recall("warm up")
        engine.wait_idle(600)
        side = service.provider(next(r for r in service.state().all if r.id == space_id)).semantic
        if phase == "embedding":
            vectors = root / "data" / space_id / VECTOR_FILE
            side.close()
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{vectors}{suffix}")
                except FileNotFoundError:
                    pass
            service.recall("warm up")  # re-attaches: the sweep of every item starts
        worker = engine._worker
        clock = time.pthread_getcpuclockid(worker.ident) if worker is not None and worker.is_alive() else None
        cpu0 = time.clock_gettime(clock) if clock is not None else 0.0
        wall0 = time.perf_counter()
        remember, recall, pending, rss = [], [], [], []
        for index in range(count):
            t0 = time.perf_counter()
            service.remember(gen.english() + f" {phase} {index}", space_id=space_id)
            remember.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            service.recall(qs[index % len(qs)], limit=10)
            recall.append((time.perf_counter() - t0) * 1000)
            pending.append(engine.progress()["pending"])
            rss.append(_rss_mib())
        wall = time.perf_counter() - wall0
        cpu = (time.clock_gettime(clock) - cpu0) if clock is not None else 0.0
        progress = engine.progress()
        engine.stop()
        service.close()
        results[phase] = {"remember": {"median": statistics.median(remember), "p95": percentile(remember, 95)},
                          "recall": {"median": statistics.median(recall), "p95": percentile(recall, 95)},
                          "embedded": sum(s["embedded"] for s in progress["spaces"].values()),
                          "pending_max": max(pending), "rss_first": rss[0], "rss_last": rss[-1], "rss_max": max(rss),
                          "wall_s": wall, "worker_cpu_s": cpu, "rss_open": rss_open}
    return results


def throughput(count: int = 96) -> dict:
    """Items per CPU second and per wall second of the bundled model on generated items (the distractors'
    texts: 10-28 English words or 18-60 Chinese characters, plus an identifier), by batch size of the
    model's own call (``embed_passages`` embeds one text per engine-lock hold whatever the batch)."""
    embedder = _engine().embedder()
    gen = Generator(seed=5)
    texts = [gen.item(i).content for i in range(count)]
    embedder.embed_passages(texts[:2])
    out = {}
    model = getattr(embedder, "_model", None)  # the local model's own batches (embed_passages slices them)
    for size in (1, 4, 16):
        c0, t0 = time.process_time(), time.perf_counter()
        for start in range(0, count, size):
            if model is not None:
                model.passage(texts[start:start + size])
            else:
                embedder.embed_passages(texts[start:start + size])
        out[size] = {"per_cpu_s": count / (time.process_time() - c0), "per_wall_s": count / (time.perf_counter() - t0)}
    return out


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


def real_distractors(count: int) -> list[str]:
    """Up to ``count`` real texts to embed as distractors: the paragraphs (40-600 characters) of this
    repository's Markdown and of the Python docstrings' lines grouped by blank lines, then generated items
    (bench_spaces.Generator) for the rest."""
    texts: list[str] = []
    seen: set[str] = set()
    files = sorted(HERE.parent.rglob("*.md")) + sorted((HERE.parent / "mnemon_ls").rglob("*.py"))
    for path in files:
        if "node_modules" in path.parts:
            continue
        for para in path.read_text("utf-8", errors="replace").split("\n\n"):
            para = " ".join(para.split())
            if 40 <= len(para) <= 600 and para not in seen:
                seen.add(para)
                texts.append(para)
    random.Random(3).shuffle(texts)
    gen = Generator(seed=23)
    index = 0
    while len(texts) < count:
        texts.append(gen.item(index).content)
        index += 1
    return texts[:count]


def quantized_quality(count: int) -> dict:
    """Quality retention of the indexed search (mnemon_ls.semantic.vectors and .ivf module docs; the
    "quantized" form before issue 27) against the exact scan, on real embeddings: the 100 labelled facts plus
    ``count`` real distractors (:func:`real_distractors`), all embedded with the bundled model. The store is
    forced into the indexed form (``QUANTIZE_ABOVE`` 0) with the share of rows a search reads at 100,000
    (``ivf.PROBE_SHARE``), though a search reads at least twice its limit and margin (144 rows here, a larger
    share of a few thousand). For the 200 queries: overlap of the indexed top 5 / top 64 with the exact ones,
    and hit@5 / MRR of the fact by vector alone, exact vs indexed. bench/hybrid_100k.py measures it at
    100,000."""
    import numpy as np

    from mnemon_ls.semantic import ivf as ivf_mod
    from mnemon_ls.semantic import vectors as vectors_mod

    embedder = _engine().embedder()
    texts = [f["text"] for f in FACTS] + real_distractors(count)
    c0, t0 = time.process_time(), time.perf_counter()
    matrix = np.concatenate([embedder.embed_passages(texts[i:i + 16]) for i in range(0, len(texts), 16)])
    embed_cpu, embed_wall = time.process_time() - c0, time.perf_counter() - t0
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-semantic-quant-{os.getpid()}-"))
    saved = vectors_mod.QUANTIZE_ABOVE
    vectors_mod.QUANTIZE_ABOVE = 0
    try:
        store = VectorStore(workdir / VECTOR_FILE, embedder.model_id, embedder.dim)
        store.put([(f"t{i}", "h", matrix[i]) for i in range(len(texts))])
        assert store.quantized
        out: dict = {"items": len(texts), "probe_share": ivf_mod.PROBE_SHARE, "embed_cpu_s": embed_cpu,
                     "embed_wall_s": embed_wall}
        for kind in ("paraphrase", "exact"):
            cell = {"n": 0, "top5": 0.0, "top64": 0.0, "exact_hit5": 0, "exact_rr": 0.0, "quant_hit5": 0,
                    "quant_rr": 0.0}
            for number, fact in enumerate(FACTS):
                qvec = embedder.embed_query(fact[kind])
                exact = [k for k, _c in store.search(qvec, 64, exact=True)]
                quant = [k for k, _c in store.search(qvec, 64)]
                cell["n"] += 1
                cell["top5"] += len(set(exact[:5]) & set(quant[:5])) / 5
                cell["top64"] += len(set(exact) & set(quant)) / len(exact)
                for name, got in (("exact", exact), ("quant", quant)):
                    rank = got.index(f"t{number}") if f"t{number}" in got else None
                    cell[f"{name}_hit5"] += rank is not None and rank < 5
                    cell[f"{name}_rr"] += 1 / (rank + 1) if rank is not None else 0.0
            out[kind] = cell
        store.close()
    finally:
        vectors_mod.QUANTIZE_ABOVE = saved
    return out


def crosslang() -> dict:
    """Cross-language recall: the 100 labelled facts in one space, queried with the 24 queries of
    tests/fixtures/semantic_crosslang.json (12 in Chinese, Japanese or Korean about an English fact, 12 in
    English about a Chinese, Japanese or Korean one; each says what its fact says, in the other language).
    hit@5 / MRR of ``SpacesService.recall`` (strict-v1, limit 10) keyword-only and hybrid, and of the vector
    search alone (cosine rank of the fact among the 100); the same facts' same-language paraphrases beside
    them, in the same run."""
    cross = json.loads((HERE.parent / "tests" / "fixtures" / "semantic_crosslang.json").read_text("utf-8"))
    root = Path(tempfile.mkdtemp(prefix=f"bench-semantic-x-{os.getpid()}-"))
    engine = _engine()
    service = SpacesService(root, semantic=engine)
    space_id = service.create_space("facts", "labelled facts", active=True).to_dict()["id"]
    ids = {service.remember(f["text"], space_id=space_id).to_dict()["id"]: f["text"] for f in FACTS}
    provider = service.provider(service.state().all[0])
    engine.embedder()
    provider.semantic.remembered([], sweep=True)
    engine.wait_idle(7200)
    store = provider.semantic._vectors.store
    keyword = SpacesService(root)
    embedder = engine.embedder()
    table: dict = {}
    rows = [(c["lang"], c["query"], FACTS[c["fact"]]["text"]) for c in cross]
    rows += [("same-language paraphrase", FACTS[c["fact"]]["paraphrase"], FACTS[c["fact"]]["text"])
             for c in {c["fact"]: c for c in cross}.values()]
    for group, query, answer in rows:
        vector = [ids[k] for k, _c in store.search(embedder.embed_query(query), 100)]
        ranks = {"keyword": _rank(keyword, query, answer), "hybrid": _rank(service, query, answer),
                 "vector": vector.index(answer) if answer in vector else None}
        groups = [group] if group.startswith("same") else [group, "cross-language (all)"]
        for name in groups:
            for mode, rank in ranks.items():
                cell = table.setdefault(name, {}).setdefault(mode, {"n": 0, "hit5": 0, "rr": 0.0})
                cell["n"] += 1
                cell["hit5"] += rank is not None and rank < 5
                cell["rr"] += 1 / (rank + 1) if rank is not None else 0.0
    engine.stop()
    service.close()
    keyword.close()
    return table


PARTS = ("quality", "quantized", "latency", "memory", "embedding", "throughput", "crosslang")


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _fmt(cell: dict) -> str:
    return f"{100 * cell['hit5'] / cell['n']:.0f}% / {cell['rr'] / cell['n']:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated, of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--distractors", type=int, default=1000)
    parser.add_argument("--real", type=int, default=3000, help="real distractors embedded for the quantized part")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=100)
    parser.add_argument("--embedding-size", type=int, default=100000,
                        help="items of the space whose vectors are missing in the embedding part")
    parser.add_argument("--latency-100k", action="store_true",
                        help="only the 100,000-item latency and memory parts (--parts latency,memory --sizes 100000)")
    parser.add_argument("--vector-pool-factors", default="2",
                        help="hybrid once per factor, side by side in the quality and latency parts: a recall reads "
                             "max(64, factor x 30) vector candidates (6: the keyword pool of 180, the size before "
                             "2026-12-01; 2: the default, 64)")
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument("--keep", action="store_true", help="keep the generated roots in the temp directory")
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
    if args.latency_100k:
        args.parts, args.sizes = "latency,memory", "100000"
    parts = [x for x in args.parts.split(",") if x]
    factors = [int(x) for x in args.vector_pool_factors.split(",") if x]
    unknown = [x for x in parts if x not in PARTS]
    if unknown:
        parser.error(f"--parts: unknown {', '.join(unknown)} (known: {', '.join(PARTS)})")
    started = time.perf_counter()
    lines = [f"`python bench/semantic_recall.py {' '.join(sys.argv[1:])}`; {platform.platform()}, {os.cpu_count()} "
             f"CPUs; load average {_load()} at start.", ""]

    def say(*more: str) -> None:
        lines.extend(more)
        print("\n".join(more), flush=True)

    say(*lines)
    lines[:] = lines[:2]
    base = None
    if "quality" in parts:
        q, _qroot, _qspace, (base, qengine) = quality(args.distractors, factors)
        qengine.stop()
        t = q["table"]
        pools = q["pools"]
        hybrid_names = ["hybrid" + ("" if i == 0 else f" {label}") for i, label in enumerate(pools)]
        heads = [f"hybrid ({label})" if len(pools) > 1 else "hybrid" for label in pools]
        say("## Quality (hit@5 / MRR, strict-v1, limit 10)", "",
            f"{q['items']} items ({args.distractors} generated distractors + 100 labelled facts)"
            + (f"; hybrid once per vector pool ({', '.join(pools)}; same space, same run)" if len(pools) > 1 else "")
            + ".", "",
            "| queries | n | keyword-only | " + " | ".join(heads) + " | keyword-only balanced-v1 | "
            + " | ".join(h.replace("hybrid", "hybrid balanced-v1", 1) for h in heads) + " |",
            "|---|---|---|" + "---|" * (2 * len(pools) + 1),
            *[f"| {g} | {t[g]['keyword']['n']} | {_fmt(t[g]['keyword'])} | "
              + " | ".join(_fmt(t[g][name]) for name in hybrid_names) + f" | {_fmt(t[g]['keyword balanced-v1'])} | "
              + " | ".join(_fmt(t[g][name.replace('hybrid', 'hybrid balanced-v1', 1)]) for name in hybrid_names) + " |"
              for g in ["paraphrase", "exact"] + sorted(k for k in t if ":" in k)],
            "", "Exact queries whose answer hybrid ranked lower than keyword-only: "
            + ", ".join(f"{q['exact_lost_or_lowered'][name]}" + (f" ({label})" if len(pools) > 1 else "")
                        for name, label in zip(hybrid_names, pools)) + ".", "",
            f"Embedding: {q['embedded']} items in {q['embed_wall_s']:.1f} s wall = "
            f"{q['embedded'] / q['embed_wall_s']:.1f} items/s ({q['embedded'] / max(q['embed_cpu_s'], 1e-9):.1f} "
            f"items per CPU second; one worker thread); load average {_load()}.", "")
    if "quantized" in parts:
        r = quantized_quality(args.real)
        say(f"## Quantized search vs exact scan, real embeddings ({r['items']:,} items: 100 facts + "
            f"{r['items'] - 100:,} real distractors; {r['candidates']} candidates = the share kept at 100,000)", "",
            "| queries | n | top-5 overlap | top-64 overlap | exact hit@5 / MRR | quantized hit@5 / MRR |",
            "|---|---|---|---|---|---|",
            *[f"| {kind} | {c['n']} | {100 * c['top5'] / c['n']:.1f}% | {100 * c['top64'] / c['n']:.1f}% | "
              f"{100 * c['exact_hit5'] / c['n']:.0f}% / {c['exact_rr'] / c['n']:.3f} | "
              f"{100 * c['quant_hit5'] / c['n']:.0f}% / {c['quant_rr'] / c['n']:.3f} |"
              for kind, c in ((k, r[k]) for k in ("paraphrase", "exact"))],
            "", f"Embedding the {r['items']:,} texts (batches of 16): {r['items'] / r['embed_cpu_s']:.1f} items per "
            f"CPU second, {r['items'] / r['embed_wall_s']:.1f} per wall second; load average {_load()}.", "")
    sizes = [int(x) for x in args.sizes.split(",") if x]
    roots = {}
    if ("latency" in parts or "memory" in parts) and sizes:
        base = fact_vectors()  # in FACTS order (build() gives each fact its own vector)
        if "latency" in parts:
            say("## Recall latency (ms; SpacesService.recall, smart mode; wall, then this process's CPU)", "",
                "| items | build s (insights / side index / vectors) | keyword median / p95 | hybrid median / p95 | "
                "keyword CPU median / p95 | hybrid CPU median / p95 | query embedding CPU median / p95 | load |",
                "|---|---|---|---|---|---|---|---|")
        after_rows: list = []
        for size in sizes:
            root, space_id, info = build(size, base)
            roots[size] = (root, space_id)
            if "latency" not in parts:
                continue
            lat = latency(root, args.queries, factors)
            k, h, b = lat["keyword"], lat["hybrid"], info["seconds"]
            for number, value in enumerate(factors):
                name = "hybrid" + ("" if number == 0 else f" {pool_label(value)}")
                h2 = lat[name]
                label = f"{size:,}" + (f" ({pool_label(value)})" if len(factors) > 1 else "")
                say(f"| {label} | {b['insights']:.0f} / {b['side_index']:.0f} / {b['vectors']:.0f} | {k['median']:.1f} / "
                    f"{k['p95']:.1f} | {h2['median']:.1f} / {h2['p95']:.1f} | {k['cpu_median']:.1f} / {k['cpu_p95']:.1f} | "
                    f"{h2['cpu_median']:.1f} / {h2['cpu_p95']:.1f} | {lat['embed_cpu_median']:.1f} / "
                    f"{lat['embed_cpu_p95']:.1f} | {_load()} |")
            if len(factors) > 1:
                first = "hybrid"
                say(*[f"| ratio {pool_label(v)} / {pool_label(factors[0])} | | | "
                      f"{lat['hybrid ' + pool_label(v)]['median'] / lat[first]['median']:.2f} / "
                      f"{lat['hybrid ' + pool_label(v)]['p95'] / lat[first]['p95']:.2f} | | "
                      f"{lat['hybrid ' + pool_label(v)]['cpu_median'] / lat[first]['cpu_median']:.2f} / "
                      f"{lat['hybrid ' + pool_label(v)]['cpu_p95'] / lat[first]['cpu_p95']:.2f} | | |" for v in factors[1:]])
            after_rows.append((size, lat, h))
        say("")
        if after_rows:
            say("Hybrid recall right after a remember (wall ms; the remember by the same service, whose worker embeds the "
                "new item meanwhile, or by another connection, caught up by id), against the plain hybrid recall above:", "",
                "| items | after own remember median / p95 | ratio to plain (medians) | after another connection's "
                "remember median / p95 | ratio | load |", "|---|---|---|---|---|---|",
                *[f"| {size:,} | {lat['after_own']['median']:.1f} / {lat['after_own']['p95']:.1f} | "
                  f"{lat['after_own']['median'] / h['median']:.2f} | {lat['after_other']['median']:.1f} / "
                  f"{lat['after_other']['p95']:.1f} | {lat['after_other']['median'] / h['median']:.2f} | {_load()} |"
                  for size, lat, h in after_rows], "")
    if "memory" in parts and roots:
        big = max(roots)
        mem = memory(roots[big][0])
        say(f"## Resident memory, {big:,} items (fresh process, 200 recalls; MiB)", "",
            "| mode | VmRSS before opening | VmRSS after | RssAnon | RssFile |", "|---|---|---|---|---|",
            *[f"| {mode} | {m['before']:.0f} | {m['after']:.0f} | {m['anon']:.0f} | {m['file']:.0f} |"
              for mode, m in mem.items()], "")
    if "embedding" in parts:
        if roots.get(args.embedding_size) is None:
            base = fact_vectors()
        size = args.embedding_size
        root, space_id = roots[size] if size in roots else build(size, base)[:2]
        emb = while_embedding(root, space_id, args.remembers)
        say(f"## Remember and recall while a {size:,}-item backlog embeds (wall ms; {args.remembers} each)", "",
            "| phase | remember median / p95 | recall median / p95 | queue length max | VmRSS before opening / first / last / max MiB | "
            "items embedded | worker CPU s / wall s |", "|---|---|---|---|---|---|---|",
            *[f"| {phase} | {r['remember']['median']:.1f} / {r['remember']['p95']:.1f} | {r['recall']['median']:.1f} / "
              f"{r['recall']['p95']:.1f} | {r['pending_max']} | {r['rss_open']:.0f} / {r['rss_first']:.0f} / {r['rss_last']:.0f} / "
              f"{r['rss_max']:.0f} | {r['embedded']} | {r['worker_cpu_s']:.1f} / {r['wall_s']:.1f} |"
              for phase, r in emb.items()], f"Load average at the end: {_load()}.", "")
    if "throughput" in parts:
        thr = throughput()
        say("## Embedding throughput (bundled model, one thread, generated items)", "",
            "| batch | items per CPU second | items per wall second |", "|---|---|---|",
            *[f"| {size} | {r['per_cpu_s']:.1f} | {r['per_wall_s']:.1f} |" for size, r in thr.items()],
            f"Load average: {_load()}.", "")
    if "crosslang" in parts:
        x = crosslang()
        order = ["cross-language (all)"] + sorted(k for k in x if "->" in k) + ["same-language paraphrase"]
        say("## Cross-language recall (hit@5 / MRR; 100 labelled facts, strict-v1, limit 10)", "",
            "| queries | n | keyword-only | hybrid | vector alone (rank among the 100) |", "|---|---|---|---|---|",
            *[f"| {g} | {x[g]['hybrid']['n']} | {_fmt(x[g]['keyword'])} | {_fmt(x[g]['hybrid'])} | "
              f"{_fmt(x[g]['vector'])} |" for g in order if g in x], f"Load average: {_load()}.", "")
    say(f"Run time {time.perf_counter() - started:.0f} s.")
    if not args.keep:
        import shutil

        for path in Path(tempfile.gettempdir()).glob(f"bench-semantic-*-{os.getpid()}-*"):
            shutil.rmtree(path, ignore_errors=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
