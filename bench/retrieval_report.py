"""The report of bench/retrieval_quality.py: one run's record (its JSON) as Markdown, optionally side by side with
an earlier run's (``--before FILE``: every figure then reads ``before → after``). Also the names of the systems
and of the kinds of wrong answers, which both modules use."""

from __future__ import annotations

from typing import Any, Callable

import retrieval_set as rset

MAIN = ("keyword", "hybrid", "fts5", "vector")
EXTRA = ("keyword-person", "hybrid-person", "keyword-ranking", "hybrid-ranking", "hybrid-asked")
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
    "hybrid-asked": "hybrid recall, an assistant asking for what was withheld (`include_low_confidence`)",
}
WRONG_KINDS = ("superseded", "main-on-branch", "other-branch", "near-miss", "name-only")
ARROW = " → "


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _dig(record: dict[str, Any] | None, *keys: Any) -> Any:
    for key in keys:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


class _Pair:
    """Formats a figure of ``run`` (and of ``before``, when given, as ``before → after``)."""

    def __init__(self, run: dict[str, Any], before: dict[str, Any] | None) -> None:
        self.run, self.before = run, before

    def __call__(self, fmt: Callable[[Any], str], *keys: Any) -> str:
        after = fmt(_dig(self.run, *keys))
        if self.before is None:
            return after
        return fmt(_dig(self.before, *keys)) + ARROW + after

    def count(self, *keys: Any) -> str:
        """A list's length (``-`` when missing)."""
        return self(lambda v: "-" if v is None else str(len(v)), *keys)


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _tiers(tiers: dict[str, int] | None) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted((tiers or {}).items())) or "none"


