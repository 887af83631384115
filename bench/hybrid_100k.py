"""Hybrid recall against keyword recall at 100,000 items (issue 27 item 6): CPU per recall, RSS, paraphrase hit@5.

One native space of ``--items`` items (default 100,000), built once and cached under ``CACHE`` (``/tmp/mnemon-hyb-bench``
or ``$MNEMON_BENCH_CACHE``); each run works on a fresh copy of it. Every figure of one code tree comes from the same
run, and with ``--trees before=DIR,after=DIR`` the trees are measured one after the other in the same run (each
probe a fresh process importing ``mnemon_ls`` from its tree; this file itself is the same for both).

**The space.** The 100 labelled facts of tests/fixtures/semantic_paraphrases.json (30 English, 10 code
identifiers, 20 Chinese, 20 Japanese, 20 Korean) are remembered through ``SpacesService.remember``; the other
items are written straight into the Mnemon CLI's ``insights`` table (one ``executemany``) and the side index is
built by the provider's catch-up (as bench/semantic_recall.py's ``build``). Vectors: embedding 100,000 items with
the bundled model on this 2-core machine takes about 2.5 hours of CPU (13 items per CPU second,
bench/results/semantic.md), so only ``--real`` texts (default 6,000: this repository's paragraphs from
``semantic_recall.real_distractors``, then generated items) are embedded with the real model, once, cached in
``CACHE/real-<n>.npz`` (:func:`real_vectors`; the 6,000 took 635 s of CPU, 20 minutes of wall time at load 3-10).
Distractor ``j`` (``0 <= j < items - 100``):

- ``j < real``: content = real text ``j``, vector = its real embedding (consistent text and vector);
- ``j >= real``: content = a generated item (``bench_spaces.Generator``), vector = a copy of real vector ``i = j
  mod real`` (:func:`copy_vectors`): with ``--copies mix`` (default) ``(1 - w) r_i + w r_k``, ``r_k`` one of the
  10 real vectors nearest ``r_i`` and ``w`` uniform in [0, 0.5], renormalised (the copies lie between real
  neighbours: the real data's local structure, 16 times denser); with ``--copies noise`` ``r_i`` plus Gaussian
  noise of standard deviation :data:`NOISE` per component (as semantic_recall.py builds its space: noise of
  norm 0.39, as large as what tells real vectors apart, so the copies carry no structure but their origin). The
  cosine of a copy to its origin is printed (``copy_cosine``) beside the real vectors' nearest-neighbour cosine.

The facts' vectors are their real embeddings (``CACHE/facts.npy``); queries are embedded for real at run time.

**Probes (fresh process each, per tree; the process environment of a server: no OMP_NUM_THREADS or
OPENBLAS_NUM_THREADS unless ``--omp1``):**

1. ``open``: the first hybrid recall of a process on the copied space (loads the vectors; a tree with a derived
   index builds it here the first time), wall and CPU, and VmHWM.
2. ``cpu``: the 200 labelled queries (100 paraphrases, 100 exact) through ``SpacesService.recall(limit=10)``,
   in rotating order per query: **keyword** (a service without the engine), **hybrid cold** (the query cache
   cleared first: the query is embedded), **hybrid warm** (the query's vector cached: embedded, untimed, just
   before), **embed** (the query embedding alone, cache cleared) and **vector search** (``VectorStore.search``
   of 64 candidates plus ``spread``, the query vector given). Process CPU (``time.process_time``: every
   thread) per recall, median and p95.
3. ``rss``: a fresh process opens the space and runs the 200 recalls, keyword-only or hybrid (cold queries);
   ``VmRSS``, ``RssAnon``, ``RssFile``, ``VmHWM`` after.
4. ``quality``: hit@5 and MRR (limit 10) of the paraphrase and exact queries for keyword-only, hybrid with the
   tree's vector search, and hybrid with the vector search forced exact (``QUANTIZE_ABOVE`` raised so the store
   keeps every vector as float32 and scans them all), strict-v1 (default) and balanced-v1; and the vector search
   alone against a brute-force scan of the float32 vectors of the vector file: recall@64 and recall@5 of the
   tree's search, and the facts' vector-only hit@5 both ways.

Usage::

    python bench/hybrid_100k.py --trees before=/tmp/mnemon-hyb-bench/tree-before,after=. \\
        --out bench/results/hybrid_100k.json
    python bench/hybrid_100k.py --copies noise ...                     # the copies as Gaussian noise instead
    python bench/hybrid_100k.py --md bench/results/hybrid_100k.json   # prints the tables of a result file

The first run embeds the real texts (about 15 minutes of CPU) and builds the space (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("MNEMON_BENCH_CACHE", "/tmp/mnemon-hyb-bench"))
MODEL = "multilingual-e5-small-q4"
FIXTURE = HERE.parent / "tests" / "fixtures" / "semantic_paraphrases.json"
#: Standard deviation per component of the noise added to a copied real vector (module doc).
NOISE = 0.02
#: Environment variables that change the thread count of numpy's BLAS or of the model's OpenMP.
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS")


def _facts() -> list[dict]:
    return json.loads(FIXTURE.read_text("utf-8"))


def percentile(values: list[float], pct: float) -> float:
    """The ``pct`` percentile of ``values`` (nearest rank on the sorted list, as bench_spaces)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def _stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "p95": percentile(values, 95), "mean": statistics.fmean(values),
            "n": len(values)}


