"""Search text for every Source (pure): normalization, CJK bigrams, identifier splitting. The one tokenizer
of the Documents search index and the Memory Spaces side index (DESIGN.md section 2).

- **Normalization** (:func:`normalize`): NFKC, then Unicode case folding (``str.casefold``: ``ß`` -> ``ss``,
  full-width ``ＡＢ`` -> ``ab``). Items, documents and queries are matched in this form.
- **CJK**: Han, Hiragana, Katakana and Hangul runs (with the prolonged-sound and iteration marks) become
  overlapping character bigrams; indexed text also gets the last character of each run as a unigram, so
  every character begins some indexed term and a one-character query is a *prefix* term that finds the
  character anywhere (``数据库`` -> ``数据 据库 库``). A query run of two or more characters uses its bigrams.
- **Words and identifiers**: runs of letters, digits, marks and ``_`` joined by single ``-`` or ``.``
  (``snake_case``, ``kebab-case``, ``v1.2.3``, ``gen-itgc``, ``parse_config.py``). An identifier is indexed
  whole and also as each distinct part (split at ``-``, ``.``, ``_``; with ``camel_case`` also at camelCase /
  PascalCase boundaries: ``getUserName`` -> ``getusername get user name``, ``HTTPServer`` -> ``httpserver
  http server``); no stemming.
- **Queries** (:meth:`Tokenizer.query_terms`): de-duplicated; an identifier and its parts share one
  *group* (coverage counts the identifier once); one-character non-CJK words are dropped unless nothing
  else is left (and one-character parts of longer identifiers always); ``stopwords`` are dropped; at most
  ``max_query_terms`` terms.

Where the two Sources differ, it is a parameter of :class:`Tokenizer`, not a second tokenizer:

============================  =========================  ===============================
parameter                     Documents                  Memory Spaces
============================  =========================  ===============================
``camel_case``                False                      True (identifiers in long-term memory)
``stopwords``                 none                       :data:`ENGLISH_STOPWORDS` (the Mnemon CLI's)
``max_query_terms``           64                         32
============================  =========================  ===============================

Each Source stores its tokenizer's ``version`` in its side index; bump it whenever the output for some
text changes (the index is rebuilt when the stored version differs).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable

#: The Mnemon CLI's English stopword list (mnemon-cli.md 9.1, ~80 words), as folded words.
ENGLISH_STOPWORDS = frozenset("""
a an the is are was were be been being am to of in on at by for with from as into onto about above
below over under and or but nor so if then than that this these those it its it's i me my we our you
your he him his she her they them their what which who whom whose how when where why not no yes do
does did doing done have has had having can could will would shall should may might must just also
very too more most some any all each every both few other such only own same there here out up down
off again further once
""".split())

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006\u303b\u309d\u309e\u30fd\u30fe"
_WORD_CHAR = rf"[[\p{{L}}\p{{N}}\p{{M}}_]--[{_CJK}]]"
#: ``(token, parts, camel hint, camel split)``: the compiled patterns, built by :func:`_patterns` on the first
#: tokenization (the ``regex`` package costs ~9 ms to import; a wake that only reads an index never tokenizes).
_COMPILED: list[Any] = []


def _patterns() -> list[Any]:
    """The four patterns of :data:`_COMPILED`, compiled once (``regex``: Unicode property classes and set
    difference, which ``re`` lacks)."""
    if not _COMPILED:
        import regex

        _COMPILED.extend((
            regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_WORD_CHAR}+(?:[-.]{_WORD_CHAR}+)*)", regex.V1),
            regex.compile(r"[-._]+"),
            regex.compile(r"\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}"),
            regex.compile(r"(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})", regex.V1)))
    return _COMPILED


def normalize(text: str) -> str:
    """NFKC, then case folding: the form every indexed text and every query is matched in."""
    return unicodedata.normalize("NFKC", text).casefold()


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One query term: ``text`` (normalized), ``prefix`` (a single CJK character matched as the first
    character of any indexed term) and ``group`` (coverage unit: an identifier and its parts share one;
    the identifier itself, the *whole* term, comes first in its group)."""

    text: str
    prefix: bool
    group: int


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """One configuration of the tokenizer (module doc): ``version`` (stored by the Source's side index),
    ``max_query_terms``, ``camel_case`` (split camelCase identifiers too), ``stopwords`` (folded words
    neither indexed nor searched). Methods take raw text (already-normalized text gives the same terms)."""

    version: int
    max_query_terms: int
    camel_case: bool = False
    stopwords: frozenset[str] = field(default_factory=frozenset)

    # -------------------------------------------------------------- pieces

    def _prepare(self, text: str) -> str:
        # camelCase boundaries need the original case: fold piece by piece then; otherwise fold first
        return unicodedata.normalize("NFKC", text) if self.camel_case else normalize(text)

    def word_pieces(self, word: str) -> list[str]:
        """``word`` (one word match, NFKC) -> folded ``[whole, *distinct parts]`` (module doc)."""
        whole = word.casefold()
        pieces = [whole]
        _, parts, camel_hint, camel_split = _COMPILED or _patterns()
        for part in parts.split(word):
            if not part:
                continue
            camel = ([c for c in camel_split.split(part) if c]
                     if self.camel_case and camel_hint.search(part) else [])
            for piece in (part, *camel) if len(camel) > 1 else (part,):
                folded = piece.casefold()
                if folded not in pieces:
                    pieces.append(folded)
        return pieces

    # -------------------------------------------------------------- indexed text

    def document_terms(self, text: str) -> list[str]:
        """Every indexed term of ``text``, in order, with repeats; stopwords removed (module doc)."""
        out: list[str] = []
        append, extend, stop = out.append, out.extend, self.stopwords
        for run, word in (_COMPILED or _patterns())[0].findall(self._prepare(text)):
            if run:
                run = run.casefold()
                if len(run) > 1:
                    extend([run[i:i + 2] for i in range(len(run) - 1)])
                append(run[-1])
            elif stop:
                extend(p for p in self.word_pieces(word) if p not in stop)
            else:
                extend(self.word_pieces(word))
        return out

    def term_counts(self, text: str) -> tuple[Counter[str], int]:
        """``(term -> count, total terms)`` of ``text``."""
        terms = self.document_terms(text)
        return Counter(terms), len(terms)

    def term_set(self, text: str) -> frozenset[str]:
        """The distinct indexed terms of ``text`` (used for overlap ratios)."""
        return frozenset(self.document_terms(text))

    # -------------------------------------------------------------- queries

    def query_terms(self, query: str, limit: int | None = None) -> list[QueryTerm]:
        """The query terms of ``query`` (module doc), de-duplicated, at most ``limit`` (default
        ``max_query_terms``)."""
        terms: list[QueryTerm] = []
        short: list[QueryTerm] = []
        seen: set[tuple[str, bool]] = set()
        group = 0
        for match in (_COMPILED or _patterns())[0].finditer(self._prepare(query)):
            run = match.group("cjk")
            if run:
                run = run.casefold()
                candidates = [(run, True)] if len(run) == 1 else [(run[i:i + 2], False) for i in range(len(run) - 1)]
                for text, prefix in candidates:
                    if (text, prefix) not in seen:
                        seen.add((text, prefix))
                        terms.append(QueryTerm(text, prefix, group))
                        group += 1
                continue
            word = match.group("word")
            pieces = [p for p in self.word_pieces(word) if p not in self.stopwords and (p, False) not in seen]
            target = terms if len(word) > 1 else short
            added = False
            for piece in pieces:
                if len(piece) == 1 and len(word) > 1:
                    continue
                seen.add((piece, False))
                target.append(QueryTerm(piece, False, group))
                added = True
            if added:
                group += 1
        chosen = terms or short
        return chosen[:self.max_query_terms if limit is None else limit]


