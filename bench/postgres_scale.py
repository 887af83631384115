"""Team memory at scale (issue 25 item 7): keyword recall of a PostgreSQL space at 100,000 and 1,000,000 items
next to the embedded (native) store at 100,000, and eight concurrent writers on each.

Usage (needs the provider and its test extra: ``pip install -e providers/postgres[test]``, which brings the
pgserver wheel's PostgreSQL 16)::

    python bench/postgres_scale.py [--label LABEL] [--sizes 100000,1000000] [--requests 300] [--out DIR]

Set-up (not timed, reported): one PostgreSQL 16 server from the pgserver wheel in a temporary directory,
durable (``fsync`` on, ``shared_buffers`` 512 MB, ``max_wal_size`` 8 GB), and one database per size,
read and written as an ordinary role granted the tables as the provider's README says (row-level security
on; the server's admin is a superuser, which PostgreSQL exempts from it). The items are
``bench/bench_spaces.py``'s generator (seed 7: half English from a Zipf vocabulary, half Chinese, an
identifier each, one year of times), the first ``size`` of one sequence, so the 100k sets are the same texts
in both stores. A database is made at schema version 3 and its items copied in (``COPY``, the terms the
provider indexes computed here as :func:`mnemon_ls_provider_postgres.rows.item_terms` does), then the provider
opens it, which migrates it to version 4: the postings backfill is timed and reported. The native store is a
workspace root with one active Memory Space filled by ``NativeProvider.import_items``.

Timed: ``--requests`` queries of the generator (1/3 English words, 1/3 Chinese fragments, 1/3 identifiers,
``Generator.queries``), each run once on every store after one untimed pass over all of them (caches warm),
interleaved query by query with the order rotating: ``search(query, limit=10)`` of the SpaceProvider protocol
(``NativeProvider.search``, ``PostgresSpace.search``: what ``mnemon/recall`` calls below the service), wall time
(``time.perf_counter_ns``) in this process, which also waits for the PostgreSQL server's work. Median and
nearest-rank p95 per store, the ratios to native at 100k, and the load average before and after.

Agreement: for 30 of the queries, the top 10 recall answers at the largest size against the top 10 it answers
when every item holding a query term is a candidate (what recall did before version 4; the same scoring), as
the share of that top 10 found.

Writers: eight processes start together (each opened first, then released by one line on stdin) and
remember 100 texts each, the first 10 the same for all eight; throughput = 8 x 100 / the wall time from the
release to the last writer's answer; then the store is checked: every distinct text once, nothing lost, no
duplicate. The same on a native space (eight processes, one ``mnemon.db``, its file lock).

Goal (issue 25 item 7): recall p95 at 1M within 2x native at 100k. Results: merged by ``--label`` into
``<out>/postgres_scale.json``; ``<out>/postgres_scale.md`` is rewritten from every run there.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from bench_spaces import Generator  # noqa: E402

AIM = 2.0
#: The bench server: durable (fsync on), a larger cache, checkpoints spaced for the bulk load.
SERVER_SETTINGS = "-c shared_buffers=512MB -c max_wal_size=8GB -c checkpoint_timeout=30min"
AGREEMENT_QUERIES = 30
WRITERS, PER_WRITER, SHARED = 8, 100, 10

#: One writer (``argv``: ``native <workspace>`` or ``postgres <service JSON> <space key>``, ``<writer number>``):
#: opens its store, prints ``ready``, waits for ``go``, remembers, prints ``[[text, action], ...]``.
WRITER = r'''
import json, sys
kind, number = sys.argv[1], int(sys.argv[-1])
if kind == "native":
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.settings import load_settings
    host = WorkspaceHost(sys.argv[2], load_settings({"storageScope": "workspace"}))
    record = [r for r in host.spaces.state().all if r.active][0]
    space = host.spaces.provider(record)
else:
    from mnemon_ls_provider_postgres.engine import PostgresEngine
    engine = PostgresEngine.open(json.loads(sys.argv[2]))
    space = engine.space({"spaceKey": sys.argv[3]}, space_id="postgres-bench")
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
out = []
for i in range(%d):
    text = f"shared decision {i} about the release train" if i < %d else f"writer {number} note {i} on the queue depth"
    out.append([text, space.remember(text, category="decision", importance=3, tags=[], entities=[], source="agent")["action"]])
print(json.dumps(out), flush=True)
''' % (PER_WRITER, SHARED)


class Corpus(Generator):
    """:class:`bench_spaces.Generator` with the cumulative weights computed once (``random.choices`` makes the
    same picks from ``cum_weights`` as from ``weights``: the same sequence, without summing 4,000 weights per
    item)."""

    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed)
        self.cumulative = list(itertools.accumulate(self.weights))

    def english(self) -> str:
        words = self.rng.choices(self.words, cum_weights=self.cumulative, k=self.rng.randint(10, 28))
        return " ".join(words).capitalize() + "."


def store_name(size: int) -> str:
    """``postgres-100k``, ``postgres-1000k``; ``postgres-300`` below a thousand items."""
    return f"postgres-{size // 1000}k" if size >= 1000 else f"postgres-{size}"


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-len(ordered) * q // 100) - 1))] if ordered else float("nan")


def load_postgres(server: Any, dbname: str, items: list[Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A database of ``items`` at schema version 3 (``COPY``), then opened by the provider (migrated to 4).
    Returns ``(service, space key, {"copy_s", "migrate_s", "postings", "size_mib"})``."""
    import psycopg

    from mnemon_ls_provider_postgres import schema
    from mnemon_ls_provider_postgres.engine import PostgresEngine
    from mnemon_ls_provider_postgres.rows import content_hash, item_terms

    server.sql(f'CREATE DATABASE "{dbname}"')
    service = {"host": server.host, "port": server.port, "database": dbname, "user": server.user,
               "password": server.password, "semantic": "false"}
    info = {"host": server.host, "port": server.port, "dbname": dbname, "user": server.user,
            "password": server.password}
    started = time.perf_counter()
    with psycopg.connect(**info, autocommit=True) as conn:
        schema.migrate(conn, "mnemon", dbname, target=3)
        conn.execute("INSERT INTO mnemon.spaces (id, name, access, author) VALUES ('bench', 'Team', 'team', 'bench')")
        with conn.transaction():
            with conn.cursor().copy("COPY mnemon.items (id, space_id, content, content_hash, category, importance, "
                                    "tags, entities, source, author, terms, created_at, updated_at) FROM STDIN") as copy:
                for item in items:
                    copy.write_row((item.id, "bench", item.content, content_hash(item.content), item.category,
                                    item.importance, item.tags, item.entities, item.source, "bench",
                                    item_terms(item.content, item.tags, item.entities), item.created_at,
                                    item.created_at))
        conn.execute("VACUUM ANALYZE mnemon.items")
    copied = time.perf_counter() - started
    started = time.perf_counter()
    engine = PostgresEngine.open(service)  # 3 -> 4: the postings backfill
    migrated = time.perf_counter() - started
    assert engine.migrated == (3, 4), engine.migrated
    engine.close()
    with psycopg.connect(**info, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE mnemon.postings")
        postings = conn.execute("SELECT count(*) FROM mnemon.postings").fetchone()[0]
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        # an ordinary role granted the tables as the README says: row-level security applies (the server's
        # admin is a superuser, which PostgreSQL exempts from it)
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'teammate') THEN "
                     "CREATE ROLE teammate LOGIN PASSWORD 'teammate-pw'; END IF; END $$")
        for grant in ("GRANT USAGE ON SCHEMA mnemon TO teammate", "GRANT SELECT ON mnemon.meta TO teammate",
                      "GRANT SELECT, INSERT, UPDATE ON mnemon.spaces, mnemon.items TO teammate",
                      "GRANT SELECT, INSERT, DELETE ON mnemon.postings TO teammate"):
            conn.execute(grant)
    service = {**service, "user": "teammate", "password": "teammate-pw", "author": "teammate"}
    return service, "bench", {"copy_s": round(copied, 1), "migrate_s": round(migrated, 1), "postings": postings,
                              "size_mib": round(size / 2**20)}


