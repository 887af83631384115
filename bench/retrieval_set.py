"""The labelled set of bench/retrieval_quality.py (issue 27 item 7): memories a coding assistant keeps about a
project, and questions about them, in English and Chinese, generated deterministically (``random.Random(SEED)``
drawing from the fixed lists of bench/retrieval_set_data.py) and committed as ``bench/data/retrieval_set.jsonl.gz``.

``python bench/retrieval_set.py`` rewrites the committed file; ``--check`` exits 1 when it differs from what this
script makes (tests/bench/test_retrieval_set.py checks the same, and the counts).

One JSON object a line, the memories first (in id order), then the queries:

- memory ``{"type": "memory", "id": "m0001", "lang": "en"|"zh", "category", "storeCategory", "text",
  "createdAt": "YYYY-MM-DDTHH:MM:SSZ", "branch": null | "<branch>", "series"?}``: ``category`` is this set's
  (below), ``storeCategory`` the ``category`` it is remembered with, ``branch`` the branch it is remembered on
  with ``scopeToBranch`` (``null``: on ``main``, visible everywhere), ``series`` the meeting series of a
  ``date`` memory;
- query ``{"type": "query", "id": "q0001", "lang", "category", "text", "branch", "relevant": [memory ids],
  "wrong": [memory ids], "wrongKind": null | "superseded" | "main-on-branch" | "other-branch" | "near-miss" |
  "name-only", "range"?: [start, end)}``: asked with ``branch`` checked out; ``relevant`` empty = nothing
  stored answers it; ``wrong`` = memories that look like the answer and are not (an older fact its successor
  replaced, the main fact a branch changed, a fact of another branch, an identifier's near-miss, the facts
  about a person whose only match with the question is the name); ``range`` = the time range a ``date``
  query names (its relevant memories are every memory of its series created in it).

Categories (memories and queries; ``filler`` has no query): ``decision``, ``convention`` (keyword questions
about one of 150 similar facts per language), ``superseded`` (an old fact and its successor, same subject,
created 60-400 days later; the query asks for the current value), ``branch`` (facts remembered on a feature
branch, with or without a different main fact; asked on ``main`` or on that branch), ``identifier`` (facts
about code identifiers each with a near-miss sibling: ``parse_invoice_v2`` / ``parse_invoice_v3``,
``RemoteCartStore`` / ``RemoteCartCache``), ``paraphrase`` (the question shares no indexed term with its
answer: tests/bench/test_retrieval_set.py checks it with the Memory Spaces tokenizer), ``date`` (meeting notes
whose text has no date; the question names a month, a quarter, "last week", "last month", ...), ``name``
(a person's name alone or with a question about something never stored), ``no-answer`` (nothing stored
answers it; half share a word with some memory), ``filler`` (other project facts); then the cases of issue 27
item 8 (bench/retrieval_set_item8.py, drawn from a generator of their own, :data:`ITEM8_SEED`, after the parts
above, which are as they were): ``crowded`` (the answer is one of seven facts of a component that tie on the
words they share with the question), ``meaning`` (no word in common with the answer, many memories sharing one
of the question's), ``one-term`` (nothing answers it; one common word in common with the memories), ``dated``
(status notes without a date in the text; the question names "April 2025", "2024", "yesterday", "last week",
"2025年4月", "2024年", "昨天", "上周"; a ``dated`` memory has ``series`` = its project).

Times are UTC; :data:`NOW` is the clock of the benchmark's recalls (a Monday): "last week" is 2025-06-09 to
2025-06-15.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_set_data import (  # noqa: E402
    EN_COMPONENTS, EN_TOPICS, EN_REASONS, EN_DECISION_QUERIES, ZH_COMPONENTS, ZH_TOPICS, ZH_REASONS,
    ZH_DECISION_QUERIES, EN_MODULES, EN_RULES, ZH_MODULES, ZH_RULES, EN_SERVICES, EN_ATTRIBUTES, ZH_SERVICES,
    ZH_ATTRIBUTES, BRANCHES, EN_COUNTERPARTS, EN_BRANCH_ONLY, ZH_COUNTERPARTS, ZH_BRANCH_ONLY, SLUGS, EN_NOUNS,
    ZH_NOUNS, PREFIXES, EN_BEHAVIOURS, ZH_BEHAVIOURS, EN_IDENTIFIER_QUERIES, ZH_IDENTIFIER_QUERIES, EN_PARAPHRASES,
    ZH_PARAPHRASES, SERIES, EN_SERIES, ZH_SERIES, SERIES_EXTRA, RELATIVE, EN_DATE_QUERIES, EN_QUARTER_QUERIES,
    ZH_DATE_QUERIES, QUARTER_NAMES, EN_PEOPLE, ZH_PEOPLE, EN_PERSON_FACTS, ZH_PERSON_FACTS, EN_THINGS, ZH_THINGS,
    EN_VENDORS, ZH_VENDORS, EN_TEAMS, ZH_TEAMS, EN_NAME_QUERIES, ZH_NAME_QUERIES, EN_NAME_UNKNOWN, ZH_NAME_UNKNOWN,
    EN_NO_ANSWER, ZH_NO_ANSWER, EN_FILLER_SUBJECTS, EN_FILLER_PREDICATES, ZH_FILLER_SUBJECTS, ZH_FILLER_PREDICATES,
)
from retrieval_set_item8 import (  # noqa: E402
    EN_CROWDED_COMPONENTS, EN_CROWDED_FACTS, ZH_CROWDED_COMPONENTS, ZH_CROWDED_FACTS, EN_MEANING, ZH_MEANING,
    EN_ONE_TERM, ZH_ONE_TERM, DATED_PROJECTS, DATED_DAYS, EN_DATED_NOTES, ZH_DATED_NOTES, DATED_QUESTIONS,
)

SEED = 27
NOW = datetime(2025, 6, 16, 9, 0, tzinfo=timezone.utc)
START = datetime(2023, 1, 2, tzinfo=timezone.utc)
END = datetime(2025, 6, 6, tzinfo=timezone.utc)
OUT = Path(__file__).resolve().parent / "data" / "retrieval_set.jsonl.gz"
CATEGORIES = ("decision", "convention", "superseded", "branch", "identifier", "paraphrase", "date", "name",
              "no-answer", "crowded", "meaning", "one-term", "dated")
#: The categories of issue 27 item 8's cases (:mod:`retrieval_set_item8`), drawn after the others.
ITEM8_CATEGORIES = ("crowded", "meaning", "one-term", "dated")
#: The seed of the item-8 parts' own generator (so the parts before them are as they were).
ITEM8_SEED = 2708
LANGS = ("en", "zh")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")

FILLER_PER_LANG = 450


def stamp(moment: datetime) -> str:
    """``moment`` (UTC) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def day(text: str) -> datetime:
    """``YYYY-MM-DD`` as midnight UTC."""
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)


