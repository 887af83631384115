"""Retrieval quality of recall on a coding-memory set (issue 27 item 7; the cases of item 8).

The set is bench/data/retrieval_set.jsonl.gz (bench/retrieval_set.py makes it: 2,232 memories and 410 queries,
English and Chinese, in nine categories). One workspace (a real git repository with a ``main`` branch and the
set's feature branches, a custom storage root), one native Memory Space (``mnemon.db``) that every memory is
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
  nothing withheld), and ``keyword-ranking`` / ``hybrid-ranking`` (``recallPolicy`` exhaustive-v1, a person:
  the ranking before any policy cut; issue 27 item 8a).

Measures (over the queries with relevant memories): recall@5, recall@10 (the share of a query's relevant
memories in the top k, averaged), MRR@10; over the queries whose ``wrong`` list is set, the share where a wrong
memory ranks above every relevant one (or is returned when none is): ``superseded`` (an older fact above its
successor), ``main-on-branch``, ``other-branch`` (a fact of another branch returned), ``near-miss``
(identifier), ``name-only``; over the queries nothing answers, the mean number of results sent and the share
that sent any. Per category and per language.

``python bench/retrieval_quality.py`` writes bench/results/retrieval_quality.md and .json (``--out``); needs the
test (or semantic) extra for the model, and git. 83 to 154 s in three runs on a 2-core machine at load 2 to 4, half
of it waiting for the embedding of the 2,232 memories (the run prints its phases).
"""

from __future__ import annotations

import argparse
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

