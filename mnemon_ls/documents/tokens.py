"""Search text normalization and tokenization for every script (pure).

- Normalization: NFKC, then Unicode case folding (``str.casefold``: ``ß`` -> ``ss``, full-width ``ＡＢ`` ->
  ``ab``).
- Han, Hiragana, Katakana and Hangul runs (with the prolonged-sound and iteration marks) become
  overlapping character bigrams: ``成语接龙`` -> ``成语 语接 接龙``. A document also gets a unigram for
  the last character of each run (a one-character run is that unigram), so every character of a
  document begins some indexed term and a one-character query becomes a prefix search that finds it
  anywhere. A query run of two or more characters uses its bigrams, so two-character queries match
  exactly.
- Everything else: words of letters, digits, marks and ``_``, joined by single ``-`` or ``.``
  (``snake_case``, ``kebab-case``, ``v1.2.3``, ``gen-itgc``, ``example.com``). A compound is kept whole
  and also split at ``-``, ``.`` and ``_`` into its parts; no stemming.
- Queries drop one-character non-CJK words (``a``, the ``2`` of ``v1.2``) unless nothing else is left,
  keep at most :data:`MAX_QUERY_TOKENS` tokens, and group a compound with its parts so that coverage
  (how many distinct query terms a document must contain) counts the compound once.

Bump :data:`TOKENIZER_VERSION` whenever the output for some text changes: the side search index is
rebuilt when its stored version differs.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass

import regex

TOKENIZER_VERSION = 1
MAX_QUERY_TOKENS = 64

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006\u303b\u309d\u309e\u30fd\u30fe"
_WORD_CHAR = rf"[[\p{{L}}\p{{N}}\p{{M}}_]--[{_CJK}]]"
_TOKEN = regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>{_WORD_CHAR}+(?:[-.]{_WORD_CHAR}+)*)", regex.V1)
_PARTS = regex.compile(r"[-._]+")


def normalize(text: str) -> str:
    """NFKC, then case folding: the form both documents and queries are matched in."""
    return unicodedata.normalize("NFKC", text).casefold()


def _word_tokens(word: str) -> list[str]:
    if "-" in word or "." in word or "_" in word:
        parts = [p for p in _PARTS.split(word) if p]
        if len(parts) > 1:
            return [word, *parts]
    return [word]


def document_terms(normalized: str) -> list[str]:
    """Every indexed term of already-normalized text, in order, with repeats (module doc)."""
    out: list[str] = []
    append, extend = out.append, out.extend
    for run, word in _TOKEN.findall(normalized):
        if run:
            if len(run) > 1:
                extend([run[i:i + 2] for i in range(len(run) - 1)])
            append(run[-1])
        elif "-" in word or "." in word or "_" in word:
            extend(_word_tokens(word))
        else:
            append(word)
    return out


def term_counts(text: str) -> tuple[Counter[str], int]:
    """``(term -> count, total terms)`` of raw ``text`` (normalized here)."""
    terms = document_terms(normalize(text))
    return Counter(terms), len(terms)


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One query term: ``text`` (normalized), ``prefix`` (a single CJK character matched as the first
    character of any indexed term) and ``group`` (coverage unit: a compound and its parts share one)."""

    text: str
    prefix: bool
    group: int


def query_terms(normalized: str, limit: int = MAX_QUERY_TOKENS) -> list[QueryTerm]:
    """The query terms of an already-normalized query (module doc), de-duplicated, at most ``limit``."""
    terms: list[QueryTerm] = []
    short: list[QueryTerm] = []
    seen: set[tuple[str, bool]] = set()
    group = 0
    for match in _TOKEN.finditer(normalized):
        run = match.group("cjk")
        if run:
            if len(run) == 1:
                candidates = [(run, True)]
            else:
                candidates = [(run[i:i + 2], False) for i in range(len(run) - 1)]
            for text, prefix in candidates:
                if (text, prefix) not in seen:
                    seen.add((text, prefix))
                    terms.append(QueryTerm(text, prefix, group))
                    group += 1
            continue
        word = match.group("word")
        pieces = _word_tokens(word)
        fresh = [p for p in pieces if (p, False) not in seen]
        if not fresh:
            continue
        target = terms if len(word) > 1 else short
        for piece in fresh:
            if len(piece) == 1 and len(word) > 1:
                continue
            seen.add((piece, False))
            target.append(QueryTerm(piece, False, group))
        group += 1
    chosen = terms or short
    return chosen[:limit]


def required_matches(groups: int) -> int:
    """How many distinct query groups a document must contain: 0 -> 0, 1-3 -> 1, else
    ``max(2, ceil(n / 4))`` (the plugin's ``lexicalRequiredMatchCount``)."""
    if groups <= 0:
        return 0
    if groups <= 3:
        return 1
    return max(2, math.ceil(groups / 4))