def load_native(workdir: Path, items: list[Any]) -> tuple[Any, Any, Path, dict[str, Any]]:
    """A workspace root with one active native space of ``items``: ``(host, provider, workspace, {"import_s"})``."""
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.settings import load_settings

    ws = workdir / "ws"
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    (ws / "README.md").write_text("bench\n")
    subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
    subprocess.run(["git", "-C", str(ws), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                    "commit", "-qm", "init"], check=True)
    started = time.perf_counter()
    host = WorkspaceHost(ws, load_settings({"storageScope": "workspace"}))
    record = host.spaces.create_space("Project", "Build and service facts", active=True).record
    provider = host.spaces.provider(record)
    for start in range(0, len(items), 5000):
        provider.import_items(items[start:start + 5000], batch=5000)
    return host, provider, ws, {"import_s": round(time.perf_counter() - started, 1)}


def unbounded_top(space: Any, query: str, limit: int = 10) -> list[str]:
    """What recall answers when every item holding a query term is a candidate (the rarity cut off:
    :data:`mnemon_ls_provider_postgres.recall.RARE_ITEMS` set beyond any count), as before schema 4, for the
    agreement figure: the same scoring, only the candidates unbounded."""
    from mnemon_ls_provider_postgres import recall

    kept = recall.RARE_ITEMS
    recall.RARE_ITEMS = 10**12
    try:
        return [i.id for i in space.search(query, limit=limit).items]
    finally:
        recall.RARE_ITEMS = kept


