"""Retrieval quality of recall on a coding-memory set (issue 27 item 7; the cases of item 8).

The set is bench/data/retrieval_set.jsonl.gz (bench/retrieval_set.py makes it: 2,480 memories and 502 queries,
English and Chinese, in thirteen categories, four of them the cases of item 8: bench/retrieval_set_item8.py).
One workspace (a real git repository with a ``main`` branch and the set's feature branches, a custom storage root), one native Memory Space (``mnemon.db``) that every memory is
remembered into through the operation layer (``spaces.remember`` via :func:`mnemon_ls.ops.execute.call`, as the
command line runs it), in the order of its ``createdAt`` with the Host's clock set to it, on its branch with
``scopeToBranch`` when it has one. The hybrid host's semantic engine embeds them meanwhile (the bundled
multilingual-e5-small); the queries run with the clock at :data:`retrieval_set.NOW`, each with its ``branch``
checked out.

Systems, side by side on the same store in one run (``limit`` 10 everywhere):

- ``keyword``: ``spaces.recall`` on a host with ``semantic.enabled`` false (so ``recallPolicy`` auto is
  strict-v1), as the MCP server runs it (``surface="mcp"``: the assistant's answer, after its policy and what it
  withholds); the results counted are the ones the assistant is sent (``results``; what is withheld is only
  counted in the answer's ``withheld``).
- ``hybrid``: the same with the semantic extra on (auto is balanced-v1; results found by meaning alone with tier
  ``low`` are withheld from the assistant).
- ``fts5``: a plain SQLite FTS5 table over the same texts, ``tokenize='trigram'`` (the project's own side index
  is FTS5 with the ``ascii`` tokenizer over terms it makes itself, :mod:`mnemon_ls.text`; the trigram tokenizer
  is the plain one that indexes Chinese and identifier substrings, the floor of issue 27 item 5), queried with
  the OR of the query's words of 3+ characters (identifiers kept whole) and of every 3-character window of its
  CJK runs, ordered by ``bm25()``. It knows no branch.
- ``vector``: cosine of the query's embedding (same model, ``embed_query``) against every item's stored vector
  (:class:`mnemon_ls.semantic.vectors.VectorStore` over the space's vector file, ``exact=True``): top 10. It
  knows no branch.
- beside them: ``keyword-person`` / ``hybrid-person`` (the same recall as the command line answers a person:
  nothing withheld), ``keyword-ranking`` / ``hybrid-ranking`` (``recallPolicy`` exhaustive-v1, a person:
  the ranking before any policy cut; issue 27 item 8a), and ``hybrid-asked`` (the assistant's recall again with
  ``include_low_confidence``, as an assistant asks when what it was sent does not answer: nothing withheld).

Measures (over the queries with relevant memories): recall@5, recall@10 (the share of a query's relevant
memories in the top k, averaged), MRR@10; over the queries whose ``wrong`` list is set, the share where a wrong
memory ranks above every relevant one (or is returned when none is): ``superseded`` (an older fact above its
successor), ``main-on-branch``, ``other-branch`` (a fact of another branch returned), ``near-miss``
(identifier), ``name-only``; over the queries nothing answers, the mean number of results sent and the share
that sent any. Per category and per language.

``python bench/retrieval_quality.py`` writes bench/results/retrieval_quality.md and .json (``--out``); needs the
test (or semantic) extra for the model, and git. 83 to 154 s in three runs on a 2-core machine at load 2 to 4, half
of it waiting for the embedding of the memories (the run prints its phases). ``--before FILE`` (an earlier run's
JSON) writes every figure of the report as ``before → after`` (bench/retrieval_report.py); ``--workdir DIR`` keeps
the workspace and reuses the loaded store in a later run (for trying a ranking change; not for a reported run
unless the set is unchanged); ``--dump FILE`` writes every recall's results (ids, scores, tiers, evidence).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import regex  # noqa: E402

import retrieval_set as rset  # noqa: E402
from retrieval_report import SYSTEMS, SYSTEM_TEXT, WRONG_KINDS, markdown  # noqa: E402

RESULTS = HERE / "results" / "retrieval_quality.json"
LIMIT = 10
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_WORD = rf"[[\p{{L}}\p{{N}}_]--[{_CJK}]]+"
_RUN = regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_WORD}(?:[-.]{_WORD})*)", regex.V1)


class Clock:
    """The Hosts' clock: returns :attr:`now` (set before each remember, then to the set's NOW)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def parse_time(text: str) -> datetime:
    """``YYYY-MM-DDTHH:MM:SSZ`` as an aware UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def fts_query(text: str) -> str | None:
    """The FTS5 trigram MATCH expression of ``text`` (module doc), or ``None`` when no term has 3 characters."""
    terms: list[str] = []
    for run, word in _RUN.findall(text):
        if run:
            terms += [run[i:i + 3] for i in range(len(run) - 2)]
        elif len(word) >= 3:
            terms.append(word)
    terms = list(dict.fromkeys(t.casefold() for t in terms))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) or None


class Floor:
    """The FTS5 BM25 floor over ``texts`` (``{memory id: text}``), in memory."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize='trigram')")
        self.ids = list(texts)
        self.db.executemany("INSERT INTO f(rowid, body) VALUES(?, ?)",
                            [(n, texts[k]) for n, k in enumerate(self.ids)])

    def search(self, query: str) -> list[str]:
        """The memory ids of the best :data:`LIMIT` rows by ``bm25()``."""
        match = fts_query(query)
        if match is None:
            return []
        rows = self.db.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT ?", (match, LIMIT))
        return [self.ids[r[0]] for r in rows]