RESULTS = HERE / "results" / "retrieval_quality.json"
LIMIT = 10
MAIN = ("keyword", "hybrid", "fts5", "vector")
EXTRA = ("keyword-person", "hybrid-person", "keyword-ranking", "hybrid-ranking")
SYSTEMS = MAIN + EXTRA
SYSTEM_TEXT = {
    "keyword": "keyword recall, semantic extra off (assistant: what `mnemon_recall` sends)",
    "hybrid": "hybrid recall, semantic extra on (assistant: what `mnemon_recall` sends)",
    "fts5": "plain FTS5 BM25 floor, trigram tokenizer (no branch filter)",
    "vector": "vector-only, multilingual-e5-small, exact cosine over all items (no branch filter)",
    "keyword-person": "keyword recall as a person gets it (`mnemon-ls recall`)",
    "hybrid-person": "hybrid recall as a person gets it",
    "keyword-ranking": "keyword recall, recallPolicy exhaustive-v1 (the ranking before policy cuts)",
    "hybrid-ranking": "hybrid recall, recallPolicy exhaustive-v1",
}
WRONG_KINDS = ("superseded", "main-on-branch", "other-branch", "near-miss", "name-only")
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
        self.repo.mkdir()
        self.git("init", "-q", "-b", "main")
        self.git("-c", "user.name=bench", "-c", "user.email=bench@local", "commit", "-q", "--allow-empty", "-m", "init")
        for branch in rset.BRANCHES:
            self.git("branch", branch)
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
            texts: dict[str, str]) -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
    """Every system's answer to every query: ``({query id: {system: score + tiers}}, CPU seconds per system)``."""
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
               "hybrid-ranking": ("hybrid-ranking", "cli")}
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
                data = bench.run(host, "spaces.recall", surface, query=query["text"], limit=LIMIT)
                ranked = [items[r["id"]] for r in data["results"]]
                tiers = [f"{r.get('tier')}/{r.get('matchedVia')}" for r in data["results"]]
                withheld = int((data.get("withheld") or {}).get("lowConfidence", 0))
            elif name == "fts5":
                ranked = floor.search(query["text"])
            else:
                ranked = [items[k] for k, _cos in store.search(embedder.embed_query(query["text"]), LIMIT, exact=True)]
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


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown(run: dict[str, Any]) -> str:
    """The report (module doc) of one run."""
    t = run["table"]
    allq = t["all"]
    sup = {n: allq[n]["wrongAbove"].get("superseded", {"n": 0, "above": 0}) for n in SYSTEMS}
    lines = ["# Retrieval quality of recall (issue 27 item 7)", "",
             f"`{run['command']}` at commit {run['commit']}, {run['at']}; {run['machine']}; load average "
             f"{run['loadBefore']} before, {run['loadAfter']} after; Python {run['python']}; model {run['model']}. "
             f"Run time {run['seconds']['total']:.0f} s (load {run['seconds']['load']:.0f} s of which the "
             f"embedding wait {run['seconds']['embedWait']:.0f} s, queries {run['seconds']['queries']:.0f} s).", "",
             f"Set: bench/data/retrieval_set.jsonl.gz (bench/retrieval_set.py, seed {rset.SEED}): "
             f"{run['memories']} memories, {run['queries']} queries ({run['answerable']} with relevant memories, "
             f"{run['unanswerable']} with none), English and Chinese. One native Memory Space, every memory "
             "remembered through `spaces.remember` at its own time (the Host's clock), branch facts on their branch "
             "with `scopeToBranch`; queries at limit 10 (the MCP tool's default is 8, its cap 12) with their branch "
             "checked out. Module doc of bench/retrieval_quality.py for the systems and measures.", "",
             "## Side by side", "",
             "| system | recall@5 | recall@10 | MRR@10 | superseded above successor | no-answer queries: mean "
             "results sent | no-answer queries that sent any |", "|---|---|---|---|---|---|---|"]
    for name in SYSTEMS:
        cell, none = allq[name], t["category:no-answer"][name]
        bold = "**" if name in MAIN else ""
        lines.append(f"| {bold}{name}{bold}: {SYSTEM_TEXT[name]} | {_pct(cell.get('recall@5'))} | "
                     f"{_pct(cell.get('recall@10'))} | {_num(cell.get('mrr@10'))} | {sup[name]['above']} / "
                     f"{sup[name]['n']} ({_pct(sup[name]['above'] / sup[name]['n'])}) | "
                     f"{_num(none.get('sentMean'), 2)} | {_pct(none.get('sentAny'))} |")
    verdict = run["verdict"]
    lines += ["", "Goal (issue 27 item 7): hybrid beats both floors on recall@5 and MRR@10; the no-answer queries "
              "send nothing.", "",
              f"- hybrid beats both floors on recall@5: **{'yes' if verdict['recall5'] else 'no'}** "
              f"({verdict['recall5Text']})",
              f"- hybrid beats both floors on MRR@10: **{'yes' if verdict['mrr'] else 'no'}** ({verdict['mrrText']})",
              f"- the no-answer queries send nothing (hybrid, to the assistant): "
              f"**{'yes' if verdict['noAnswer'] else 'no'}** ({verdict['noAnswerText']})", ""]
    eight, dates = run["item8"], t["category:date"]
    lines += ["## The cases of issue 27 item 8 in this run", "",
              f"- (a) a policy cut what the ranking got right: {len(eight['cut']['keyword'])} queries have a relevant "
              f"memory in the top 10 of keyword recall's own ranking (exhaustive-v1) and none in what the assistant is "
              f"sent (strict-v1); hybrid: {len(eight['cut']['hybrid'])}.",
              f"- (b) found by meaning, lost in the fusion: {len(eight['vectorOnly']['hybrid'])} queries have a "
              "relevant "
              f"memory in vector-only search's top 10 and none in hybrid recall's answer to the assistant "
              f"({len(eight['vectorOnly']['hybrid-person'])} in a person's).",
              f"- (c) a match on a name alone: the {eight['nameOnly']['queries']} questions about a person and "
              "something "
              "never stored were sent " + "; ".join(
                  f"{name} " + ", ".join(f"{v} {k}" for k, v in sorted(tiers.items()))
                  for name, tiers in eight["nameOnly"]["tiers"].items()) + " results (tier: count).",
              "- (d) dates in the question: recall@5 / MRR@10 of the 40 date questions: " + ", ".join(
                  f"{n} {_pct(dates[n].get('recall@5'))} / {_num(dates[n].get('mrr@10'))}" for n in MAIN) + ".", ""]
    lines += ["## Per category (recall@5 / recall@10 / MRR@10 over the queries with relevant memories)", "",
              "| category | queries (with / without an answer) | " + " | ".join(SYSTEMS) + " |",
              "|---|---|" + "---|" * len(SYSTEMS)]
    for category in rset.CATEGORIES:
        row = t[f"category:{category}"]
        first = row["keyword"]
        if not first["answerable"]:
            continue
        lines.append(f"| {category} | {first['answerable']} / {first['unanswerable']} | " + " | ".join(
            f"{_pct(row[n].get('recall@5'))} / {_pct(row[n].get('recall@10'))} / {_num(row[n].get('mrr@10'))}"
            for n in SYSTEMS) + " |")
    lines += ["", "## Queries nothing answers (mean results sent / share that sent any)", "",
              "| queries | n | " + " | ".join(SYSTEMS) + " |", "|---|---|" + "---|" * len(SYSTEMS)]
    for category in rset.CATEGORIES:
        row = t[f"category:{category}"]
        if not row["keyword"]["unanswerable"]:
            continue
        label = {"no-answer": "no-answer", "name": "name (a question about something never stored)",
                 "branch": "branch (a fact of another branch, asked on main)"}.get(category, category)
        lines.append(f"| {label} | {row['keyword']['unanswerable']} | " + " | ".join(
            f"{_num(row[n].get('sentMean'), 2)} / {_pct(row[n].get('sentAny'))}" for n in SYSTEMS) + " |")
    lines += ["", "## A wrong memory ranked above the right one (or returned when nothing is right)", "",
              "| kind | n | " + " | ".join(SYSTEMS) + " |", "|---|---|" + "---|" * len(SYSTEMS)]
    for kind in WRONG_KINDS:
        got = allq["keyword"]["wrongAbove"].get(kind)
        if got:
            lines.append(f"| {kind} | {got['n']} | " + " | ".join(
                str(allq[n]["wrongAbove"][kind]["above"]) for n in SYSTEMS) + " |")
    lines += ["", "## Per language (recall@5 / recall@10 / MRR@10; no-answer queries: mean results sent)", "",
              "| language | " + " | ".join(SYSTEMS) + " |", "|---|" + "---|" * len(SYSTEMS)]
    for lang in rset.LANGS:
        row, none = t[f"lang:{lang}"], t[f"category:no-answer:{lang}"]
        lines.append(f"| {lang} | " + " | ".join(
            f"{_pct(row[n].get('recall@5'))} / {_pct(row[n].get('recall@10'))} / {_num(row[n].get('mrr@10'))}; "
            f"{_num(none[n].get('sentMean'), 2)}" for n in SYSTEMS) + " |")
    lines += ["", "## Tiers of what recall sent (tier/matchedVia: count)", "", "| queries | system | tiers |",
              "|---|---|---|"]
    for group in ("category:name", "category:no-answer", "category:paraphrase", "category:date"):
        for name in ("keyword", "hybrid"):
            tiers = t[group][name].get("tiers", {})
            lines.append(f"| {group.split(':')[1]} | {name} | " + ", ".join(f"{k} {v}" for k, v in tiers.items())
                         + f"; withheld {t[group][name]['withheld']} |")
    lines += ["", "Reading: recall@k counts a query's relevant memories in the top k (a date query over a quarter "
              "has three); a `name` query with an answer lists every memory about the person. The floors know no "
              "branch, so a fact of another branch counts against them as it would against recall. CPU seconds "
              "answering the 410 queries: " + ", ".join(f"{n} {run['cpu'][n]:.1f}" for n in SYSTEMS)
              + " (hybrid embeds each query; the systems after it reuse the model's query cache).", ""]
    return "\n".join(lines)


