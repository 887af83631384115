"""Recall through the language server at 100,000 items against its floor (issue 27 item 5).

Usage::

    python bench/recall_100k.py [--label after] [--requests 400] [--items 100000] [--repo DIR] [--out DIR]

Set-up (not timed; cached under ``/tmp/mnemon-bench-recall100k-<DATASET>-<items>/``, so a rerun starts at
once; delete the directory to rebuild, or change :data:`DATASET` when the generated data changes):

- a git repository whose storage root is ``<repo>/.mnemon`` (``storageScope: workspace``) with one active
  native Memory Space (``mnemon.db``) of ``--items`` items from ``bench/bench_spaces.py``'s generator (half
  English from a Zipf vocabulary, half Chinese, an identifier each, one year of times), plus the identifier
  decoy set of ``bench_spaces.ranking_items`` (15 identifiers such as ``retry_backoff``, each with one exact
  item and 8 near-miss decoys: ``retry_backoff_ms``, ``max_retry_backoff``...), all written by the project's
  own import path (``NativeProvider.import_items``: edges, side index) in a child running the measured code;
- ``floor.db``: a plain SQLite FTS5 ``trigram`` table over the same texts (rowid = order of import);
- 200 queries of the generator (1/3 English words, 1/3 Chinese fragments, 1/3 identifiers).

Before the timing, a child running the measured code opens the root (a side index of another schema is
rebuilt there: derived data, timed as "index open") and counts, with ``sqlite3``'s ``set_trace_callback`` on
both of the provider's connections, the SQL statements of every recall of the 200 queries
(``SpacesService.recall``, the language server's path below the surface): on the side index (the search)
and on ``mnemon.db`` (snapshot, freshness check, neighbour expansion, item load), and the candidates the
side index hands to the scoring.

Timed (wall, ``time.perf_counter_ns`` in this process, over pipes with ``bench/bench_lsp.py``'s minimal
JSON-RPC client): ``--requests`` round trips of ``mnemon/recall`` (``{"query"}``: defaults, limit 10, mode
smart, semantic off) to ``python -m mnemon_ls serve`` and, interleaved request by request (the order rotates),
of ``bench/recall`` to two floors (:data:`FLOOR_SERVER`): an empty pygls ``LanguageServer`` whose one custom
request runs ``SELECT rowid, content FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10`` on ``floor.db`` and
answers the rows, the query matched as one quoted trigram phrase (the floor of the aims, as
``bench_spaces``' trigram peer matches an identifier), and in a second process its words of 3+ characters as
quoted phrases joined by OR (``words``: far slower on common words, shown for scale). Median and
nearest-rank p95 of each, also per query kind, their ratios, the CPU time each server spent over the timed
requests (``/proc/<pid>/stat`` utime+stime, per request), the 1-minute load average before and after, and
the identifier-decoy hit@5 (``mnemon/recall`` with ``limit`` 5: the exact item among the results) of the 15
identifiers through the language server.

``--repo DIR`` measures another checkout (children run with ``PYTHONPATH=DIR`` and the cache as their working
directory, so its ``mnemon_ls`` is imported), e.g. the code before a change: ``mkdir /tmp/base && git archive
<commit> | tar -x -C /tmp/base; python bench/recall_100k.py --label before --repo /tmp/base --commit <commit>``.
Both use the same cached root; the first recall of code with another index schema rebuilds the side index.

Aims (issue 27 item 5): median <= 1.3x the floor, p95 <= 1.5x the floor's p95, one side-index statement per
recall, decoy hit@5 at or above the run before. Results: merged by ``--label`` into ``<out>/recall_100k.json``;
``<out>/recall_100k.md`` is rewritten from every run there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_lsp import RawClient  # noqa: E402

#: Version of the generated data set (bump when the generator, the decoys or the queries change).
DATASET = "v1"
QUERIES = 200
AIMS = {"median": 1.3, "p95": 1.5, "statements": 1}

#: Builds the root in a child running the measured code: ``<workspace> <items> <bench dir> <floor db>``;
#: prints ``{"queries", "exact": {identifier: item id}, "seconds"}``.
BUILD = r'''
import json, sqlite3, subprocess, sys, time
from pathlib import Path
sys.path.insert(1, sys.argv[3])
from bench_spaces import Generator, ranking_items
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
ws, count, floor = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[4])
subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
(ws / "README.md").write_text("bench\n")
subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
subprocess.run(["git", "-C", str(ws), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                "commit", "-qm", "init"], check=True)
started = time.perf_counter()
host = WorkspaceHost(ws, load_settings({"storageScope": "workspace"}))
record = host.spaces.create_space("Project", "Build and service facts", active=True).record
provider = host.spaces.provider(record)
gen = Generator(seed=7)
items = [gen.item(i) for i in range(count)]
for start in range(0, count, 1000):
    provider.import_items(items[start:start + 1000], batch=1000)
    print(f"  {start + 1000} items, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
extra, exact = ranking_items(Generator(seed=15))
report = provider.import_items(extra, batch=1000)
ids = {row["source_id"]: row["id"] for row in report["results"]}
host.close()
seconds = time.perf_counter() - started
db = sqlite3.connect(floor)
db.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')")
db.executemany("INSERT INTO t(rowid, content) VALUES(?, ?)",
               enumerate([it.content for it in items] + [it.content for it in extra], start=1))
db.commit()
db.close()
print(json.dumps({"queries": gen.queries(''' + str(QUERIES) + r''', [it.content for it in items[:2000]]),
                  "exact": {ident: ids[key] for ident, key in exact.items()}, "seconds": round(seconds, 1)}))
'''

#: Counts the SQL statements of each recall in a child running the measured code: ``<workspace>``, the
#: queries as JSON on stdin; prints ``{"index_open_s", "index": [...], "store": [...], "nested": [...],
#: "candidates": [...]}`` (statements per recall; ``nested``: those FTS5 ran inside them, on either connection).
STATEMENTS = r'''
import json, sys, time
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
queries = json.load(sys.stdin)
host = WorkspaceHost(sys.argv[1], load_settings({"storageScope": "workspace"}))
record = [r for r in host.spaces.state().all if r.active][0]
provider = host.spaces.provider(record)
started = time.perf_counter()
host.spaces.recall(queries[0])  # opens the store and the side index (an index of another schema is rebuilt)
opened = time.perf_counter() - started
counts = {"index": 0, "store": 0, "nested": 0}
def counter(kind):
    def trace(statement):  # "-- ..." are the statements a virtual table (FTS5) runs inside one of ours
        counts["nested" if statement.startswith("-- ") else kind] += 1
    return trace
provider.index.connect().set_trace_callback(counter("index"))
provider._conn().set_trace_callback(counter("store"))
sizes = []
search = provider.index.search
def counted_search(*args, **kwargs):
    found = search(*args, **kwargs)
    sizes.append(len(found[0] if isinstance(found, tuple) else found))  # (rows, strategy) before schema 3
    return found
provider.index.search = counted_search
out = {"index_open_s": round(opened, 2), "index": [], "store": [], "nested": [], "candidates": []}
for query in queries:
    counts.update(index=0, store=0, nested=0)
    before = len(sizes)
    host.spaces.recall(query)
    out["index"].append(counts["index"])
    out["store"].append(counts["store"])
    out["nested"].append(counts["nested"])
    out["candidates"].append(sum(sizes[before:]))
host.close()
print(json.dumps(out))
'''

#: The floor: an empty pygls ``LanguageServer`` answering one custom request with a plain FTS5 trigram query:
#: ``<floor db> phrase`` matches the whole query as one quoted phrase (as ``bench_spaces``' trigram peer does),
#: ``<floor db> words`` its words of 3+ characters as quoted phrases joined by OR.
FLOOR_SERVER = r'''
import sqlite3, sys
from pygls.lsp.server import LanguageServer
db = sqlite3.connect(sys.argv[1], check_same_thread=False)
server = LanguageServer("floor", "0")

def match(query):
    if sys.argv[2] == "phrase":
        return '"' + query.replace('"', '""') + '"'
    words = [w for w in query.split() if len(w) >= 3] or [query]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)

@server.feature("bench/recall")
def recall(ls, params):
    rows = db.execute("SELECT rowid, content FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10",
                      (match(params.query),)).fetchall()
    return {"results": [{"id": r[0], "content": r[1]} for r in rows]}

server.start_io()
'''


def cache_dir(items: int) -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp")) / f"mnemon-bench-recall100k-{DATASET}-{items}"


def child_env(cache: Path, repo: Path) -> dict[str, str]:
    """The environment of every child: no ``MNEMON_*``/``GIT_*`` of the caller, the cache's data dir and
    home, semantic recall off (this measures keyword recall), the measured checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "GIT_", "CLAUDE_"))}
    env["MNEMON_DATA_DIR"] = str(cache / "data")
    env["HOME"] = str(cache / "home")
    env["MNEMON_SEMANTIC"] = "off"
    env["PYTHONPATH"] = str(repo)
    return env