# ------------------------------------------------------------------ matching helpers


def _holds(term: QueryTerm, document: Collection[str]) -> bool:
    if term.prefix:
        return any(t.startswith(term.text) for t in document)
    return term.text in document


def _groups(terms: Iterable[QueryTerm]) -> dict[int, list[QueryTerm]]:
    groups: dict[int, list[QueryTerm]] = {}
    for term in terms:
        groups.setdefault(term.group, []).append(term)
    return groups


def coverage(terms: list[QueryTerm], document: Collection[str]) -> float:
    """Fraction (0..1) of the query's groups that ``document`` (a set of indexed terms) holds: a group is
    held when any of its terms is (the identifier or one of its parts)."""
    groups = _groups(terms)
    if not groups:
        return 0.0
    return sum(1 for members in groups.values() if any(_holds(t, document) for t in members)) / len(groups)


def exactness(terms: list[QueryTerm], document: Collection[str]) -> float:
    """Of the groups ``document`` holds, the fraction (0..1) it holds by the group's *whole* term: 1.0 when
    every matched identifier occurs as itself, lower when only its parts do (``retry_backoff`` against a
    document naming only ``retry_backoff_ms``, whose terms are ``retry_backoff_ms retry backoff ms``).
    Plain words and CJK terms are whole terms. 0.0 when nothing matches."""
    matched = exact = 0
    for members in _groups(terms).values():
        if _holds(members[0], document):
            matched += 1
            exact += 1
        elif any(_holds(t, document) for t in members[1:]):
            matched += 1
    return exact / matched if matched else 0.0