def item8(queries: list[dict[str, Any]], answered: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The cases of issue 27 item 8 in this run: ``cut`` (a): queries whose relevant memory the exhaustive-v1
    ranking has in its top 10 and the assistant's answer lacks; ``vectorOnly`` (b): queries vector-only search
    answers in its top 10 and hybrid recall does not; ``nameOnly`` (c): what the questions about a person and
    something never stored were sent, by tier; ``date`` (d): recall@5 / MRR@10 of the date questions."""
    found = [q for q in queries if q["relevant"]]
    hit = lambda q, name: answered[q["id"]][name]["hit10"] > 0  # noqa: E731
    cut = {name: [q["id"] for q in found if hit(q, f"{name}-ranking") and not hit(q, name)]
           for name in ("keyword", "hybrid")}
    vector_only = {name: [q["id"] for q in found if hit(q, "vector") and not hit(q, name)]
                   for name in ("hybrid", "hybrid-person")}
    names = [q for q in queries if q["category"] == "name" and not q["relevant"]]
    tiers: dict[str, dict[str, int]] = {}
    for name in ("keyword", "hybrid"):
        for q in names:
            for tier in answered[q["id"]][name]["tiers"]:
                key = tier.split("/")[0]
                tiers.setdefault(name, {})[key] = tiers.setdefault(name, {}).get(key, 0) + 1
    return {"cut": cut, "vectorOnly": vector_only, "nameOnly": {"queries": len(names), "tiers": tiers}}


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


def measure() -> dict[str, Any]:
    """One run (module doc); returns its record."""
    started, cpu0 = time.perf_counter(), time.process_time()
    load_before = "/".join(f"{x:.2f}" for x in os.getloadavg())
    memories, queries = rset.load()
    texts = {m["id"]: m["text"] for m in memories}
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mnemon-retrieval-") as tmp:
        bench = Bench(Path(tmp), env)
        engine = bench.hosts["hybrid"].semantic
        if engine is None or engine.embedder() is None:
            raise SystemExit("semantic recall is not available here: pip install -e '.[test]' (or '.[semantic]')")
        t0 = time.perf_counter()
        space, items = load(bench, memories)
        t1 = time.perf_counter()
        print(f"remembered {len(items)} memories in {t1 - t0:.0f} s; waiting for the embedding", flush=True)
        if not engine.wait_idle(3600):
            raise SystemExit("embedding did not finish in an hour")
        t2 = time.perf_counter()
        seconds.update(load=t2 - t0, embedWait=t2 - t1)
        print(f"embedded in {t2 - t1:.0f} s more; answering {len(queries)} queries with {len(SYSTEMS)} systems",
              flush=True)
        answered, cpu = answers(bench, space, items, queries, texts)
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
    args = parser.parse_args()
    run = measure()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_json(run), "utf-8")
    args.out.with_suffix(".md").write_text(markdown(run), "utf-8")
    print(markdown(run))


if __name__ == "__main__":
    main()