class Bench:
    """The workspace, its hosts and the loaded space (module doc)."""

    def __init__(self, base: Path, env: dict[str, str]) -> None:
        from mnemon_ls.host import WorkspaceHost
        from mnemon_ls.ops.registry import operations
        from mnemon_ls.settings import load_settings

        self.repo = base / "repo"
        if not self.repo.exists():
            self.repo.mkdir()
            self.git("init", "-q", "-b", "main")
            self.git("-c", "user.name=bench", "-c", "user.email=bench@local", "commit", "-q", "--allow-empty", "-m",
                     "init")
            for branch in rset.BRANCHES:
                self.git("branch", branch)
        self.git("checkout", "-q", "main")
        self.root = base / "root"
        self.clock = Clock(rset.NOW)
        settings = load_settings({"storageScope": "custom", "dataDir": str(self.root)})
        keyword = settings.with_overrides(semantic={"enabled": False})
        make: Callable[[Any], Any] = lambda s: WorkspaceHost(str(self.repo), s, env=env, clock=self.clock)
        self.hosts = {"hybrid": make(settings), "keyword": make(keyword),
                      "hybrid-ranking": make(settings.with_overrides(recallPolicy="exhaustive-v1")),
                      "keyword-ranking": make(keyword.with_overrides(recallPolicy="exhaustive-v1"))}
        self.ops = operations()
        self.branch = "main"

    def git(self, *args: str) -> None:
        subprocess.run(["git", "-C", str(self.repo), *args], check=True, capture_output=True)

    def checkout(self, branch: str) -> None:
        if branch != self.branch:
            self.git("checkout", "-q", branch)
            self.branch = branch

    def run(self, host: str, operation_name: str, surface: str, /, **params: Any) -> Any:
        """Operation ``operation_name`` on host ``host`` as ``surface`` runs it; returns its data."""
        from mnemon_ls.ops.execute import call, parse

        operation = self.ops[operation_name]
        return call(operation, self.hosts[host], parse(operation, params), surface=surface)

    def close(self) -> None:
        for host in self.hosts.values():
            host.close()


def load(bench: Bench, memories: list[dict[str, Any]]) -> tuple[str, dict[str, str]]:
    """Create the space and remember ``memories`` in time order; returns ``(space id, {item id: memory id})``.
    Raises ``SystemExit`` when a write is not committed as given (skipped, redacted)."""
    space = bench.run("hybrid", "spaces.create", "cli", name="project", description="memories of this project",
                      active=True)["id"]
    items: dict[str, str] = {}
    for memory in sorted(memories, key=lambda m: (m["createdAt"], m["id"])):
        bench.clock.now = parse_time(memory["createdAt"])
        bench.checkout(memory["branch"] or "main")
        got = bench.run("hybrid", "spaces.remember", "cli", content=memory["text"], category=memory["storeCategory"],
                        scopeToBranch=memory["branch"] is not None)
        if got["status"] != "committed" or got.get("redacted"):
            raise SystemExit(f"{memory['id']} was not stored as given: {got}")
        items[got["id"]] = memory["id"]
    bench.checkout("main")
    bench.clock.now = rset.NOW
    return space, items