def writers(kind: str, args: list[str]) -> dict[str, Any]:
    """Eight writer processes (:data:`WRITER`) released together: ``{"seconds", "per_s", "answers"}``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "GIT_"))}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, kind, *args, str(n)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env) for n in range(WRITERS)]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready"
        started = time.perf_counter()
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for proc in procs]
        seconds = time.perf_counter() - started
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
    return {"seconds": round(seconds, 2), "per_s": round(WRITERS * PER_WRITER / seconds, 1), "answers": answers}


def check_writes(answers: list[list[list[str]]], stored: list[str]) -> dict[str, Any]:
    """Nothing lost, nothing duplicated: every text written is stored exactly once; each shared text was
    ``added`` by one writer and ``skipped`` by the seven others."""
    written = {text for answer in answers for text, _ in answer}
    added = [text for answer in answers for text, action in answer if action == "added"]
    return {"distinct_written": len(written), "stored": len(stored), "lost": len(written - set(stored)),
            "duplicated": len(stored) - len(set(stored)), "added": len(added),
            "ok": written == set(stored) and len(stored) == len(set(stored)) == len(added)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from postgres_server import PostgresServer, pgserver_bin

    from mnemon_ls_provider_postgres.engine import PostgresEngine

    sizes = sorted(int(s) for s in args.sizes.split(","))
    bin_dir = pgserver_bin()
    if bin_dir is None:
        raise SystemExit("the pgserver wheel is missing: pip install -e 'providers/postgres[test]'")
    gen = Corpus(seed=7)
    started = time.perf_counter()
    items = [gen.item(i) for i in range(sizes[-1])]
    queries = gen.queries(args.requests, [it.content for it in items[:2000]])
    print(f"generated {len(items):,} items in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    workdir = Path(tempfile.mkdtemp(prefix="mnemon-pgscale-"))
    os.environ["HOME"] = str(workdir / "home")
    os.environ["MNEMON_SEMANTIC"] = "off"
    for name in [k for k in os.environ if k.startswith("MNEMON_") and k != "MNEMON_SEMANTIC"]:
        del os.environ[name]
    (workdir / "home").mkdir()
    server = PostgresServer(bin_dir, settings=SERVER_SETTINGS).start()
    result: dict[str, Any] = {"sizes": sizes, "requests": len(queries), "setup": {}}
    try:
        host, native, ws, result["setup"]["native-100k"] = load_native(workdir, items[:100_000])
        print(f"native 100k: {result['setup']['native-100k']}", file=sys.stderr)
        stores: dict[str, Any] = {"native-100k": native}
        engines, services = [], []
        for size in sizes:
            service, key, result["setup"][store_name(size)] = load_postgres(server, f"bench{size}", items[:size])
            services.append(service)
            print(f"postgres {size:,}: {result['setup'][store_name(size)]}", file=sys.stderr)
            engine = PostgresEngine.open(service)
            engines.append(engine)
            stores[store_name(size)] = engine.space({"spaceKey": key}, space_id=f"postgres-{size}")
        names = list(stores)
        for query in queries:  # warm
            for name in names:
                stores[name].search(query, limit=10)
        times: dict[str, list[float]] = {name: [] for name in names}
        load_before = os.getloadavg()
        for n, query in enumerate(queries):
            order = names[n % len(names):] + names[:n % len(names)]
            for name in order:
                t0 = time.perf_counter_ns()
                stores[name].search(query, limit=10)
                times[name].append((time.perf_counter_ns() - t0) / 1e6)
        load_after = os.getloadavg()
        result["recall"] = {name: {"p50": round(nearest_rank(v, 50), 2), "p95": round(nearest_rank(v, 95), 2)}
                            for name, v in times.items()}
        base = result["recall"]["native-100k"]
        for name in names:
            result["recall"][name]["ratio_p50"] = round(result["recall"][name]["p50"] / base["p50"], 2)
            result["recall"][name]["ratio_p95"] = round(result["recall"][name]["p95"] / base["p95"], 2)
        result["load"] = [round(load_before[0], 2), round(load_after[0], 2)]
        largest = stores[names[-1]]
        shares = []
        for query in queries[:AGREEMENT_QUERIES]:
            want = unbounded_top(largest, query)
            if want:
                got = {i.id for i in largest.search(query, limit=10).items}
                shares.append(len(got & set(want)) / len(want))
        result["agreement"] = {"queries": len(shares), "mean": round(sum(shares) / max(1, len(shares)), 3),
                               "store": names[-1]}
        # eight concurrent writers on each
        team = engines[0].create_namespace("Writers", "eight at once").external_id
        pg = writers("postgres", [json.dumps(services[0]), team])
        stored = [r[0] for r in engines[0].call(lambda conn: conn.execute(
            'SELECT content FROM "mnemon".items WHERE space_id = %s AND deleted_at IS NULL', (team,)).fetchall())]
        pg["check"] = check_writes(pg.pop("answers"), stored)
        host.close()
        host2_ws = workdir / "writers"
        host2, provider2, ws2, _ = load_native(host2_ws, [])
        host2.close()
        nat = writers("native", [str(ws2)])
        from mnemon_ls.host import WorkspaceHost
        from mnemon_ls.settings import load_settings

        host3 = WorkspaceHost(ws2, load_settings({"storageScope": "workspace"}))
        record = [r for r in host3.spaces.state().all if r.active][0]
        provider3 = host3.spaces.provider(record)
        stored = [e.content for e in provider3.export_items()[0]]
        host3.close()
        nat["check"] = check_writes(nat.pop("answers"), stored)
        result["writers"] = {"postgres": pg, "native": nat,
                             "ratio": round(pg["per_s"] / nat["per_s"], 2)}
        for engine in engines:
            engine.close()
    finally:
        server.stop()
    return result


def commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def render(runs: dict[str, Any]) -> str:
    lines = ["# Team memory at scale: PostgreSQL recall at 100k and 1M against native at 100k (issue 25 item 7)", "",
             "`python bench/postgres_scale.py --label LABEL` (module doc): `search(query, limit=10)` of the provider "
             "protocol, wall ms in the calling process (it waits for the server's work too), interleaved query by "
             "query after a warm pass; PostgreSQL 16 from the pgserver wheel, durable (fsync on), one database per "
             f"size; the generator of bench/bench_spaces.py. Goal: p95 at 1M <= {AIM}x native at 100k (in bold when "
             "met). Agreement: the share of the top 10 recall answers with every item holding a query term as a "
             "candidate (as before schema 4) that it answers with the bounded candidates, at the largest size.", "",
             "| run | commit | store | p50 ms | p95 ms | p50 / native | p95 / native | load before / after |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for label, r in runs.items():
        for name, v in r["recall"].items():
            largest = name == store_name(r["sizes"][-1])
            mark = f"**{v['ratio_p95']}x**" if largest and v["ratio_p95"] <= AIM else f"{v['ratio_p95']}x"
            lines.append(f"| {label} | {r['commit']} | {name} | {v['p50']} | {v['p95']} | {v['ratio_p50']}x | {mark} | "
                         f"{r['load'][0]} / {r['load'][1]} |")
    lines += ["", "| run | set-up | agreement @10 at the largest size | 8 writers: PostgreSQL items/s | native items/s | "
              "ratio | nothing lost, nothing duplicated |", "|---|---|---|---:|---:|---:|---|"]
    for label, r in runs.items():
        setup = "; ".join(f"{k}: " + ", ".join(f"{a} {b}" for a, b in v.items()) for k, v in r["setup"].items())
        w = r["writers"]
        ok = "yes" if w["postgres"]["check"]["ok"] and w["native"]["check"]["ok"] else (
            f"NO: {w['postgres']['check']} / {w['native']['check']}")
        lines.append(f"| {label} | {setup} | {r['agreement']['mean']:.3f} over {r['agreement']['queries']} queries | "
                     f"{w['postgres']['per_s']} | {w['native']['per_s']} | {w['ratio']}x | {ok} |")
    lines += ["", "Machine of each run: " + "; ".join(f"{label}: {r['machine']}, {r['date']}" for label, r in runs.items()),
              ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="run")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    measured = commit()  # the code measured: the commit when the run starts
    result = run(args)
    result.update(commit=measured, date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  machine=f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    store = args.out / "postgres_scale.json"
    runs = json.loads(store.read_text()) if store.exists() else {}
    runs[args.label] = result
    store.write_text(json.dumps(runs, indent=2) + "\n")
    (args.out / "postgres_scale.md").write_text(render(runs))
    print(json.dumps({k: result[k] for k in ("recall", "agreement", "writers", "setup", "load")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
