"""Bare values: credentials that stand alone, with no key name or prefix to judge them by.

A bare AWS secret access key in prose (:func:`_aws_secret_matches`) and, for labels (tags and entities), any
word that looks generated rather than written (:func:`random_value`, :func:`_bare_value_matches`). Part of
:mod:`mnemon_ls.redact`, which re-exports :func:`random_value` and :data:`BARE_VALUE_MIN_CHARS`.
"""

from __future__ import annotations

import math
import re

from .redact_rules import SecretMatch, _classes, _entropy, _placeholder_value


# ----------------------------------------------------------------------------------------- bare values

#: A bare AWS secret access key: exactly 40 characters of base64 (``A-Z a-z 0-9 / +``) standing alone
#: (not part of a longer run, a path segment glued to ``.``/``-``/``_``, or padded base64).
_AWS_SECRET_BARE = re.compile(r"(?<![A-Za-z0-9/+=_\-.])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])")


def _aws_secret_matches(text: str) -> list[SecretMatch]:
    """Bare AWS secret access keys (no ``aws_secret_access_key=`` before them): 40 base64 characters with
    upper- and lower-case letters and digits, varied (>= 15 distinct, >= 4 bits per character), not a git
    hash and not a path (a ``/``-separated segment that is a plain lower-case word: ``java/net/...``)."""
    found = []
    for m in _AWS_SECRET_BARE.finditer(text):
        value = m.group()
        if not (any(c.isupper() for c in value) and any(c.islower() for c in value)
                and any(c.isdigit() for c in value)):
            continue
        if len(set(value)) < 15 or _entropy(value) < 4.0:
            continue
        if "/" in value and any(re.fullmatch(r"[a-z]{2,}", part) for part in value.split("/")):
            continue
        found.append(SecretMatch("aws-secret-access-key", m.start(), m.end()))
    return found


#: Where a label's words are split (whitespace), and what is stripped around a word.
_WORD = re.compile(r"\S+")
_WORD_EDGE = "\"'`()[]{}<>,;:!?."
_HEX_VALUE = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_HEX_RUN = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{32,}(?![0-9a-fA-F])")
#: A digest names its algorithm right before its hex (``sha256:...``, ``md5-...``): a checksum, not a token.
_DIGEST_PREFIX = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|sha3-\d+)[:=\-]$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_NUMBER = re.compile(r"[+\-]?[0-9][0-9.,_:+\-eE]*")
#: Pieces of an identifier: a (capitalised) lower-case word, an upper-case run, digits, anything else.
_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^A-Za-z0-9]+")
_SHORT_WORDS = frozenset("no in to of is id at on by or if as do up io ok db fs os ui ux my we be it an".split())
#: The shortest value a label may hold before it is judged by randomness alone.
BARE_VALUE_MIN_CHARS = 20


def _wordlike(piece: str) -> bool:
    """A piece that reads as (part of) a word: 3+ letters with a vowel and no run of 5 letters without
    ``aeiouyh``; or a common two-letter word."""
    low = piece.lower()
    if len(piece) == 2:
        return low in _SHORT_WORDS
    if len(piece) < 3 or not piece.isalpha():
        return False
    return any(c in "aeiou" for c in low) and re.search(r"[^aeiouyh]{5,}", low) is None


def _sequential(value: str) -> bool:
    """An alphabet or counting string (``abcdef...``, ``0123456789ABCDEF``): most neighbours are consecutive."""
    steps = sum(1 for a, b in zip(value, value[1:]) if ord(b) - ord(a) == 1)
    return steps * 2 >= len(value)


def random_value(word: str) -> bool:
    """Whether ``word`` (no whitespace) looks generated rather than written: a token, a hash, a
    generated password. At least :data:`BARE_VALUE_MIN_CHARS` characters, and either hexadecimal with
    letters and digits (a UUID in its canonical form is an identifier and does not count), or holding a
    run of 32+ such hex characters (``prod-<token>``; not after a digest's algorithm: ``sha256:<hex>``), or two of
    lower/upper/digit with >= 10 distinct characters, high entropy (>= min(4.0, log2(len) - 0.7) bits
    per character) and less than half of its letters and digits in word-like pieces (``snake_case``,
    ``camelCase``, ``ALL_CAPS`` names, dotted names and paths read as words: ``getSecretValueV2``,
    ``src/components/UserCard2.tsx``). URLs, paths from ``/``, ``./``, ``~/``, numbers and alphabet
    strings are never random. Measured on random strings: 20 characters are found ~90% of the time,
    40 ~97%, 32+ hex always; on the ~68,000 distinct 20+ character words of this repository, its
    dependencies and the design notes, the words it calls random are hashes, base64 blobs and ~40 others
    (alphabet constants, C library names such as ``gslcdfexponentialPinv``)."""
    if len(word) < BARE_VALUE_MIN_CHARS or _UUID.fullmatch(word) or _NUMBER.fullmatch(word):
        return False
    if _placeholder_value(word) or _sequential(word):
        return False
    if _HEX_VALUE.fullmatch(word):
        digits = word[2:] if word[:2].lower() == "0x" else word
        return (any(c.isdigit() for c in digits) and any(c.isalpha() for c in digits)
                and len(set(digits.lower())) >= 8)
    if "://" in word or word.startswith(("/", "./", "~/", "../")):
        return False
    for run in _HEX_RUN.finditer(word):  # prod-<44 hex>: a hex token inside a longer word (a digest says so)
        digits = run.group()
        if (any(c.isdigit() for c in digits) and any(c.isalpha() for c in digits) and len(set(digits.lower())) >= 8
                and not _DIGEST_PREFIX.search(word, 0, run.start())):
            return True
    if _classes(word) < 2 or len(set(word)) < 10:
        return False
    if _entropy(word) < min(4.0, math.log2(len(word)) - 0.7):
        return False
    pieces = _PIECE.findall(word)
    covered = 0
    for index, piece in enumerate(pieces):
        if _wordlike(piece):
            covered += len(piece)
        elif piece.isdigit():
            before = pieces[index - 1] if index else ""
            after = pieces[index + 1] if index + 1 < len(pieces) else ""
            if not before or not after or not before[0].isalnum() or not after[0].isalnum():
                covered += len(piece)  # a version or a counter: v2, Poly1305, 2026-plan
    alnum = sum(c.isalnum() for c in word)
    return covered * 2 < alnum


def _bare_value_matches(text: str) -> list[SecretMatch]:
    """Each whitespace-separated word of ``text`` (quotes, brackets and trailing punctuation stripped)
    that :func:`random_value` calls random, as kind ``high-entropy-value``."""
    found = []
    for m in _WORD.finditer(text):
        word, start = m.group(), m.start()
        stripped = word.lstrip(_WORD_EDGE)
        start += len(word) - len(stripped)
        stripped = stripped.rstrip(_WORD_EDGE)
        if random_value(stripped):
            found.append(SecretMatch("high-entropy-value", start, start + len(stripped)))
    return found