class Builder:
    """Collects the memories and queries (ids in creation order) from one seeded random generator."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        self.memories: list[dict[str, Any]] = []
        self.queries: list[dict[str, Any]] = []

    def when(self, start: datetime = START, end: datetime = END) -> datetime:
        """A random minute in ``[start, end)``."""
        minutes = int((end - start).total_seconds() // 60)
        return start + timedelta(minutes=self.rng.randrange(minutes))

    def on(self, date: str) -> datetime:
        """A random minute of working hours (09:00-18:00 UTC) of ``date``."""
        return day(date) + timedelta(minutes=9 * 60 + self.rng.randrange(9 * 60))

    def memory(self, lang: str, category: str, text: str, at: datetime, store: str = "fact",
               branch: str | None = None, **extra: Any) -> str:
        """Add a memory; returns its id."""
        key = f"m{len(self.memories) + 1:04d}"
        self.memories.append({"type": "memory", "id": key, "lang": lang, "category": category,
                              "storeCategory": store, "text": text, "createdAt": stamp(at), "branch": branch, **extra})
        return key

    def query(self, lang: str, category: str, text: str, relevant: list[str], *, branch: str = "main",
              wrong: list[str] | None = None, wrong_kind: str | None = None, **extra: Any) -> None:
        """Add a query."""
        self.queries.append({"type": "query", "id": f"q{len(self.queries) + 1:04d}", "lang": lang,
                             "category": category, "text": text, "branch": branch, "relevant": relevant,
                             "wrong": wrong or [], "wrongKind": wrong_kind if wrong else None, **extra})


def _decisions(b: Builder) -> None:
    for lang, comps, topics, reasons, asks in (("en", EN_COMPONENTS, EN_TOPICS, EN_REASONS, EN_DECISION_QUERIES),
                                               ("zh", ZH_COMPONENTS, ZH_TOPICS, ZH_REASONS, ZH_DECISION_QUERIES)):
        made = []
        for comp in comps:
            for topic, options in topics:
                choice, reason = b.rng.choice(options), b.rng.choice(reasons)
                text = (f"Decision for the {comp}: we chose {choice} as the {topic} {reason}." if lang == "en"
                        else f"{comp}的技术决定：{topic}选用 {choice}，{reason}。")
                made.append((b.memory(lang, "decision", text, b.when(), "decision"), comp, topic))
        for key, comp, topic in b.rng.sample(made, 20):
            b.query(lang, "decision", b.rng.choice(asks).format(c=comp, t=topic), [key])


def _conventions(b: Builder) -> None:
    for lang, modules, rules in (("en", EN_MODULES, EN_RULES), ("zh", ZH_MODULES, ZH_RULES)):
        made = []
        for module in modules:
            for rule, options, ask in rules:
                said = rule.replace("{v}", b.rng.choice(options))
                text = f"Convention in the {module}: {said}." if lang == "en" else f"{module}的约定：{said}。"
                made.append((b.memory(lang, "convention", text, b.when(), "preference"), ask.replace("{m}", module)))
        for key, ask in b.rng.sample(made, 20):
            b.query(lang, "convention", ask, [key])


def _superseded(b: Builder) -> None:
    for lang, services, attributes in (("en", EN_SERVICES, EN_ATTRIBUTES), ("zh", ZH_SERVICES, ZH_ATTRIBUTES)):
        combos = b.rng.sample([(s, a) for s in services for a in attributes], 50)
        for number, (service, (fact, values, ask)) in enumerate(combos):
            old_value, new_value = b.rng.choice(values)
            first = fact.replace("{s}", service)
            old_at = b.when(START, datetime(2024, 10, 1, tzinfo=timezone.utc))
            new_at = min(old_at + timedelta(days=60 + b.rng.randrange(340)), END)
            old = b.memory(lang, "superseded", first.replace("{v}", old_value), old_at)
            text = first.replace("{v}", new_value)
            form = b.rng.randrange(3)
            if form == 1:
                text = ("Update: " if lang == "en" else "更新：") + text
            elif form == 2:
                text = text[:-1] + (f", changed from {old_value}." if lang == "en" else f"（原来是{old_value}）。")
            new = b.memory(lang, "superseded", text, new_at)
            if number < 25:
                b.query(lang, "superseded", ask.replace("{s}", service), [new], wrong=[old], wrong_kind="superseded")


def _branches(b: Builder) -> None:
    branch_from = datetime(2025, 3, 1, tzinfo=timezone.utc)
    for lang, services, pairs, only in (("en", EN_SERVICES, EN_COUNTERPARTS, EN_BRANCH_ONLY),
                                        ("zh", ZH_SERVICES, ZH_COUNTERPARTS, ZH_BRANCH_ONLY)):
        number = 0
        for main_fact, branch_fact, ask in pairs:
            for service in b.rng.sample(services, 2):
                branch = b.rng.choice(BRANCHES)
                main = b.memory(lang, "branch", main_fact.replace("{s}", service), b.when(START, branch_from))
                scoped = b.memory(lang, "branch", branch_fact.replace("{s}", service), b.when(branch_from, END),
                                  branch=branch)
                question = ask.replace("{s}", service)
                if number % 2 == 0:
                    b.query(lang, "branch", question, [main], wrong=[scoped], wrong_kind="other-branch")
                else:
                    b.query(lang, "branch", question, [scoped], branch=branch, wrong=[main],
                            wrong_kind="main-on-branch")
                number += 1
        number = 0
        for fact, ask in only:
            for service in b.rng.sample(services, 2):
                branch = b.rng.choice(BRANCHES)
                slug = SLUGS[service]
                text = (fact.replace("{s}", service).replace("{slug}", slug).replace("{SLUG}", slug.upper())
                        .replace("{n}", f"{b.rng.randrange(100, 1000)}"))
                scoped = b.memory(lang, "branch", text, b.when(branch_from, END), branch=branch)
                question = ask.replace("{s}", service)
                if number % 2 == 0:
                    b.query(lang, "branch", question, [scoped], branch=branch)
                else:
                    b.query(lang, "branch", question, [], wrong=[scoped], wrong_kind="other-branch")
                number += 1


def _identifiers(b: Builder) -> None:
    for lang, nouns, behaviours, asks in (("en", EN_NOUNS, EN_BEHAVIOURS, EN_IDENTIFIER_QUERIES),
                                          ("zh", ZH_NOUNS, ZH_BEHAVIOURS, ZH_IDENTIFIER_QUERIES)):
        made = []
        for noun in nouns:
            snake, upper, prefix = noun.lower(), noun.upper(), b.rng.choice(PREFIXES)
            families = [(f"parse_{snake}_v2", f"parse_{snake}_v3"), (f"{prefix}{noun}Store", f"{prefix}{noun}Cache"),
                        (f"fetch{noun}ById", f"fetch{noun}sByIds"),
                        (f"MAX_{upper}_RETRIES", f"MAX_{upper}_RETRY_DELAY_MS")]
            for (first, second), (says_first, says_second) in zip(families, behaviours):
                keys = []
                for ident, says in ((first, says_first), (second, says_second)):
                    text = f"{ident} {b.rng.choice(says)}" + ("." if lang == "en" else "。")
                    keys.append((b.memory(lang, "identifier", text, b.when()), ident))
                made.append((keys[0], keys[1]))
                made.append((keys[1], keys[0]))
        for (key, ident), (sibling, _other) in b.rng.sample(made, 25):
            b.query(lang, "identifier", b.rng.choice(asks).format(i=ident), [key], wrong=[sibling],
                    wrong_kind="near-miss")


def _paraphrases(b: Builder) -> None:
    for lang, pairs in (("en", EN_PARAPHRASES), ("zh", ZH_PARAPHRASES)):
        for fact, ask in pairs:
            b.query(lang, "paraphrase", ask, [b.memory(lang, "paraphrase", fact, b.when())])


def _dates(b: Builder) -> None:
    """Monthly meeting notes (English 2024-06..2025-05, Chinese 2023-06..2024-05), the extras of
    :data:`SERIES_EXTRA`; questions naming a month or a quarter of their language's run, and :data:`RELATIVE`."""
    made: dict[str, list[tuple[str, datetime]]] = {s: [] for s in SERIES}
    for lang, contents, first_year in (("en", EN_SERIES, 2024), ("zh", ZH_SERIES, 2023)):
        for series, notes in contents.items():
            prefix = SERIES[series][0 if lang == "en" else 1]
            extras = [d for s, la, d in SERIES_EXTRA if s == series and la == lang]
            dates = [f"{first_year + (5 + m) // 12}-{(5 + m) % 12 + 1:02d}-{3 + b.rng.randrange(23):02d}"
                     for m in range(12)] + extras
            assert len(dates) == len(notes), (series, lang)
            for note, date in zip(notes, dates):
                at = b.on(date)
                text = f"{prefix}: {note}." if lang == "en" else f"{prefix}：{note}。"
                made[series].append((b.memory(lang, "date", text, at, "context", series=series), at))

    def ask(lang: str, series: str, text: str, start: datetime, end: datetime) -> None:
        relevant = sorted(k for k, at in made[series] if start <= at < end)
        assert relevant, (series, start)
        b.query(lang, "date", text, relevant, range=[stamp(start), stamp(end)])

    for lang, first_year in (("en", 2024), ("zh", 2023)):
        months = [(first_year + (5 + m) // 12, (5 + m) % 12 + 1) for m in range(12)]
        picks = [(s, m) for s in SERIES for m in months]
        for number, (series, (year, month)) in enumerate(b.rng.sample(picks, 12)):
            start = datetime(year, month, 1, tzinfo=timezone.utc)
            end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
            when = f"{MONTHS[month - 1]} {year}" if lang == "en" else f"{year}年{month}月"
            asks = EN_DATE_QUERIES if lang == "en" else ZH_DATE_QUERIES
            ask(lang, series, asks[series].format(when=when), start, end)
        quarters = [(first_year, 3), (first_year, 4), (first_year + 1, 1)]
        for series, (year, quarter) in zip(b.rng.sample(list(SERIES), 3), quarters):
            start = datetime(year, 3 * quarter - 2, 1, tzinfo=timezone.utc)
            end = datetime(year + quarter // 4, (3 * quarter) % 12 + 1, 1, tzinfo=timezone.utc)
            when = (f"the {QUARTER_NAMES[quarter - 1]} quarter of {year}" if lang == "en"
                    else f"{year}年第{'一二三四'[quarter - 1]}季度")
            asks = EN_QUARTER_QUERIES if lang == "en" else ZH_DATE_QUERIES
            ask(lang, series, asks[series].format(when=when), start, end)
    for lang, series, text, start, end in RELATIVE:
        ask(lang, series, text, day(start), day(end))


def _people(b: Builder) -> None:
    for lang, people, facts, things, vendors, teams, asks, unknown in (
            ("en", EN_PEOPLE, EN_PERSON_FACTS, EN_THINGS, EN_VENDORS, EN_TEAMS, EN_NAME_QUERIES, EN_NAME_UNKNOWN),
            ("zh", ZH_PEOPLE, ZH_PERSON_FACTS, ZH_THINGS, ZH_VENDORS, ZH_TEAMS, ZH_NAME_QUERIES, ZH_NAME_UNKNOWN)):
        keys: dict[str, list[str]] = {}
        for person in people:
            for fact in b.rng.sample(facts, 2):
                text = (fact.replace("{p}", person).replace("{thing}", b.rng.choice(things))
                        .replace("{vendor}", b.rng.choice(vendors)).replace("{team}", b.rng.choice(teams)))
                keys.setdefault(person, []).append(b.memory(lang, "name", text, b.when()))
        for number, person in enumerate(b.rng.sample(people, 10)):
            b.query(lang, "name", asks[number % 3].format(p=person, first=person.split()[0]), keys[person])
        for template in unknown:
            person = b.rng.choice(people)
            b.query(lang, "name", template.format(p=person), [], wrong=list(keys[person]), wrong_kind="name-only")


def _no_answer(b: Builder) -> None:
    for lang, asks in (("en", EN_NO_ANSWER), ("zh", ZH_NO_ANSWER)):
        for ask in asks:
            b.query(lang, "no-answer", ask, [])


def _filler(b: Builder) -> None:
    for lang, subjects, predicates in (("en", EN_FILLER_SUBJECTS, EN_FILLER_PREDICATES),
                                       ("zh", ZH_FILLER_SUBJECTS, ZH_FILLER_PREDICATES)):
        pairs = b.rng.sample([(s, p) for s in subjects for p in predicates], FILLER_PER_LANG)
        for subject, predicate in pairs:
            text = f"{subject} {predicate}." if lang == "en" else f"{subject}{predicate}。"
            b.memory(lang, "filler", text, b.when(), "general")


def _crowded(b: Builder) -> None:
    """Item 8a: seven facts of each made-up component; the question asks for one of them in other words."""
    for lang, components, facts in (("en", EN_CROWDED_COMPONENTS, EN_CROWDED_FACTS),
                                    ("zh", ZH_CROWDED_COMPONENTS, ZH_CROWDED_FACTS)):
        for component in components:
            chosen = b.rng.sample(range(len(facts)), 7)
            keys = [b.memory(lang, "crowded", facts[i][0].format(s=component), b.when()) for i in chosen]
            pick = b.rng.randrange(7)
            b.query(lang, "crowded", facts[chosen[pick]][1].format(s=component), [keys[pick]],
                    component=component)


def _meaning(b: Builder) -> None:
    """Item 8b: a fact and a question sharing no term, among many memories sharing the question's words."""
    for lang, pairs in (("en", EN_MEANING), ("zh", ZH_MEANING)):
        for fact, ask in pairs:
            b.query(lang, "meaning", ask, [b.memory(lang, "meaning", fact, b.when())])


def _one_term(b: Builder) -> None:
    """Item 8c: questions nothing answers that share one common term with the memories."""
    for lang, asks in (("en", EN_ONE_TERM), ("zh", ZH_ONE_TERM)):
        for ask in asks:
            b.query(lang, "one-term", ask, [])


def _dated(b: Builder) -> None:
    """Item 8d: status notes of each project on :data:`DATED_DAYS`; questions naming a month, a year,
    yesterday or last week (relative to :data:`NOW`)."""
    for lang, notes in (("en", EN_DATED_NOTES), ("zh", ZH_DATED_NOTES)):
        for names in DATED_PROJECTS:
            project = names[0 if lang == "en" else 1]
            made = []
            for note, date in zip(b.rng.sample(notes, len(notes)), DATED_DAYS):
                at = b.on(date)
                text = f"Status of the {project}: {note}." if lang == "en" else f"{project}状态：{note}。"
                made.append((b.memory(lang, "dated", text, at, "context", series=project), at))
            for en, zh, start, end in DATED_QUESTIONS:
                relevant = sorted(k for k, at in made if day(start) <= at < day(end))
                assert relevant, (project, start)
                b.query(lang, "dated", (en if lang == "en" else zh).format(p=project), relevant,
                        range=[stamp(day(start)), stamp(day(end))])


def build(seed: int = SEED) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(memories, queries)`` of the set (module doc). Raises ``AssertionError`` if two memories have the
    same text or a date query finds no memory of its series in its range."""
    b = Builder(seed)
    for part in (_decisions, _conventions, _superseded, _branches, _identifiers, _paraphrases, _dates, _people,
                 _no_answer, _filler):
        part(b)
    b.rng = random.Random(ITEM8_SEED)  # the item-8 parts draw from their own generator
    for part in (_crowded, _meaning, _one_term, _dated):
        part(b)
    texts = [m["text"] for m in b.memories]
    assert len(set(texts)) == len(texts), "two memories have the same text"
    return b.memories, b.queries


def render(seed: int = SEED) -> str:
    """The set as JSON lines (memories, then queries), UTF-8 text ending with a newline."""
    memories, queries = build(seed)
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in memories + queries)


def load(path: Path = OUT) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(memories, queries)`` read from the committed file (``.gz`` or plain JSON lines)."""
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [r for r in records if r["type"] == "memory"], [r for r in records if r["type"] == "query"]


def write(path: Path = OUT) -> None:
    """Write :func:`render` to ``path`` (gzip with a fixed mtime and no file name when it ends in ``.gz``)."""
    data = render().encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as handle:
            handle.write(data)
        data = buffer.getvalue()
    path.write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write (default: the committed file)")
    parser.add_argument("--check", action="store_true", help="exit 1 when --out differs from what this script makes")
    args = parser.parse_args()
    if args.check:
        memories, queries = build()
        if load(args.out) != (memories, queries):
            print(f"{args.out} differs from what bench/retrieval_set.py makes: run it to rewrite", file=sys.stderr)
            raise SystemExit(1)
        print(f"{args.out}: {len(memories)} memories, {len(queries)} queries, as generated")
        return
    write(args.out)
    memories, queries = build()
    print(f"wrote {args.out}: {len(memories)} memories, {len(queries)} queries")


if __name__ == "__main__":
    main()
