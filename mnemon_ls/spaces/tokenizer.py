"""Search tokenization for Memory Space items (pure): CJK bigrams, identifiers whole and split.

The rules follow :mod:`mnemon_ls.documents.tokens` (same normalization, same CJK bigrams, same compound
splitting) so a query means the same thing in both tiers, plus two things long-term memory needs:

- camelCase / PascalCase identifiers are also split into their words (``getUserName`` -> ``getusername``,
  ``get``, ``user``, ``name``; ``HTTPServer`` -> ``httpserver``, ``http``, ``server``);
- the Mnemon CLI's English stopwords (mnemon-cli.md 9.1) are not indexed and not searched, which keeps
  the highest-frequency words out of the postings (a query of stopwords only finds nothing, as in the CLI).

It is a separate module rather than an import of the Documents tokenizer because DESIGN.md section 2
forbids one Source importing another (and importing it loads the whole Documents Source, ~90 ms).

- Normalization: NFKC, then ``str.casefold``.
- Han, Hiragana, Katakana and Hangul runs become overlapping character bigrams; a document also gets the
  last character of each run as a unigram, so a one-character query is a prefix search that finds the
  character anywhere (``数据库`` -> ``数据 据库 库``).
- Other text: words of letters, digits, marks and ``_`` joined by single ``-`` or ``.`` (``snake_case``,
  ``kebab-case``, ``v1.2.3``, ``parse_config.py``); a compound is kept whole and split into its parts.
- Queries group a compound with its parts (coverage counts the compound once), drop one-character
  non-CJK words unless nothing else is left, and keep at most :data:`MAX_QUERY_TERMS` terms.

Bump :data:`TOKENIZER_VERSION` whenever the output for some text changes: the side index of every space
is rebuilt when its stored version differs.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import regex

TOKENIZER_VERSION = 1
MAX_QUERY_TERMS = 32

#: The Mnemon CLI's English stopword list (mnemon-cli.md 9.1, ~80 words), as a set of folded words.
STOPWORDS = frozenset("""
a an the is are was were be been being am to of in on at by for with from as into onto about above
below over under and or but nor so if then than that this these those it its it's i me my we our you
your he him his she her they them their what which who whom whose how when where why not no yes do
does did doing done have has had having can could will would shall should may might must just also
very too more most some any all each every both few other such only own same there here out up down
off again further once
""".split())

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006\u303b\u309d\u309e\u30fd\u30fe"
_WORD_CHAR = rf"[[\p{{L}}\p{{N}}\p{{M}}_]--[{_CJK}]]"
_TOKEN = regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_WORD_CHAR}+(?:[-.]{_WORD_CHAR}+)*)", regex.V1)
_PARTS = regex.compile(r"[-._]+")
_CAMEL_HINT = regex.compile(r"\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}")
_CAMEL_SPLIT = regex.compile(r"(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})", regex.V1)


def normalize(text: str) -> str:
    """NFKC, then case folding: the form items and queries are matched in."""
    return unicodedata.normalize("NFKC", text).casefold()


def _word_pieces(word: str) -> list[str]:
    """``word`` (NFKC, original case) -> folded ``[whole, *parts]`` (parts split at ``-._`` and camelCase)."""
    parts: list[str] = []
    for part in _PARTS.split(word):
        if not part:
            continue
        camel = [c for c in _CAMEL_SPLIT.split(part) if c] if _CAMEL_HINT.search(part) else []
        if len(camel) > 1:
            folded = part.casefold()
            if folded != word.casefold():
                parts.append(folded)
            parts.extend(p.casefold() for p in camel)
        else:
            parts.append(part.casefold())
    whole = word.casefold()
    pieces = [whole]
    for piece in parts:
        if piece not in pieces:
            pieces.append(piece)
    return pieces


def _matches(text: str):
    return _TOKEN.finditer(unicodedata.normalize("NFKC", text))


def document_terms(text: str) -> list[str]:
    """Every indexed term of raw ``text``, in order, with repeats; stopwords removed (module doc)."""
    out: list[str] = []
    for match in _matches(text):
        run = match.group("cjk")
        if run:
            run = run.casefold()
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
            out.append(run[-1])
        else:
            out.extend(p for p in _word_pieces(match.group("word")) if p not in STOPWORDS)
    return out


def term_set(text: str) -> frozenset[str]:
    """The distinct indexed terms of ``text`` (used for overlap ratios)."""
    return frozenset(document_terms(text))


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One query term: ``text`` (folded), ``prefix`` (a single CJK character matched as the first character
    of any indexed term) and ``group`` (coverage unit: a compound and its parts share one)."""

    text: str
    prefix: bool
    group: int


def query_terms(query: str, limit: int = MAX_QUERY_TERMS) -> list[QueryTerm]:
    """The query terms of raw ``query`` (module doc), de-duplicated, at most ``limit``."""
    terms: list[QueryTerm] = []
    short: list[QueryTerm] = []
    seen: set[tuple[str, bool]] = set()
    group = 0
    for match in _matches(query):
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
        pieces = [p for p in _word_pieces(word) if p not in STOPWORDS and (p, False) not in seen]
        if not pieces:
            continue
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
    return chosen[:limit]


def coverage(terms: list[QueryTerm], document: frozenset[str] | set[str]) -> float:
    """Fraction of the query's groups that ``document`` (a set of indexed terms) contains (0..1)."""
    groups: dict[int, bool] = {}
    for term in terms:
        if groups.get(term.group):
            continue
        if term.prefix:
            hit = any(t.startswith(term.text) for t in document)
        else:
            hit = term.text in document
        groups[term.group] = hit or groups.get(term.group, False)
    if not groups:
        return 0.0
    return sum(1 for hit in groups.values() if hit) / len(groups)


def fts_match(terms: list[QueryTerm], operator: str = "OR") -> str:
    """An FTS5 ``MATCH`` expression: every term quoted, joined by ``operator``; a prefix term gets ``*``."""
    parts = []
    for term in terms:
        quoted = '"' + term.text.replace('"', '""') + '"'
        parts.append(quoted + "*" if term.prefix else quoted)
    return f" {operator} ".join(parts)