def markdown(run: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    """The report of ``run`` (module doc of bench/retrieval_quality.py), side by side with ``before``."""
    t = run["table"]
    pair = _Pair(run, before)
    table = lambda fmt, group, name, measure: pair(fmt, "table", group, name, measure)  # noqa: E731
    title = "# Retrieval quality of recall (issue 27 items 7 and 8)"
    lines = [title, ""]
    for label, record in (("before", before), ("after", run)) if before else (("", run),):
        lines += [(f"{label.capitalize()}: " if label else "") +
                  f"`{record['command']}` at commit {record['commit']}, {record['at']}; {record['machine']}; load "
                  f"average {record['loadBefore']} before, {record['loadAfter']} after; Python {record['python']}; "
                  f"model {record['model']}. Run time {record['seconds']['total']:.0f} s (load "
                  f"{record['seconds']['load']:.0f} s of which the embedding wait {record['seconds']['embedWait']:.0f}"
                  f" s, queries {record['seconds']['queries']:.0f} s).", ""]
    if before:
        lines += ["Every figure below reads `before → after`: the same set, the same store, the code of the two "
                  "commits above.", ""]
    lines += [f"Set: bench/data/retrieval_set.jsonl.gz (bench/retrieval_set.py, seed {rset.SEED}): "
              f"{run['memories']} memories, {run['queries']} queries ({run['answerable']} with relevant memories, "
              f"{run['unanswerable']} with none), English and Chinese. One native Memory Space, every memory "
              "remembered through `spaces.remember` at its own time (the Host's clock), branch facts on their branch "
              "with `scopeToBranch`; queries at limit 10 (the MCP tool's default is 8, its cap 12) with their branch "
              "checked out, the clock at the set's NOW (Monday 2025-06-16 09:00 UTC). Module doc of "
              "bench/retrieval_quality.py for the systems and measures.", "",
              "## Side by side", "",
              "| system | recall@5 | recall@10 | MRR@10 | superseded above successor (of 50) | no-answer queries: "
              "mean results sent | no-answer queries that sent any |", "|---|---|---|---|---|---|---|"]
    for name in SYSTEMS:
        bold = "**" if name in MAIN else ""
        lines.append(f"| {bold}{name}{bold}: {SYSTEM_TEXT[name]} | {table(_pct, 'all', name, 'recall@5')} | "
                     f"{table(_pct, 'all', name, 'recall@10')} | {table(_num, 'all', name, 'mrr@10')} | "
                     f"{pair(_count, 'table', 'all', name, 'wrongAbove', 'superseded', 'above')} | "
                     f"{table(lambda v: _num(v, 2), 'category:no-answer', name, 'sentMean')} | "
                     f"{table(_pct, 'category:no-answer', name, 'sentAny')} |")
    yes = lambda v: "-" if v is None else ("**yes**" if v else "**no**")  # noqa: E731
    lines += ["", "Goals: hybrid beats both floors on recall@5 and MRR@10 (issue 27 items 7, 8); the no-answer queries "
              "send nothing (item 7), as little as possible (item 8).", "",
              f"- hybrid beats both floors on recall@5: {pair(yes, 'verdict', 'recall5')} "
              f"({pair(str, 'verdict', 'recall5Text')})",
              f"- hybrid beats both floors on MRR@10: {pair(yes, 'verdict', 'mrr')} "
              f"({pair(str, 'verdict', 'mrrText')})",
              f"- the no-answer queries send nothing (hybrid, to the assistant): {pair(yes, 'verdict', 'noAnswer')} "
              f"({pair(str, 'verdict', 'noAnswerText')})", ""]
    dates = lambda n, c: (f"{table(_pct, f'category:{c}', n, 'recall@5')} / "  # noqa: E731
                          f"{table(_num, f'category:{c}', n, 'mrr@10')}")
    lines += ["## The cases of issue 27 item 8", "",
              f"- (a) a policy cut what the ranking got right: {pair.count('item8', 'cut', 'keyword')} queries have a "
              "relevant memory in the top 10 of keyword recall's own ranking (exhaustive-v1) and none in what the "
              f"assistant is sent (the default policy); hybrid: {pair.count('item8', 'cut', 'hybrid')}. The 20 "
              "`crowded` questions (answer: one of seven facts tied on the words they share with the question), "
              "recall@10 keyword " + table(_pct, "category:crowded", "keyword", "recall@10") + ", hybrid "
              + table(_pct, "category:crowded", "hybrid", "recall@10") + ".",
              f"- (b) found by meaning, lost in the fusion: {pair.count('item8', 'vectorOnly', 'hybrid')} queries have "
              "a relevant memory in vector-only search's top 10 and none in hybrid recall's answer to the assistant "
              f"({pair.count('item8', 'vectorOnly', 'hybrid-person')} in a person's; "
              f"{pair.count('item8', 'vectorOnly', 'hybrid-asked')} in an assistant's that asks for what was withheld "
              "with `include_low_confidence`). The 20 `meaning` questions "
              "(no word in common with the answer, more than ten memories sharing one of theirs), recall@10 / MRR@10: "
              "hybrid-person " + table(_pct, "category:meaning", "hybrid-person", "recall@10") + " / "
              + table(_num, "category:meaning", "hybrid-person", "mrr@10") + ", hybrid "
              + table(_pct, "category:meaning", "hybrid", "recall@10") + " / "
              + table(_num, "category:meaning", "hybrid", "mrr@10") + ", vector "
              + table(_pct, "category:meaning", "vector", "recall@10") + " / "
              + table(_num, "category:meaning", "vector", "mrr@10") + ".",
              f"- (c) a match on a name alone: the {run['item8']['nameOnly']['queries']} questions about a person and "
              "something never stored were sent (tier: count) " + "; ".join(
                  f"{name} " + pair(_tiers, "item8", "nameOnly", "tiers", name) for name in ("keyword", "hybrid"))
              + ". On one common term: the 20 `one-term` questions (nothing answers them; one word in common with "
              "more than ten memories) were sent " + "; ".join(
                  f"{name} " + pair(_tiers, "item8", "oneTerm", "tiers", name) for name in ("keyword", "hybrid"))
              + " (mean results sent: keyword " + table(lambda v: _num(v, 2), "category:one-term", "keyword",
                                                        "sentMean")
              + ", hybrid " + table(lambda v: _num(v, 2), "category:one-term", "hybrid", "sentMean") + ").",
              "- (d) dates in the question, recall@5 / MRR@10: the 40 `date` questions (meeting notes) "
              + ", ".join(f"{n} {dates(n, 'date')}" for n in MAIN) + "; the 32 `dated` questions (status notes: "
              "April 2025, yesterday, last week, 2024) " + ", ".join(f"{n} {dates(n, 'dated')}" for n in MAIN) + ".",
              ""]
    lines += ["## Per category (recall@5 / recall@10 / MRR@10 over the queries with relevant memories)", "",
              "| category | queries (with / without an answer) | " + " | ".join(SYSTEMS) + " |",
              "|---|---|" + "---|" * len(SYSTEMS)]
    for category in rset.CATEGORIES:
        group = f"category:{category}"
        first = t[group]["keyword"]
        if not first["answerable"]:
            continue
        lines.append(f"| {category} | {first['answerable']} / {first['unanswerable']} | " + " | ".join(
            f"{table(_pct, group, n, 'recall@5')} / {table(_pct, group, n, 'recall@10')} / "
            f"{table(_num, group, n, 'mrr@10')}" for n in SYSTEMS) + " |")
    lines += ["", "## Queries nothing answers (mean results sent / share that sent any)", "",
              "| queries | n | " + " | ".join(SYSTEMS) + " |", "|---|---|" + "---|" * len(SYSTEMS)]
    for category in rset.CATEGORIES:
        group = f"category:{category}"
        if not t[group]["keyword"]["unanswerable"]:
            continue
        label = {"no-answer": "no-answer", "name": "name (a question about something never stored)",
                 "branch": "branch (a fact of another branch, asked on main)",
                 "one-term": "one-term (one common word in common)"}.get(category, category)
        lines.append(f"| {label} | {t[group]['keyword']['unanswerable']} | " + " | ".join(
            f"{table(lambda v: _num(v, 2), group, n, 'sentMean')} / {table(_pct, group, n, 'sentAny')}"
            for n in SYSTEMS) + " |")
    lines += ["", "## A wrong memory ranked above the right one (or returned when nothing is right)", "",
              "| kind | n | " + " | ".join(SYSTEMS) + " |", "|---|---|" + "---|" * len(SYSTEMS)]
    for kind in WRONG_KINDS:
        got = t["all"]["keyword"]["wrongAbove"].get(kind)
        if got:
            lines.append(f"| {kind} | {got['n']} | " + " | ".join(
                pair(str, "table", "all", n, "wrongAbove", kind, "above") for n in SYSTEMS) + " |")
    lines += ["", "## Per language (recall@5 / recall@10 / MRR@10; no-answer queries: mean results sent)", "",
              "| language | " + " | ".join(SYSTEMS) + " |", "|---|" + "---|" * len(SYSTEMS)]
    for lang in rset.LANGS:
        group = f"lang:{lang}"
        lines.append(f"| {lang} | " + " | ".join(
            f"{table(_pct, group, n, 'recall@5')} / {table(_pct, group, n, 'recall@10')} / "
            f"{table(_num, group, n, 'mrr@10')}; "
            f"{table(lambda v: _num(v, 2), f'category:no-answer:{lang}', n, 'sentMean')}" for n in SYSTEMS) + " |")
    lines += ["", "## Tiers of what recall sent (tier/matchedVia: count)", "", "| queries | system | tiers |",
              "|---|---|---|"]
    for group in ("category:name", "category:no-answer", "category:one-term", "category:paraphrase",
                  "category:meaning", "category:date", "category:dated", "category:crowded"):
        for name in ("keyword", "hybrid"):
            lines.append(f"| {group.split(':')[1]} | {name} | " + pair(_tiers, "table", group, name, "tiers")
                         + "; withheld " + pair(str, "table", group, name, "withheld") + " |")
    lines += ["", "Reading: recall@k counts a query's relevant memories in the top k (a date query over a quarter "
              "or a year has several); a `name` query with an answer lists every memory about the person. The floors "
              "know no branch, so a fact of another branch counts against them as it would against recall. CPU "
              f"seconds answering the {run['queries']} queries: " + ", ".join(
                  f"{n} " + pair(lambda v: _num(v, 1), "cpu", n) for n in SYSTEMS)
              + " (hybrid embeds each query; the systems after it reuse the model's query cache).", ""]
    return "\n".join(lines)