def score(ranked: list[str], query: dict[str, Any]) -> dict[str, Any]:
    """One system's answer to ``query``: ``{sent, first (0-based rank of the first relevant or None), hit5,
    hit10 (relevant memories in the top 5 / 10), wrong (rank of the first wrong memory or None), wrongAbove}``."""
    relevant, wrong = set(query["relevant"]), set(query["wrong"])
    first = next((i for i, key in enumerate(ranked[:LIMIT]) if key in relevant), None)
    bad = next((i for i, key in enumerate(ranked[:LIMIT]) if key in wrong), None)
    return {"sent": len(ranked), "first": first, "hit5": len(relevant & set(ranked[:5])),
            "hit10": len(relevant & set(ranked[:LIMIT])), "wrong": bad,
            "wrongAbove": bad is not None and (first is None or bad < first)}


def answers(bench: Bench, space: str, items: dict[str, str], queries: list[dict[str, Any]],
            texts: dict[str, str], details: dict[str, Any] | None = None
            ) -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
    """Every system's answer to every query: ``({query id: {system: score + tiers}}, CPU seconds per system)``;
    ``details`` (when given) gets each recall's results: ``[memory id, score, tier, matchedVia, similarity]``."""
    from mnemon_ls.semantic.vectors import VECTOR_FILE, VectorStore

    engine = bench.hosts["hybrid"].semantic
    embedder = engine.embedder()
    store = VectorStore(bench.root / "data" / space / VECTOR_FILE, embedder.model_id, embedder.dim)
    store.sync()
    if store.count() != len(items):
        raise SystemExit(f"the vector file holds {store.count()} vectors for {len(items)} items")
    floor = Floor(texts)
    recalls = {"keyword": ("keyword", "mcp"), "hybrid": ("hybrid", "mcp"), "keyword-person": ("keyword", "cli"),
               "hybrid-person": ("hybrid", "cli"), "keyword-ranking": ("keyword-ranking", "cli"),
               "hybrid-ranking": ("hybrid-ranking", "cli"), "hybrid-asked": ("hybrid", "mcp")}
    cpu = {name: 0.0 for name in SYSTEMS}
    out: dict[str, dict[str, Any]] = {}
    for query in sorted(queries, key=lambda q: (q["branch"] != "main", q["branch"], q["id"])):
        bench.checkout(query["branch"])
        row: dict[str, Any] = {}
        for name in SYSTEMS:
            started = time.process_time()
            tiers: list[str] = []
            withheld = 0
            if name in recalls:
                host, surface = recalls[name]
                asked = {"includeLowConfidence": True} if name == "hybrid-asked" else {}
                data = bench.run(host, "spaces.recall", surface, query=query["text"], limit=LIMIT, **asked)
                ranked = [items[r["id"]] for r in data["results"]]
                tiers = [f"{r.get('tier')}/{r.get('matchedVia')}" for r in data["results"]]
                withheld = int((data.get("withheld") or {}).get("lowConfidence", 0))
                if details is not None:
                    details.setdefault(query["id"], {})[name] = [
                        [items[r["id"]], r.get("score"), r.get("tier"), r.get("matchedVia"), r.get("similarity")]
                        for r in data["results"]]
            elif name == "fts5":
                ranked = floor.search(query["text"])
            else:
                found = store.search(embedder.embed_query(query["text"]), LIMIT, exact=True)
                ranked = [items[k] for k, _cos in found]
                if details is not None:
                    details.setdefault(query["id"], {})[name] = [[items[k], round(c, 4)] for k, c in found]
            cpu[name] += time.process_time() - started
            row[name] = {**score(ranked, query), "tiers": tiers, "withheld": withheld}
        out[query["id"]] = row
    bench.checkout("main")
    store.close()
    return out, cpu