def build(cache: Path, items: int, repo: Path) -> dict[str, Any]:
    """The cached root (built once per :data:`DATASET` and size): ``meta.json``'s contents."""
    meta_file = cache / "meta.json"
    if meta_file.exists():
        return json.loads(meta_file.read_text())
    shutil.rmtree(cache, ignore_errors=True)
    (cache / "home").mkdir(parents=True)
    (cache / "data").mkdir()
    print(f"building {items:,} items under {cache} (once) ...", file=sys.stderr)
    proc = subprocess.run([sys.executable, "-c", BUILD, str(cache / "ws"), str(items), str(HERE),
                           str(cache / "floor.db")], env=child_env(cache, repo), cwd=cache,
                          stdout=subprocess.PIPE, check=True)
    meta = json.loads(proc.stdout)
    meta["items"] = items
    meta_file.write_text(json.dumps(meta))
    return meta


def count_statements(cache: Path, repo: Path, queries: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", STATEMENTS, str(cache / "ws")], input=json.dumps(queries).encode(),
                          env=child_env(cache, repo), cwd=cache, stdout=subprocess.PIPE, check=True)
    return json.loads(proc.stdout)


def cpu_ms(pid: int) -> float:
    """utime + stime of process ``pid`` in ms (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


#: The servers of one run: ours and the two floors (:data:`FLOOR_SERVER` with each match form).
TARGETS = ("ours", "floor", "words")
#: Kinds of the generator's queries, by index modulo 3 (``bench_spaces.Generator.queries``).
KINDS = ("english words", "chinese fragment", "identifier")


def stats(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median": round(statistics.median(values), 3),
            "p95": round(nearest_rank(values, 0.95), 3)}


async def measure(cache: Path, repo: Path, meta: dict[str, Any], requests: int, warmup: int) -> dict[str, Any]:
    env = child_env(cache, repo)
    folder = cache / "ws"
    clients = {name: RawClient() for name in TARGETS}
    await clients["ours"].spawn(env, cache, [sys.executable, "-m", "mnemon_ls", "serve"])
    for name in ("floor", "words"):
        await clients[name].spawn(env, cache, [sys.executable, "-c", FLOOR_SERVER, str(cache / "floor.db"),
                                               "phrase" if name == "floor" else "words"])
    methods = {"ours": "mnemon/recall", "floor": "bench/recall", "words": "bench/recall"}
    try:
        await clients["ours"].initialize(folder)
        for name in ("floor", "words"):
            await clients[name].request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
        for client in clients.values():
            client.notify("initialized", {})
        queries = meta["queries"]
        first = await clients["ours"].request("mnemon/recall", {"query": queries[0]}, timeout=1800)
        assert first["results"], first
        hits = 0
        for ident, exact in meta["exact"].items():
            found = await clients["ours"].request("mnemon/recall", {"query": ident, "limit": 5})
            hits += exact in [r["id"] for r in found["results"][:5]]
        times: dict[str, list[tuple[int, float]]] = {name: [] for name in TARGETS}
        results: dict[str, list[int]] = {name: [] for name in TARGETS}
        cpu: dict[str, float] = {}
        for n in range(requests + warmup):
            if n == warmup:
                cpu = {name: cpu_ms(client.proc.pid) for name, client in clients.items()}
            index = n % len(queries)
            shift = n % len(TARGETS)  # the order rotates: each server goes first, second, third in turn
            for name in TARGETS[shift:] + TARGETS[:shift]:
                started = time.perf_counter_ns()
                answer = await clients[name].request(methods[name], {"query": queries[index]})
                elapsed = (time.perf_counter_ns() - started) / 1e6
                if n >= warmup:
                    times[name].append((index % 3, elapsed))
                    results[name].append(len(answer["results"]))
        spent = {name: (cpu_ms(client.proc.pid) - cpu[name]) / requests for name, client in clients.items()}
    finally:
        for client in clients.values():
            await client.close()
    out: dict[str, Any] = {"hit5": hits, "decoy_queries": len(meta["exact"])}
    for name in TARGETS:
        out[name] = {**stats([t for _, t in times[name]]), "cpu_ms": round(spent[name], 3),
                     "results_mean": round(statistics.mean(results[name]), 2),
                     "kinds": {KINDS[k]: stats([t for kind, t in times[name] if kind == k]) for k in range(3)}}
    for floor, prefix in (("floor", ""), ("words", "words_")):
        out[prefix + "ratio_median"] = round(out["ours"]["median"] / out[floor]["median"], 3)
        out[prefix + "ratio_p95"] = round(out["ours"]["p95"] / out[floor]["p95"], 3)
        out[prefix + "ratio_cpu"] = round(out["ours"]["cpu_ms"] / out[floor]["cpu_ms"], 3) \
            if out[floor]["cpu_ms"] else None
    return out


def commit_of(repo: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def spread(values: list[int]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "mean": round(statistics.mean(values), 2)}


def _mark(value: float | None, aim: float) -> str:
    if value is None:
        return "-"
    return f"**{value:.2f}x**" if value <= aim else f"{value:.2f}x"


def render(stored: dict[str, Any]) -> str:
    """The Markdown page of every run in ``stored`` (label -> run; the key ``notes``: a list of paragraphs)."""
    runs = {label: run for label, run in stored.items() if label != "notes"}
    lines = [
        "# Recall through the language server at 100,000 items, against its floor",
        "",
        "`python bench/recall_100k.py --label LABEL` (module doc). `mnemon/recall` (defaults: limit 10, smart, "
        "semantic off) to `python -m mnemon_ls serve` against an empty pygls server answering a custom request "
        "with a plain FTS5 trigram `MATCH ... ORDER BY rank LIMIT 10` over the same texts, interleaved request by "
        "request (the order rotating); ms, wall time over pipes; CPU = the server process's utime+stime per "
        "request. The floor matches the whole query as one trigram phrase; the second floor (\"words\") its words "
        "of 3+ characters joined by OR, which costs far more on common words. Aims (issue 27 item 5, against the "
        "first floor): median <= 1.3x, p95 <= 1.5x, one side-index statement per recall, decoy hit@5 not lower. "
        "A ratio within its aim is in bold.",
        "",
        "| run | commit | items | requests | ours median | ours p95 | floor median | floor p95 | **ratio median** | "
        "**ratio p95** | ours CPU/req | floor CPU/req | CPU ratio | load before / after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, run in runs.items():
        t = run["timing"]
        lines.append(
            f"| {label} | {run['commit']} | {run['items']:,} | {t['ours']['n']} | {t['ours']['median']:.2f} | "
            f"{t['ours']['p95']:.2f} | {t['floor']['median']:.2f} | {t['floor']['p95']:.2f} | "
            f"{_mark(t['ratio_median'], AIMS['median'])} | {_mark(t['ratio_p95'], AIMS['p95'])} | "
            f"{t['ours']['cpu_ms']:.2f} | {t['floor']['cpu_ms']:.2f} | "
            f"{t['ratio_cpu']:.2f}x | {run['load_before']:.2f} / {run['load_after']:.2f} |")
    lines += ["", "By query kind (median / p95, ms), and the second floor (words joined by OR) of the same run:", "",
              "| run | kind | n | ours | floor | ratio median | words floor | ratio median to it |",
              "|---|---|---:|---|---|---:|---|---:|"]
    for label, run in runs.items():
        t = run["timing"]
        for kind in KINDS:
            o, f, w = t["ours"]["kinds"][kind], t["floor"]["kinds"][kind], t["words"]["kinds"][kind]
            lines.append(f"| {label} | {kind} | {o['n']} | {o['median']:.2f} / {o['p95']:.2f} | {f['median']:.2f} / "
                         f"{f['p95']:.2f} | {o['median'] / f['median']:.2f}x | {w['median']:.2f} / {w['p95']:.2f} | "
                         f"{o['median'] / w['median']:.2f}x |")
        w = t["words"]
        lines.append(f"| {label} | all | {w['n']} | {t['ours']['median']:.2f} / {t['ours']['p95']:.2f} | "
                     f"{t['floor']['median']:.2f} / {t['floor']['p95']:.2f} | {t['ratio_median']:.2f}x | "
                     f"{w['median']:.2f} / {w['p95']:.2f} (CPU {w['cpu_ms']:.2f}/req) | {t['words_ratio_median']:.2f}x |")
    lines += ["", "| run | side-index statements per recall (min / median / max) | mnemon.db statements per recall "
                  "(min / median / max) | statements FTS5 ran inside them (median) | side-index candidates per recall "
                  "(min / median / max) | index open (s) | decoy hit@5 |",
              "|---|---|---|---:|---|---:|---:|"]
    for label, run in runs.items():
        s = run["statements"]
        i, st, c = spread(s["index"]), spread(s["store"]), spread(s["candidates"])
        lines.append(f"| {label} | {i['min']} / {i['median']:g} / {i['max']} | {st['min']} / {st['median']:g} / "
                     f"{st['max']} | {statistics.median(s['nested']):g} | {c['min']} / {c['median']:g} / {c['max']} | "
                     f"{s['index_open_s']} | {run['timing']['hit5']} / {run['timing']['decoy_queries']} |")
    if stored.get("notes"):
        lines += ["", "## Notes", ""]
        for note in stored["notes"]:
            lines += [note, ""]
    lines += ["", "Runs:", ""]
    for label, run in runs.items():
        lines.append(f"- {label}: {run['date']}, Python {run['python']}, SQLite {run['sqlite']}, "
                     f"{run['machine']}; command `{run['command']}`" + (f"; {run['note']}" if run.get("note") else ""))
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="run", help="name of this run in the results (before, after...)")
    parser.add_argument("--requests", type=int, default=400, help="timed recall requests per server")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="checkout whose code is measured")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--note", default="", help="a sentence stored with the run")
    parser.add_argument("--commit", default="", help="the measured code's commit (default: --repo's HEAD)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--render", action="store_true", help="rewrite recall_100k.md from the JSON only")
    args = parser.parse_args()
    store = args.out / "recall_100k.json"
    if args.render:
        (args.out / "recall_100k.md").write_text(render(json.loads(store.read_text())))
        return 0
    repo = args.repo.resolve()
    cache = cache_dir(args.items)
    meta = build(cache, args.items, repo)
    print("counting statements (opens the root with the measured code) ...", file=sys.stderr)
    statements = count_statements(cache, repo, meta["queries"])
    load_before = os.getloadavg()[0]
    print(f"timing {args.requests} recalls against the floor (load {load_before:.2f}) ...", file=sys.stderr)
    timing = asyncio.run(measure(cache, repo, meta, args.requests, args.warmup))
    load_after = os.getloadavg()[0]
    run = {"commit": args.commit or commit_of(repo), "items": args.items, "timing": timing, "statements": statements,
           "load_before": load_before, "load_after": load_after,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(),
           "sqlite": sqlite3.sqlite_version, "machine": f"{os.cpu_count()} cores {platform.machine()}",
           "command": shlex.join(["python", "bench/recall_100k.py", *sys.argv[1:]]), "note": args.note,
           "build_s": meta.get("seconds")}
    print(json.dumps({k: run[k] for k in ("commit", "timing", "load_before", "load_after")}, indent=1))
    s = statements
    print(f"side-index statements/recall {spread(s['index'])}; mnemon.db {spread(s['store'])}; "
          f"candidates {spread(s['candidates'])}; index open {s['index_open_s']} s")
    if args.no_write:
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    runs = json.loads(store.read_text()) if store.exists() else {}
    runs[args.label] = run
    store.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n")
    (args.out / "recall_100k.md").write_text(render(runs))
    print(f"written to {store} and recall_100k.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