def _status() -> dict:
    """``VmRSS``, ``RssAnon``, ``RssFile``, ``VmHWM`` of this process, MiB."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(line.split()[1]) / 1024
    return out


def _load() -> float:
    return os.getloadavg()[0]


# --------------------------------------------------------------------------- data (the driver's own tree)


def _bench_imports() -> None:
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))


def real_vectors(count: int):
    """``(texts, (count, 384) float32)``: ``count`` real distractor texts (``semantic_recall.real_distractors``:
    this repository's paragraphs, then generated items) embedded with the bundled model (batches of 16, as the
    worker embeds), cached in ``CACHE/real-<count>.npz`` (texts and vectors together, so a rerun reads the same
    set whatever the tree holds by then; the embedding's CPU and wall seconds are kept with them)."""
    import numpy as np

    path = CACHE / f"real-{count}.npz"
    if path.exists():
        held = np.load(path, allow_pickle=False)
        return [str(t) for t in held["texts"]], held["vectors"]
    _bench_imports()
    from semantic_recall import _engine, real_distractors

    texts = real_distractors(count)
    embedder = _engine().embedder()
    out = np.empty((count, embedder.dim), dtype=np.float32)
    c0, t0 = time.process_time(), time.perf_counter()
    for start in range(0, count, 16):
        out[start:start + 16] = embedder.embed_passages(texts[start:start + 16])
        if start % 800 == 0:
            print(f"embedded {start}/{count}: {time.perf_counter() - t0:.0f} s wall, "
                  f"{time.process_time() - c0:.0f} s CPU", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, texts=np.array(texts), vectors=out, cpu_s=np.array(time.process_time() - c0),
             wall_s=np.array(time.perf_counter() - t0))
    os.replace(tmp, path)
    return texts, out


def fact_vectors():
    """The bundled model's vectors of the 100 labelled facts (batches of 16), cached in ``CACHE/facts.npy``."""
    import numpy as np

    path = CACHE / "facts.npy"
    if path.exists():
        return np.load(path)
    _bench_imports()
    from semantic_recall import fact_vectors as embed

    out = embed()
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def copy_vectors(np, vectors, count: int, copies: str, seed: int):
    """``(count, dim)`` float32 unit vectors, row ``j`` a copy of real vector ``j mod len(vectors)`` (module doc):
    ``mix``: ``(1 - w) * r_i + w * r_k`` with ``r_k`` one of the 10 real vectors nearest ``r_i`` and ``w`` uniform in
    [0, 0.5]; ``noise``: ``r_i`` plus Gaussian noise of standard deviation :data:`NOISE` per component."""
    rng = np.random.default_rng(seed)
    real = len(vectors)
    origin = np.arange(count) % real
    if copies == "noise":
        out = vectors[origin] + rng.normal(0, NOISE, (count, vectors.shape[1])).astype(np.float32)
    else:
        near = np.empty((real, 10), dtype=np.int64)
        for start in range(0, real, 1024):
            sims = vectors[start:start + 1024] @ vectors.T
            sims[np.arange(len(sims)), np.arange(start, start + len(sims))] = -2
            near[start:start + 1024] = np.argpartition(-sims, 10, axis=1)[:, :10]
        other = near[origin, rng.integers(0, 10, count)]
        weight = rng.uniform(0, 0.5, count).astype(np.float32)[:, None]
        out = (1 - weight) * vectors[origin] + weight * vectors[other]
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def build(items: int, real: int, copies: str = "mix") -> tuple[Path, dict]:
    """The cached space (module doc): ``(root, facts)`` where ``facts`` says how it was built. Built once into
    ``CACHE/space-<items>-r<real>[-noise]`` (a ``built.json`` marks it complete)."""
    import random
    import sqlite3
    import uuid

    import numpy as np

    root = CACHE / f"space-{items}-r{real}{'' if copies == 'mix' else '-' + copies}"
    marker = root / "built.json"
    if marker.exists():
        return root / "root", json.loads(marker.read_text())
    if root.exists():
        shutil.rmtree(root)
    texts, vectors = real_vectors(real)
    facts_vec = fact_vectors()
    _bench_imports()
    from bench_spaces import Generator

    from mnemon_ls.semantic.vectors import VECTOR_FILE, VectorStore
    from mnemon_ls.spaces import SpacesService
    from mnemon_ls.spaces.index import content_hash

    t0 = time.perf_counter()
    data = root / "root"
    service = SpacesService(data)
    space_id = service.create_space("bench", "generated", active=True).to_dict()["id"]
    provider = service.provider(next(r for r in service.state().all if r.id == space_id))
    facts = _facts()
    for fact in facts:
        service.remember(fact["text"], space_id=space_id)
    db_path = provider.db_path
    service.close()
    gen = Generator(seed=items)
    rows = []
    for index in range(items - len(facts)):
        item = gen.item(index)
        content = texts[index] if index < real else item.content
        rows.append((str(uuid.UUID(int=random.Random(index * 7919 + items).getrandbits(128), version=4)),
                     content, item.category, item.importance, json.dumps(item.tags),
                     json.dumps(list(item.entities)), item.source, item.created_at, item.created_at, item.created_at))
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO insights(id, content, category, importance, tags, entities, source, stored_at, "
                   "created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    service = SpacesService(data)
    service.provider(service.state().all[0]).sync()
    service.close()
    by_id = {r[0]: i for i, r in enumerate(rows)}
    fact_index = {f["text"]: i for i, f in enumerate(facts)}
    made = copy_vectors(np, vectors, len(rows), copies, items)
    store = VectorStore(db_path.parent / VECTOR_FILE, MODEL, vectors.shape[1])
    batch, near = [], []
    for key, content in db.execute("SELECT id, content FROM insights WHERE deleted_at IS NULL ORDER BY rowid"):
        if key in by_id:
            index = by_id[key]
            vec = vectors[index] if index < real else made[index]
            if index >= real and len(near) < 2000:
                near.append(float(vec @ vectors[index % real]))
        else:
            vec = facts_vec[fact_index[content]]
        batch.append((key, content_hash(content), vec))
        if len(batch) == 5000:
            store.put(batch, refresh=False)
            batch = []
    store.put(batch, refresh=False)
    store.close()
    db.close()
    # the real vectors' own nearest-neighbour cosines (what a copy's cosine to its origin compares with)
    sample = vectors[:: max(1, real // 1000)]
    sims = sample @ vectors.T
    sims[sims > 0.9999] = -1
    info = {"items": items, "real": real, "copies": copies, "noise": NOISE if copies == "noise" else None,
            "space": space_id, "build_s": time.perf_counter() - t0,
            "copy_cosine": _stats(near), "real_nn_cosine": _stats(sims.max(axis=1).tolist())}
    marker.write_text(json.dumps(info, indent=1))
    return data, info


# --------------------------------------------------------------------------- probes (a fresh process per probe)


def _tree_imports(tree: str) -> None:
    sys.path.insert(0, str(Path(tree).resolve()))


def _engine():
    from mnemon_ls.semantic import SemanticConfig, SemanticEngine

    return SemanticEngine(SemanticConfig(enabled=True), env={})


def _queries() -> list[str]:
    return [f[k] for f in _facts() for k in ("paraphrase", "exact")]


def _store(service):
    provider = service.provider(service.state().all[0])
    return provider.semantic._vectors.store


def _clear_cache(embedder) -> None:
    """Forget the remembered query vectors (a dict before issue 27, a cache object with ``clear`` after)."""
    getattr(embedder, "_queries").clear()


def probe_open(root: Path) -> dict:
    from mnemon_ls.spaces import SpacesService

    engine = _engine()
    engine.embedder()
    service = SpacesService(root, semantic=engine)
    c0, t0 = time.process_time(), time.perf_counter()
    service.recall("warm up the vector index", limit=10)
    out = {"first_recall_wall_s": time.perf_counter() - t0, "first_recall_cpu_s": time.process_time() - c0}
    out.update(_status())
    c0, t0 = time.process_time(), time.perf_counter()
    service.recall("and a second recall", limit=10)
    out["second_recall_wall_ms"] = (time.perf_counter() - t0) * 1000
    out["second_recall_cpu_ms"] = (time.process_time() - c0) * 1000
    engine.stop()
    service.close()
    return out


def probe_cpu(root: Path, rounds: int) -> dict:
    from mnemon_ls.spaces import SpacesService

    engine = _engine()
    hybrid = SpacesService(root, semantic=engine)
    keyword = SpacesService(root)
    qs = _queries()
    for query in qs[:5]:
        hybrid.recall(query, limit=10)
        keyword.recall(query, limit=10)
    engine.wait_idle(600)
    embedder = engine.embedder()
    store = _store(hybrid)
    cpu: dict[str, list[float]] = {"keyword": [], "hybrid_cold": [], "hybrid_warm": [], "embed": [], "vector": []}

    def keyword_recall(query):
        c0 = time.process_time()
        keyword.recall(query, limit=10)
        cpu["keyword"].append((time.process_time() - c0) * 1000)

    def cold(query):
        _clear_cache(embedder)
        c0 = time.process_time()
        hybrid.recall(query, limit=10)
        cpu["hybrid_cold"].append((time.process_time() - c0) * 1000)

    def warm(query):
        embedder.embed_query(query)
        c0 = time.process_time()
        hybrid.recall(query, limit=10)
        cpu["hybrid_warm"].append((time.process_time() - c0) * 1000)

    def embed(query):
        _clear_cache(embedder)
        c0 = time.process_time()
        embedder.embed_query(query)
        cpu["embed"].append((time.process_time() - c0) * 1000)

    def vector(query):
        qvec = embedder.embed_query(query)
        c0 = time.process_time()
        store.search(qvec, 64)
        store.spread(qvec)
        cpu["vector"].append((time.process_time() - c0) * 1000)

    steps = [keyword_recall, cold, warm, embed, vector]
    load0 = _load()
    for number in range(rounds * len(qs)):
        query = qs[number % len(qs)]
        turn = number % len(steps)
        for step in steps[turn:] + steps[:turn]:
            step(query)
    out = {name: _stats(values) for name, values in cpu.items()}
    out["load"] = [load0, _load()]
    out["vectors"] = store.count()
    engine.stop()
    hybrid.close()
    keyword.close()
    return out


def probe_rss(root: Path, mode: str) -> dict:
    from mnemon_ls.spaces import SpacesService

    before = _status()
    engine = _engine() if mode == "hybrid" else None
    service = SpacesService(root, semantic=engine)
    for number, query in enumerate(_queries()):
        if engine is not None:
            _clear_cache(engine.embedder())
        service.recall(query, limit=10)
    if engine is not None:
        engine.wait_idle(600)
    out = {"before": before, "after": _status(), "load": _load()}
    if engine is not None:
        engine.stop()
    service.close()
    return out


def _rank(service, query: str, answer: str, quality=None) -> int | None:
    results = service.recall(query, limit=10, quality=quality).to_dict()["results"]
    return next((i for i, r in enumerate(results) if r["content"] == answer), None)


def _cell(table: dict, group: str, name: str, rank: int | None) -> None:
    cell = table.setdefault(group, {}).setdefault(name, {"n": 0, "hit5": 0, "rr": 0.0})
    cell["n"] += 1
    cell["hit5"] += rank is not None and rank < 5
    cell["rr"] += 1 / (rank + 1) if rank is not None else 0.0


def probe_quality(root: Path) -> dict:
    import sqlite3

    import numpy as np

    from mnemon_ls.semantic import vectors as vectors_mod
    from mnemon_ls.spaces import RecallQuality, SpacesService

    balanced = RecallQuality.from_dict({"policy": "balanced-v1"})
    facts = _facts()
    table: dict = {}
    keyword = SpacesService(root)
    for fact in facts:
        for kind in ("paraphrase", "exact"):
            for policy, label in ((None, ""), (balanced, " balanced-v1")):
                _cell(table, kind, "keyword" + label, _rank(keyword, fact[kind], fact["text"], policy))
    keyword.close()
    vector_part: dict = {}
    held = vectors_mod.QUANTIZE_ABOVE
    for name in ("hybrid", "hybrid exact"):
        if name == "hybrid exact":
            vectors_mod.QUANTIZE_ABOVE = 10 ** 9
        engine = _engine()
        service = SpacesService(root, semantic=engine)
        service.recall("warm up", limit=10)
        engine.wait_idle(600)
        for fact in facts:
            for kind in ("paraphrase", "exact"):
                for policy, label in ((None, ""), (balanced, " balanced-v1")):
                    _cell(table, kind, name + label, _rank(service, fact[kind], fact["text"], policy))
                    _cell(table, f"{kind}:{fact['lang']}", name + label,
                          _rank(service, fact[kind], fact["text"], policy))
        if name == "hybrid":  # the tree's vector search against a brute-force scan of the file's float32 vectors
            store = _store(service)
            embedder = engine.embedder()
            path = store.path
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            ids, blobs = [], []
            for key, blob in db.execute("SELECT id, vec FROM vectors WHERE model = ? AND dim = ?",
                                        (store.model, store.dim)):
                ids.append(key)
                blobs.append(blob)
            db.close()
            matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), store.dim)
            del blobs
            items = sqlite3.connect(f"file:{service.provider(service.state().all[0]).db_path}?mode=ro", uri=True)
            fact_ids = {f["text"]: items.execute("SELECT id FROM insights WHERE content = ? AND deleted_at IS NULL",
                                                 (f["text"],)).fetchone()[0] for f in facts}
            items.close()
            for fact in facts:
                for kind in ("paraphrase", "exact"):
                    qvec = embedder.embed_query(fact[kind])
                    scores = matrix @ qvec
                    top = np.argpartition(-scores, 64)[:64]
                    exact = [ids[i] for i in top[np.argsort(-scores[top])]]
                    got = [k for k, _c in store.search(qvec, 64)]
                    cell = vector_part.setdefault(kind, {"n": 0, "recall64": 0.0, "recall5": 0.0, "exact_hit5": 0,
                                                         "approx_hit5": 0})
                    cell["n"] += 1
                    cell["recall64"] += len(set(exact) & set(got)) / 64
                    cell["recall5"] += len(set(exact[:5]) & set(got[:5])) / 5
                    answer = fact_ids.get(fact["text"])
                    cell["exact_hit5"] += answer in exact[:5]
                    cell["approx_hit5"] += answer in got[:5]
            del matrix
        engine.stop()
        service.close()
    vectors_mod.QUANTIZE_ABOVE = held
    return {"table": table, "vector": vector_part, "load": _load()}


def run_probe(args) -> None:
    _tree_imports(args.tree)
    root = Path(args.root)
    if args.probe == "open":
        out = probe_open(root)
    elif args.probe == "cpu":
        out = probe_cpu(root, args.rounds)
    elif args.probe == "rss":
        out = probe_rss(root, args.mode)
    else:
        out = probe_quality(root)
    print(json.dumps(out))


# --------------------------------------------------------------------------- the driver


def _spawn(tree: str, root: Path, probe: str, omp1: bool, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    if omp1:
        env["OMP_NUM_THREADS"] = "1"
    argv = [sys.executable, str(Path(__file__).resolve()), "--probe", probe, "--tree", tree, "--root", str(root)]
    for key, value in extra.items():
        argv += [f"--{key}", str(value)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/")
    if done.returncode != 0:
        raise RuntimeError(f"probe {probe} of {tree} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _copy(space: Path, name: str) -> Path:
    target = CACHE / "runs" / f"{name}-{os.getpid()}"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(space, target, symlinks=True)
    return target


def _git(tree: str) -> str:
    done = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if done.returncode == 0:
        dirty = subprocess.run(["git", "-C", tree, "status", "--porcelain", "--", "mnemon_ls"], capture_output=True,
                               text=True).stdout.strip()
        return done.stdout.strip() + ("+changes" if dirty else "")
    marker = Path(tree) / "COMMIT"
    return marker.read_text().strip() if marker.exists() else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100000)
    parser.add_argument("--real", type=int, default=6000)
    parser.add_argument("--copies", choices=("mix", "noise"), default="mix",
                        help="how the vectors past the real ones are made (module doc)")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the 200 labelled queries (cpu probe)")
    parser.add_argument("--trees", default=f"this={HERE.parent}", help="name=DIR,... (default: this tree)")
    parser.add_argument("--parts", default="open,cpu,rss,quality")
    parser.add_argument("--omp1", action="store_true", help="OMP_NUM_THREADS=1 in the probes (issue 27's runs)")
    parser.add_argument("--out", help="write the result JSON here")
    parser.add_argument("--md", help="print the tables of this result JSON and exit")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        run_probe(args)
        return
    if args.md:
        held = json.loads(Path(args.md).read_text())
        runs = {"": held} if "trees" in held else held  # one run, or runs by name (bench/results/hybrid_100k.json)
        print("\n".join(f"### {name}\n\n{markdown(run)}" if name else markdown(run) for name, run in runs.items()))
        return
    import platform

    space, info = build(args.items, args.real, args.copies)
    trees = [tuple(part.split("=", 1)) for part in args.trees.split(",")]
    parts = args.parts.split(",")
    result = {"space": info, "python": platform.python_version(), "cpus": os.cpu_count(), "omp1": args.omp1,
              "command": " ".join([Path(sys.executable).name, *sys.argv]), "trees": {},
              "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "load_start": os.getloadavg()}
    for name, tree in trees:
        root = _copy(space, name)
        out: dict = {"dir": tree, "commit": _git(tree)}
        for part in parts:
            print(f"[{time.strftime('%H:%M:%S')}] {name}: {part} (load {_load():.1f})", flush=True)
            if part == "open":
                out["open"] = _spawn(tree, root, "open", args.omp1)
            elif part == "cpu":
                out["cpu"] = _spawn(tree, root, "cpu", args.omp1, rounds=args.rounds)
            elif part == "rss":
                out["rss"] = {mode: _spawn(tree, root, "rss", args.omp1, mode=mode) for mode in ("keyword", "hybrid")}
            elif part == "quality":
                out["quality"] = _spawn(tree, root, "quality", args.omp1)
        shutil.rmtree(root)
        result["trees"][name] = out
    result["load_end"] = os.getloadavg()
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(markdown(result))


def markdown(result: dict) -> str:
    """The tables of one result (``--md``)."""
    lines = [f"run {result['started']} - {result.get('finished', '?')}, load {result['load_start'][0]:.1f} at the "
             f"start, {result.get('load_end', [0])[0]:.1f} at the end; OMP_NUM_THREADS=1: {result['omp1']}", ""]
    trees = result["trees"]
    if any("cpu" in t for t in trees.values()):
        lines += ["| tree | keyword CPU ms median / p95 | hybrid cold | hybrid warm (query cached) | embed alone | "
                  "vector search + spread | cold / keyword (median, p95) | warm / keyword (median, p95) | load |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, tree in trees.items():
            cpu = tree.get("cpu")
            if not cpu:
                continue
            k = cpu["keyword"]

            def pair(key):
                return f"{cpu[key]['median']:.2f} / {cpu[key]['p95']:.2f}"

            lines.append(f"| {name} ({tree['commit']}) | {pair('keyword')} | {pair('hybrid_cold')} | "
                         f"{pair('hybrid_warm')} | {pair('embed')} | {pair('vector')} | "
                         f"{cpu['hybrid_cold']['median'] / k['median']:.1f}x, {cpu['hybrid_cold']['p95'] / k['p95']:.1f}x | "
                         f"**{cpu['hybrid_warm']['median'] / k['median']:.1f}x**, "
                         f"{cpu['hybrid_warm']['p95'] / k['p95']:.1f}x | {cpu['load'][0]:.1f}-{cpu['load'][1]:.1f} |")
        lines.append("")
    if any("rss" in t for t in trees.values()):
        lines += ["| tree | keyword VmRSS (anon + file) | hybrid VmRSS (anon + file) | hybrid VmHWM | load |",
                  "|---|---|---|---|---|"]
        for name, tree in trees.items():
            rss = tree.get("rss")
            if not rss:
                continue

            def cell(mode):
                a = rss[mode]["after"]
                return f"{a['VmRSS']:.0f} MiB ({a['RssAnon']:.0f} + {a['RssFile']:.0f})"

            lines.append(f"| {name} | {cell('keyword')} | **{cell('hybrid')}** | "
                         f"{rss['hybrid']['after']['VmHWM']:.0f} MiB | {rss['hybrid']['load']:.1f} |")
        lines.append("")
    if any("open" in t for t in trees.values()):
        lines += ["| tree | first hybrid recall of a process: wall / CPU s | VmHWM after it | second recall CPU ms |",
                  "|---|---|---|---|"]
        for name, tree in trees.items():
            op = tree.get("open")
            if op:
                lines.append(f"| {name} | {op['first_recall_wall_s']:.2f} / {op['first_recall_cpu_s']:.2f} | "
                             f"{op['VmHWM']:.0f} MiB | {op['second_recall_cpu_ms']:.1f} |")
        lines.append("")
    if any("quality" in t for t in trees.values()):
        names = ["keyword", "hybrid", "hybrid exact", "keyword balanced-v1", "hybrid balanced-v1",
                 "hybrid exact balanced-v1"]
        lines += ["hit@5 / MRR (limit 10; `hybrid exact`: the same recall with the vector search forced exact)", "",
                  "| tree | queries | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
        for name, tree in trees.items():
            q = tree.get("quality")
            if not q:
                continue
            for group in sorted(q["table"], key=lambda g: (":" in g, g)):
                row = q["table"][group]
                cells = []
                for col in names:
                    c = row.get(col)
                    cells.append(f"{c['hit5']}/{c['n']} / {c['rr'] / c['n']:.3f}" if c else "")
                lines.append(f"| {name} | {group} | " + " | ".join(cells) + " |")
        lines += ["", "| tree | queries | vector search recall@64 vs brute force | recall@5 | fact in top 5: brute force / "
                  "the tree's search |", "|---|---|---|---|---|"]
        for name, tree in trees.items():
            q = tree.get("quality")
            if not q:
                continue
            for kind, c in q["vector"].items():
                lines.append(f"| {name} | {kind} | {c['recall64'] / c['n']:.3f} | {c['recall5'] / c['n']:.3f} | "
                             f"{c['exact_hit5']} / {c['approx_hit5']} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