def summarize(queries: list[dict[str, Any]], answered: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{group: {system: measures}}`` for the groups ``all``, ``category:<c>``, ``lang:<l>`` and
    ``category:<c>:<l>`` (module doc)."""
    groups: dict[str, list[dict[str, Any]]] = {"all": list(queries)}
    for query in queries:
        for key in (f"category:{query['category']}", f"lang:{query['lang']}",
                    f"category:{query['category']}:{query['lang']}"):
            groups.setdefault(key, []).append(query)
    table: dict[str, Any] = {}
    for group, members in groups.items():
        for name in SYSTEMS:
            rows = [(q, answered[q["id"]][name]) for q in members]
            found = [(q, s) for q, s in rows if q["relevant"]]
            none = [s for q, s in rows if not q["relevant"]]
            cell: dict[str, Any] = {"answerable": len(found), "unanswerable": len(none)}
            if found:
                cell["recall@5"] = sum(s["hit5"] / len(q["relevant"]) for q, s in found) / len(found)
                cell["recall@10"] = sum(s["hit10"] / len(q["relevant"]) for q, s in found) / len(found)
                cell["mrr@10"] = sum(1 / (s["first"] + 1) for _q, s in found if s["first"] is not None) / len(found)
            if none:
                cell["sentMean"] = sum(s["sent"] for s in none) / len(none)
                cell["sentAny"] = sum(1 for s in none if s["sent"]) / len(none)
            wrong = {}
            for kind in WRONG_KINDS:
                hit = [s for q, s in rows if q["wrongKind"] == kind]
                if hit:
                    wrong[kind] = {"n": len(hit), "above": sum(1 for s in hit if s["wrongAbove"])}
            cell["wrongAbove"] = wrong
            tiers: dict[str, int] = {}
            for _q, s in rows:
                for tier in s["tiers"]:
                    tiers[tier] = tiers.get(tier, 0) + 1
            if tiers:
                cell["tiers"] = dict(sorted(tiers.items()))
            cell["withheld"] = sum(s["withheld"] for _q, s in rows)
            table.setdefault(group, {})[name] = cell
    return table


def item8(queries: list[dict[str, Any]], answered: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The cases of issue 27 item 8 in this run: ``cut`` (a): queries whose relevant memory the exhaustive-v1
    ranking has in its top 10 and the assistant's answer lacks; ``vectorOnly`` (b): queries vector-only search
    answers in its top 10 and hybrid recall does not; ``nameOnly`` (c): what the questions about a person and
    something never stored were sent, by tier (``{"queries", "tiers": {system: {tier: count}}}``); ``oneTerm``
    (c): the same for the questions sharing one common word with the memories and answered by none."""
    found = [q for q in queries if q["relevant"]]
    hit = lambda q, name: answered[q["id"]][name]["hit10"] > 0  # noqa: E731
    cut = {name: [q["id"] for q in found if hit(q, f"{name}-ranking") and not hit(q, name)]
           for name in ("keyword", "hybrid")}
    vector_only = {name: [q["id"] for q in found if hit(q, "vector") and not hit(q, name)]
                   for name in ("hybrid", "hybrid-person", "hybrid-asked")}

    def tiers(chosen: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for name in ("keyword", "hybrid"):
            out[name] = {}
            for q in chosen:
                for tier in answered[q["id"]][name]["tiers"]:
                    key = tier.split("/")[0]
                    out[name][key] = out[name].get(key, 0) + 1
        return out

    names = [q for q in queries if q["category"] == "name" and not q["relevant"]]
    one = [q for q in queries if q["category"] == "one-term"]
    return {"cut": cut, "vectorOnly": vector_only, "nameOnly": {"queries": len(names), "tiers": tiers(names)},
            "oneTerm": {"queries": len(one), "tiers": tiers(one)}}


def verdict(table: dict[str, Any]) -> dict[str, Any]:
    """Whether hybrid beats both floors on recall@5 and MRR@10, and whether the no-answer queries sent nothing."""
    allq, none = table["all"], table["category:no-answer"]
    out: dict[str, Any] = {}
    for key, measure in (("recall5", "recall@5"), ("mrr", "mrr@10")):
        values = {n: allq[n][measure] for n in ("hybrid", "fts5", "vector")}
        out[key] = values["hybrid"] > values["fts5"] and values["hybrid"] > values["vector"]
        out[key + "Text"] = ", ".join(f"{n} {v:.3f}" for n, v in values.items())
    sent = none["hybrid"]["sentMean"]
    out["noAnswer"] = sent == 0
    out["noAnswerText"] = (f"hybrid sent {sent:.2f} results on average, keyword {none['keyword']['sentMean']:.2f}; "
                           f"{100 * none['hybrid']['sentAny']:.0f}% of the {none['hybrid']['unanswerable']} queries "
                           "sent at least one")
    return out


def measure(workdir: Path | None = None, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run (module doc); returns its record. ``workdir``: keep the workspace there and reuse a store an
    earlier run with the same ``workdir`` loaded (the set must not have changed since); ``details``: filled with
    every recall's results (``{query id: {system: [result rows]}}``, for ``--dump``)."""
    started, cpu0 = time.perf_counter(), time.process_time()
    load_before = "/".join(f"{x:.2f}" for x in os.getloadavg())
    memories, queries = rset.load()
    texts = {m["id"]: m["text"] for m in memories}
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    seconds: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        if workdir is None:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mnemon-retrieval-")))
        else:
            base = workdir
            base.mkdir(parents=True, exist_ok=True)
        bench = Bench(base, env)
        engine = bench.hosts["hybrid"].semantic
        if engine is None or engine.embedder() is None:
            raise SystemExit("semantic recall is not available here: pip install -e '.[test]' (or '.[semantic]')")
        t0 = time.perf_counter()
        marker = base / "loaded.json"
        if marker.exists():  # --workdir of an earlier run: the store is loaded and embedded
            space, items = json.loads(marker.read_text("utf-8"))
            print(f"reusing the store of {base}", flush=True)
        else:
            space, items = load(bench, memories)
            if workdir is not None:
                marker.write_text(json.dumps([space, items]), "utf-8")
        t1 = time.perf_counter()
        print(f"remembered {len(items)} memories in {t1 - t0:.0f} s; waiting for the embedding", flush=True)
        if not engine.wait_idle(3600):
            raise SystemExit("embedding did not finish in an hour")
        t2 = time.perf_counter()
        seconds.update(load=t2 - t0, embedWait=t2 - t1)
        print(f"embedded in {t2 - t1:.0f} s more; answering {len(queries)} queries with {len(SYSTEMS)} systems",
              flush=True)
        answered, cpu = answers(bench, space, items, queries, texts, details)
        seconds["queries"] = time.perf_counter() - t2
        model = engine.embedder().model_id
        bench.close()
        engine.stop()
    seconds["total"] = time.perf_counter() - started
    table = summarize(queries, answered)
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "mnemon_ls"],
                           capture_output=True, text=True).stdout.strip()
    compact = {qid: {n: [s["sent"], s["first"], s["hit5"], s["hit10"], s["wrong"]] for n, s in row.items()}
               for qid, row in sorted(answered.items())}
    return {"command": " ".join(["python bench/retrieval_quality.py", *sys.argv[1:]]),
            "commit": commit + ("+changes" if dirty else ""), "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.platform()}, {os.cpu_count()} CPUs", "python": platform.python_version(),
            "model": model, "loadBefore": load_before, "loadAfter": "/".join(f"{x:.2f}" for x in os.getloadavg()),
            "seconds": seconds, "cpuSeconds": time.process_time() - cpu0, "cpu": cpu,
            "memories": len(memories), "queries": len(queries),
            "answerable": sum(1 for q in queries if q["relevant"]),
            "unanswerable": sum(1 for q in queries if not q["relevant"]),
            "systems": SYSTEM_TEXT, "verdict": verdict(table), "item8": item8(queries, answered), "table": table,
            "perQuery": {"fields": ["sent", "first relevant rank (0-based)", "relevant in top 5",
                                    "relevant in top 10", "first wrong rank"], "answers": compact}}


def to_json(run: dict[str, Any]) -> str:
    """``run`` as JSON text: indented, except one line per query in ``perQuery.answers``."""
    head = {k: v for k, v in run.items() if k != "perQuery"}
    text = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    rows = ",\n".join(f"  {json.dumps(qid)}: {json.dumps(row, separators=(',', ':'))}"
                      for qid, row in run["perQuery"]["answers"].items())
    fields = json.dumps(run["perQuery"]["fields"])
    return f'{text},\n "perQuery": {{\n "fields": {fields},\n "answers": {{\n{rows}\n }}\n }}\n}}\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="the JSON file (the .md is written beside it)")
    parser.add_argument("--workdir", type=Path, help="keep the workspace here and reuse the store an earlier run "
                        "loaded there (for trying ranking changes; the set must be the same)")
    parser.add_argument("--dump", type=Path, help="also write every recall's results here (JSON)")
    parser.add_argument("--before", type=Path, help="an earlier run's JSON: the report shows every figure as "
                        "`before → after` (the .md only; the JSON is this run's)")
    args = parser.parse_args()
    before = json.loads(args.before.read_text("utf-8")) if args.before else None
    details: dict[str, Any] | None = {} if args.dump else None
    run = measure(args.workdir, details)
    if args.dump:
        args.dump.write_text(json.dumps(details, ensure_ascii=False), "utf-8")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_json(run), "utf-8")
    args.out.with_suffix(".md").write_text(markdown(run, before), "utf-8")
    print(markdown(run, before))


if __name__ == "__main__":
    main()