def grouped(terms: Iterable[QueryTerm]) -> list[list[QueryTerm]]:
    """The query's term groups (each group's whole term first), for :func:`match_scores` over many documents."""
    return list(_groups(terms).values())


def match_scores(groups: list[list[QueryTerm]], document: Collection[str]) -> tuple[float, float]:
    """``(coverage(terms, document), exactness(terms, document))`` in one pass over the query's term groups
    (:func:`grouped`): what a recall computes for each of its candidates."""
    if not groups:
        return 0.0, 0.0
    matched = exact = 0
    for members in groups:
        if _holds(members[0], document):
            matched += 1
            exact += 1
        elif any(_holds(t, document) for t in members[1:]):
            matched += 1
    return matched / len(groups), (exact / matched if matched else 0.0)


def fts_match(terms: list[QueryTerm], operator: str = "OR") -> str:
    """An FTS5 ``MATCH`` expression: every term quoted, joined by ``operator``; a prefix term gets ``*``."""
    parts = []
    for term in terms:
        quoted = '"' + term.text.replace('"', '""') + '"'
        parts.append(quoted + "*" if term.prefix else quoted)
    return f" {operator} ".join(parts)


def required_matches(groups: int) -> int:
    """How many distinct query groups a document must contain: 0 -> 0, 1-3 -> 1, else
    ``max(2, ceil(n / 4))`` (the plugin's ``lexicalRequiredMatchCount``)."""
    if groups <= 0:
        return 0
    if groups <= 3:
        return 1
    return max(2, math.ceil(groups / 4))


# --------------------------------------------------------------------------- query length

#: The longest query of every search (Memory Space recall, Documents search; CLI, MCP and language server
#: alike), in characters: Unicode code points, so an emoji or a CJK character outside the BMP counts one.
MAX_QUERY_CHARS = 2000


def check_query_length(text: str, field_name: str = "query") -> str:
    """``text`` unchanged when it has at most :data:`MAX_QUERY_CHARS` code points, else
    :class:`mnemon_ls.errors.InvalidInput` naming ``field_name`` (rule ``must be at most 2000 characters
    (Unicode code points; got N)``, detail ``length``). The one query-length rule of every surface."""
    if len(text) > MAX_QUERY_CHARS:
        from .errors import InvalidInput

        raise InvalidInput(field_name, f"must be at most {MAX_QUERY_CHARS} characters (Unicode code points; "
                                       f"got {len(text)})", length=len(text))
    return text
