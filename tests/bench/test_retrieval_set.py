"""The committed retrieval-quality set (bench/data/retrieval_set.jsonl.gz) is what bench/retrieval_set.py makes,
and it holds what bench/retrieval_quality.py (issue 27 item 7) relies on: at least 2,000 memories and 300 queries,
every category in English and in Chinese, labels that point at real memories, paraphrases that share no indexed
term with their answer, branch answers visible on the branch asked, date answers that are exactly the series'
memories in the range named. No model is loaded."""

from __future__ import annotations

import importlib.util
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from mnemon_ls.spaces.index import TOKENIZER

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _module():
    spec = importlib.util.spec_from_file_location("bench_retrieval_set", BENCH / "retrieval_set.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rset = _module()


@pytest.fixture(scope="module")
def committed():
    return rset.load(rset.OUT)


def _first_parts():
    """The memories and queries of the parts before the item-8 cases, as the generator makes them."""
    builder = rset.Builder(rset.SEED)
    for part in (rset._decisions, rset._conventions, rset._superseded, rset._branches, rset._identifiers,
                 rset._paraphrases, rset._dates, rset._people, rset._no_answer, rset._filler):
        part(builder)
    return builder.memories, builder.queries


def _held(query: str, document: frozenset[str]) -> set[int]:
    """The query groups of ``query`` that a memory's indexed terms ``document`` hold."""
    return {t.group for t in TOKENIZER.query_terms(query)
            if (t.text in document if not t.prefix else any(d.startswith(t.text) for d in document))}


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_committed_set_is_what_the_generator_makes(committed):
    assert committed == rset.build()
    assert rset.render() == rset.render()  # deterministic within a process too (one seeded generator)


def test_counts_categories_and_languages(committed):
    memories, queries = committed
    assert len(memories) >= 2000 and len(queries) >= 300
    assert len(memories) == 2480 and len(queries) == 502
    assert (memories[:2232], queries[:410]) == _first_parts()  # the item-8 cases were added after the others
    by_query = Counter((q["category"], q["lang"]) for q in queries)
    for category in rset.CATEGORIES:
        for lang in rset.LANGS:
            assert by_query[(category, lang)] >= 10, (category, lang)
    by_memory = Counter((m["category"], m["lang"]) for m in memories)
    for category in set(rset.CATEGORIES) - {"no-answer", "one-term"}:
        for lang in rset.LANGS:
            assert by_memory[(category, lang)] >= (10 if category == "meaning" else 25), (category, lang)
    langs = Counter(q["lang"] for q in queries)
    assert langs["en"] == langs["zh"] == 251
    # no-answer 40, name-only 20, other branch 10, one-term 20
    assert sum(1 for q in queries if not q["relevant"]) == 90
    assert all(not q["relevant"] for q in queries if q["category"] in ("no-answer", "one-term"))


def test_labels_point_at_real_memories(committed):
    memories, queries = committed
    ids = {m["id"] for m in memories}
    assert len(ids) == len(memories) and len({m["text"] for m in memories}) == len(memories)
    assert len({q["id"] for q in queries}) == len(queries)
    byid = {m["id"]: m for m in memories}
    for q in queries:
        assert set(q["relevant"]) <= ids and set(q["wrong"]) <= ids and not set(q["relevant"]) & set(q["wrong"])
        assert (q["wrongKind"] is None) == (not q["wrong"])
        assert q["branch"] == "main" or q["branch"] in rset.BRANCHES
        for key in q["relevant"]:  # an answer is visible where the question is asked
            assert byid[key]["branch"] in (None, q["branch"]), q["id"]
    for m in memories:
        assert rset.START <= _time(m["createdAt"]) < rset.NOW
        assert m["branch"] is None or (m["category"] == "branch" and m["branch"] in rset.BRANCHES)


def test_superseded_pairs_and_branch_kinds(committed):
    memories, queries = committed
    byid = {m["id"]: m for m in memories}
    superseded = [q for q in queries if q["category"] == "superseded"]
    assert len(superseded) == 50
    for q in superseded:
        (new,), (old,) = q["relevant"], q["wrong"]
        assert q["wrongKind"] == "superseded"
        assert _time(byid[old]["createdAt"]) < _time(byid[new]["createdAt"])
    kinds = Counter(q["wrongKind"] for q in queries if q["category"] == "branch")
    assert kinds == {"other-branch": 20, "main-on-branch": 10, None: 10}
    for q in queries:
        if q["wrongKind"] == "other-branch":
            assert all(byid[k]["branch"] not in (None, q["branch"]) for k in q["wrong"])
        if q["wrongKind"] == "main-on-branch":
            assert q["branch"] != "main" and all(byid[k]["branch"] is None for k in q["wrong"])
        if q["wrongKind"] == "near-miss":  # the sibling identifier: the same family, another name
            (right,), (near,) = q["relevant"], q["wrong"]
            assert byid[right]["text"].split()[0] != byid[near]["text"].split()[0]
            assert byid[right]["text"].split()[0] in q["text"]


def test_paraphrases_share_no_indexed_term_with_their_answer(committed):
    memories, queries = committed
    byid = {m["id"]: m for m in memories}
    shared = {}
    for q in (q for q in queries if q["category"] == "paraphrase"):
        held = TOKENIZER.term_set(byid[q["relevant"][0]]["text"])
        common = [t.text for t in TOKENIZER.query_terms(q["text"])
                  if t.text in held or (t.prefix and any(h.startswith(t.text) for h in held))]
        if common:
            shared[q["text"]] = common
    assert shared == {}
    assert sum(1 for q in queries if q["category"] == "paraphrase") == 70


def test_date_answers_are_the_series_memories_in_the_range(committed):
    memories, queries = committed
    byid = {m["id"]: m for m in memories}
    dates = [q for q in queries if q["category"] == "date"]
    assert len(dates) == 40
    for q in dates:
        start, end = (_time(t) for t in q["range"])
        series = {byid[k]["series"] for k in q["relevant"]}
        assert len(series) == 1
        inside = {m["id"] for m in memories if m.get("series") in series and start <= _time(m["createdAt"]) < end}
        assert set(q["relevant"]) == inside, q["text"]
    for m in memories:
        if m["category"] == "date":  # the time is only in createdAt: no year or month in the text
            assert not any(str(year) in m["text"] for year in (2023, 2024, 2025))


def test_item8_cases_hold_what_they_promise(committed):
    """crowded: the answer ties with its component's six other facts on the terms they share with the question,
    and no other memory holds those terms; meaning: the answer shares no term with the question while more than
    ten memories share one; one-term: the memories hold exactly one of the question's groups, each held by more
    than ten memories; dated: the answers are the project's notes in the range, and no note names a date."""
    memories, queries = committed
    terms = {m["id"]: TOKENIZER.term_set(m["text"]) for m in memories}
    byid = {m["id"]: m for m in memories}
    by_category = Counter(q["category"] for q in queries)
    assert {c: by_category[c] for c in rset.ITEM8_CATEGORIES} == {"crowded": 20, "meaning": 20, "one-term": 20,
                                                                 "dated": 32}
    for q in queries:
        if q["category"] == "crowded":
            facts = [m["id"] for m in memories if m["category"] == "crowded" and q["component"] in m["text"]]
            assert len(facts) == 7 and q["relevant"][0] in facts
            shared = {frozenset(_held(q["text"], terms[k])) for k in facts}
            assert len(shared) == 1 and next(iter(shared)), q["text"]
            tied = next(iter(shared))
            others = [m for m in memories if m["id"] not in facts and _held(q["text"], terms[m["id"]]) >= tied]
            assert not others, q["text"]
        elif q["category"] == "meaning":
            assert _held(q["text"], terms[q["relevant"][0]]) == set(), q["text"]
            assert sum(1 for m in memories if _held(q["text"], terms[m["id"]])) > 10, q["text"]
        elif q["category"] == "one-term":
            held = Counter(g for m in memories for g in _held(q["text"], terms[m["id"]]))
            assert len(held) == 1 and min(held.values()) > 10, (q["text"], held)
        elif q["category"] == "dated":
            start, end = (_time(t) for t in q["range"])
            series = {byid[k]["series"] for k in q["relevant"]}
            assert len(series) == 1
            inside = {m["id"] for m in memories if m.get("series") in series and start <= _time(m["createdAt"]) < end}
            assert set(q["relevant"]) == inside and _time(q["range"][1]) <= rset.NOW, q["text"]
    for m in memories:
        if m["category"] == "dated":
            assert not any(str(year) in m["text"] for year in (2023, 2024, 2025))
