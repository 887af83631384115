"""Secret detection and redaction: the one pass every write path runs before validation and byte counting.

DESIGN.md invariant 9: no credential value is ever written under a storage root. Every Source calls a
:class:`Scrubber` on the text fields of a write (Runtime content and ``oldText``, Document title,
description, body and archive summary, Memory Space item content, tags and entities, space names and
descriptions) *before* it validates sizes or counts bytes, so what is checked, counted, indexed and
named (a document's file name is made from its title) is the redacted text. The ``secrets`` setting
picks what happens to a value that looks like a credential:

- ``redact`` (default): the value is replaced by ``[redacted:<kind>]`` (e.g. ``[redacted:github-token]``,
  a text that matches no credential format, so redacting twice changes nothing) and the receipt says
  how many values of which kinds were replaced (:meth:`Scrubber.summary`);
- ``reject``: the write is refused with :class:`~mnemon_ls.errors.InvalidInput` naming the field, the
  kind and the character position (0-based, in Unicode code points of the text as given); the value is
  never part of the message;
- ``allow``: nothing is changed.

Identifiers that a placeholder cannot stand in for (git branch names, space names) are refused in
``redact`` and ``reject`` mode (:meth:`Scrubber.identifier`). Selectors that are compared with stored
text but never written (``oldText``) are redacted the same way in ``redact`` and ``reject`` mode
(:meth:`Scrubber.selector`), so a selector quoting the original secret still finds the redacted entry.

What is detected (:data:`KINDS`; the patterns are written from the vendors' published token formats):
prefixed tokens (AWS ``AKIA``/``ASIA`` key ids, GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/
``github_pat_``, GitLab ``glpat-`` and its siblings, Slack ``xox?-``/``xapp-`` and webhook URLs, OpenAI
``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, Google ``AIza``/``GOCSPX-``/``ya29.``, Stripe
``sk_live_``/``rk_live_``/``whsec_``, npm, PyPI, Hugging Face, SendGrid), JWTs, PEM private key blocks
(multi-line, whitespace-collapsed, JSON-escaped, or the whole PEM base64-encoded), passwords in URLs
(``https://user:token@host``), ``Authorization``/``Bearer`` values, ``password=``/``secret:``/
``token:``-style assignments with a value, and high-entropy values after key-like names (``signing_key``,
``aws_secret_access_key``...), and a bare AWS secret access key (40 base64 characters with upper- and
lower-case letters and digits, varied, not a path: ``prod AWS secret wJalr...``). A prefixed token split
over two lines (or over one space, as Runtime whitespace normalization leaves it) is found when neither
part alone is long enough.

Labels (a Memory Space item's tags and entities, a workspace record's tags) have no key name to judge
a value by, so they also go through :func:`random_value`: a word of 20 or more characters that looks
generated (hex with letters and digits, or mixed-case/digit text that does not read as words) is a
``high-entropy-value`` (:func:`find_label_secrets`, :meth:`Scrubber.label`), refused under ``reject``
and replaced under ``redact`` like any other value. ``snake_case``, ``camelCase``, dotted names, paths,
URLs, version strings and canonical UUIDs are not.
Prose about secrets ("No API key is needed", "set the token in your env") has no value and is left alone.

Why not ``detect-secrets`` (PyPI, 1.5.0), measured by ``bench/bench_redact.py`` (``bench/results/redact.md``):
it is line-based and reports values, not positions (so neither ``reject``'s position nor a multi-line
PEM or split value can be handled), and it does not know Anthropic, ``github_pat_``, ``sk-proj-`` keys
without the legacy marker, Google API keys or PEM bodies (it flags the ``BEGIN`` line only). With its
default plugins its ad-hoc scan flagged 19 of the 20 prose texts (its entropy plugins report every
word); without the entropy plugins it reported 10 of the 29 samples. It took ~200 ms per 10 KiB text
against ~0.2 ms (prose) to ~12 ms (dense credentials) here, 27-900x slower, on every write.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Sequence, TypeVar

from .errors import InvalidInput

Mode = Literal["redact", "reject", "allow"]
MODES: tuple[Mode, ...] = ("redact", "reject", "allow")

#: Every kind a placeholder can name, with what it is.
KINDS: dict[str, str] = {
    "private-key": "a PEM private key block",
    "aws-access-key-id": "an AWS access key id (AKIA/ASIA...)",
    "aws-secret-access-key": "an AWS secret access key",
    "github-token": "a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
    "gitlab-token": "a GitLab token (glpat- and siblings)",
    "slack-token": "a Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xapp-)",
    "slack-webhook": "a Slack incoming-webhook URL",
    "anthropic-api-key": "an Anthropic API key (sk-ant-)",
    "openai-api-key": "an OpenAI API key (sk-, sk-proj-)",
    "google-api-key": "a Google API key (AIza)",
    "google-oauth": "a Google OAuth client secret or access token (GOCSPX-, ya29.)",
    "stripe-key": "a Stripe secret or restricted key (sk_live_, rk_live_, whsec_)",
    "npm-token": "an npm access token (npm_)",
    "pypi-token": "a PyPI API token (pypi-)",
    "huggingface-token": "a Hugging Face token (hf_)",
    "sendgrid-key": "a SendGrid API key (SG.)",
    "jwt": "a JSON Web Token",
    "url-credential": "a password or token inside a URL (scheme://user:secret@host)",
    "bearer-token": "an Authorization header value (Bearer/Basic/Token)",
    "password": "a password assignment (password=, passwd:, pwd=...)",
    "secret": "a secret assignment (secret=, client_secret:...)",
    "token": "a token assignment (token=, access_token:...)",
    "api-key": "an API key assignment (api_key=, apikey:, access_key=...)",
    "high-entropy-secret": "a high-entropy value after a key-like name",
    "high-entropy-value": "a random value of 20 or more characters (a token, a hash or a generated password)",
}

PLACEHOLDER_PREFIX = "[redacted:"


def placeholder(kind: str) -> str:
    """``[redacted:<kind>]``: the text a value of ``kind`` is replaced with."""
    return f"{PLACEHOLDER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One value that looks like a credential: ``kind`` (a key of :data:`KINDS`), ``start``/``end``
    (0-based code-point offsets into the scanned text, end exclusive). Never carries the value."""

    kind: str
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        """``{"kind", "position"}`` (position = ``start``)."""
        return {"kind": self.kind, "position": self.start}


# ----------------------------------------------------------------------------------------- heuristics


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(text: str) -> int:
    return (any(c.islower() for c in text) + any(c.isupper() for c in text) + any(c.isdigit() for c in text))


def _looks_random(body: str, minimum: int = 16) -> bool:
    """A generated-looking string: long enough, two of lower/upper/digit, varied characters."""
    return len(body) >= minimum and _classes(body) >= 2 and len(set(body)) >= 8 and _entropy(body) >= 3.0


def _varied(body: str) -> bool:
    """Not a template such as ``ghp_xxxxxxxx...`` (a real token has many distinct characters)."""
    return len(set(body)) >= 6


# ----------------------------------------------------------------------------------------- token rules


@dataclass(frozen=True, slots=True)
class _TokenRule:
    kind: str
    prefix: str  # regex
    body: str  # character class
    minimum: int
    maximum: int | None = None
    random: bool = False  # body must look generated (generic prefixes such as sk-)


_TOKEN_RULES: tuple[_TokenRule, ...] = (
    _TokenRule("anthropic-api-key", r"sk-ant-", r"[A-Za-z0-9_\-]", 32),
    _TokenRule("openai-api-key", r"sk-(?:proj-|svcacct-|admin-)?", r"[A-Za-z0-9_\-]", 20, random=True),
    _TokenRule("github-token", r"gh[pousr]_", r"[A-Za-z0-9]", 36),
    _TokenRule("github-token", r"github_pat_", r"[A-Za-z0-9_]", 22),
    _TokenRule("gitlab-token", r"gl(?:pat|ptt|rt|dt|soat|ft|imt|cbt|agent|oas)-", r"[A-Za-z0-9_\-]", 20),
    _TokenRule("slack-token", r"xox[abposr]-", r"[A-Za-z0-9\-]", 10, random=True),
    _TokenRule("slack-token", r"xapp-", r"[A-Za-z0-9\-]", 10, random=True),
    _TokenRule("google-api-key", r"AIza", r"[A-Za-z0-9_\-]", 35),
    _TokenRule("google-oauth", r"GOCSPX-", r"[A-Za-z0-9_\-]", 20),
    _TokenRule("google-oauth", r"ya29\.", r"[A-Za-z0-9_\-]", 20, random=True),
    _TokenRule("stripe-key", r"(?:sk|rk)_(?:live|test)_", r"[A-Za-z0-9]", 10),
    _TokenRule("stripe-key", r"whsec_", r"[A-Za-z0-9]", 20),
    _TokenRule("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])", r"[A-Z0-9]", 16, 16),
    _TokenRule("npm-token", r"npm_", r"[A-Za-z0-9]", 36),
    _TokenRule("pypi-token", r"pypi-AgEIcHlwaS5vcmc", r"[A-Za-z0-9_\-]", 40),
    _TokenRule("huggingface-token", r"hf_", r"[A-Za-z0-9]", 30, random=True),
)
#: What may not stand right before a prefix. A generic prefix (``sk-``, ``hf_``, ``ya29.``: the rules whose
#: body must also look random) must start a word, or ``task-...`` and ``ghf_...`` would match; a
#: distinctive prefix (``ghp_``, ``glpat-``, ``AIza``...) is a token wherever it stands, also glued to a
#: word (``feat-ghp_...``, ``tokenghp_...``); an AWS key id only not inside a longer upper-case word.
_GENERIC_GUARD = r"(?<![A-Za-z0-9_\-])"
_AWS_GUARD = r"(?<![A-Z0-9])"


def _guard(rule: _TokenRule) -> str:
    if rule.kind == "aws-access-key-id":
        return _AWS_GUARD
    return _GENERIC_GUARD if rule.random and rule.kind != "slack-token" else ""


_TOKEN_START = re.compile(
    "|".join(f"{_guard(rule)}(?P<t{i}>{rule.prefix})" for i, rule in enumerate(_TOKEN_RULES))
)
_TOKEN_BODY = tuple(re.compile(rule.body + "+") for rule in _TOKEN_RULES)
# A line break (with indentation, a shell continuation or an escaped \n) or one space between two parts.
_SPLIT_GAP = re.compile(r"(?:\\n|[ \t]*\\?[ \t]*\r?\n[ \t]*| )")


def _token_matches(text: str) -> list[SecretMatch]:
    found = []
    for m in _TOKEN_START.finditer(text):
        index = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
        rule = _TOKEN_RULES[index]
        if index == 1 and text.startswith("sk-ant-", m.start()):
            continue  # the Anthropic rule owns sk-ant-
        body_re = _TOKEN_BODY[index]
        pos = m.end()
        part = body_re.match(text, pos)
        body = part.group() if part else ""
        end = part.end() if part else pos
        # A value cut over two lines (or over one space after whitespace normalization).
        while len(body) < rule.minimum and len(body) >= 4:
            gap = _SPLIT_GAP.match(text, end)
            nxt = body_re.match(text, gap.end()) if gap else None
            if nxt is None:
                break
            body += nxt.group()
            end = nxt.end()
        if len(body) < rule.minimum or (rule.maximum is not None and len(body) > rule.maximum):
            continue
        if end < len(text) and rule.maximum is not None and text[end].isalnum():
            continue
        if not _varied(body) or (rule.random and not _looks_random(body, rule.minimum)):
            continue
        found.append(SecretMatch(rule.kind, m.start(), end))
    return found


# ----------------------------------------------------------------------------------------- structured formats

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_CHUNK = re.compile(r"(?:\s|\\n|\\r)+([A-Za-z0-9+/=:,\-]+)")
_PEM_MAX_CHARS = 65536
_B64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]*(?:(?:\s|\\n)+(?:[A-Za-z0-9+/]{16,}|[A-Za-z0-9+/]*==?)=*)*")
_JWT = re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")
_SENDGRID = re.compile(r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}")
_SLACK_WEBHOOK = re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{16,}")
_URL_CREDENTIAL = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s/:@\"'<>]{1,256}:(?P<pw>[^\s/@\"'<>]{1,256})@"
    r"(?=[A-Za-z0-9\[])"
)
_AUTH_HEADER = re.compile(
    r"(?i)(?:\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+|(?<![A-Za-z0-9])bearer\s+)"
    r"(?P<v>[A-Za-z0-9._~+/\-]{12,}=*)"
)


def _pem_matches(text: str) -> list[SecretMatch]:
    found = []
    pos = 0
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            break
        end_match = _PEM_END.search(text, begin.end(), begin.end() + _PEM_MAX_CHARS)
        if end_match is not None:
            end = end_match.end()
        else:  # no END line (a truncated paste): the base64 chunks that follow the BEGIN line
            end = begin.end()
            while (chunk := _PEM_CHUNK.match(text, end)) is not None:
                value = chunk.group(1)
                if len(value) < 16 and not value.endswith("=") and not re.fullmatch(r"[A-Za-z\-]+:", value):
                    break
                end = chunk.end()
                if len(value) < 60 and not value.endswith(":") and value.endswith("="):
                    break
        found.append(SecretMatch("private-key", begin.start(), end))
        pos = end
    for m in _B64_PEM.finditer(text):
        blob = re.sub(r"\s|\\n", "", m.group())
        head = blob[: (min(len(blob), 160) // 4) * 4]
        try:
            decoded = base64.b64decode(head, validate=False)
        except (binascii.Error, ValueError):
            continue
        if b"PRIVATE KEY" in decoded:
            found.append(SecretMatch("private-key", m.start(), m.end()))
    return found


def _simple(pattern: re.Pattern[str], kind: str, text: str, group: str | int = 0) -> list[SecretMatch]:
    return [SecretMatch(kind, m.start(group), m.end(group)) for m in pattern.finditer(text)]


def _url_matches(text: str) -> list[SecretMatch]:
    found = []
    for m in _URL_CREDENTIAL.finditer(text):
        if not _placeholder_value(m.group("pw")):
            found.append(SecretMatch("url-credential", m.start("pw"), m.end("pw")))
    return found


def _auth_matches(text: str) -> list[SecretMatch]:
    found = []
    for m in _AUTH_HEADER.finditer(text):
        value = m.group("v")
        if _placeholder_value(value):
            continue
        explicit = m.group().lower().lstrip("\"'").startswith("authorization")
        if explicit or _looks_random(value.rstrip("="), 16):
            found.append(SecretMatch("bearer-token", m.start("v"), m.end("v")))
    return found


# ----------------------------------------------------------------------------------------- assignments

_STRONG_WORDS = (
    ("password", r"password|passwd|passphrase|pwd"),
    ("secret", r"secret|client[_\-]?secret|secret[_\-]?key"),
    ("token", r"token|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token"),
    ("api-key", r"api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|auth[_\-]?key"),
)
_WEAK_WORDS = r"key|auth|signature|credentials?|cookie|session|salt|bearer"
_NOT_SECRET_SUFFIX = frozenset(
    "count counts limit limits length len size type types name names file files path dir url uri endpoint id ids "
    "expiry expires expiration ttl max min env var header field format kind hint policy scope scopes usage budget "
    "prefix label rotation required enabled mode version ref".split())
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]{0,40}?(?P<word>"
    + "|".join(f"(?P<w{i}>{words})" for i, (_, words) in enumerate(_STRONG_WORDS))
    + rf"|(?P<weak>{_WEAK_WORDS}))(?P<suffix>(?:[_\-][A-Za-z0-9]+)*))"
    r"(?P<kq>[\"']?)[ \t]*(?P<sep>:=|=>|=|:)(?P<gap>[ \t]*(?:\\?\r?\n[ \t]*)?)"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\r\n]{1,1024})(?P=q)|(?P<uv>[^\s\"'`<>]{1,1024}))"
)
_PLACEHOLDERS = frozenset(
    "none null nil true false yes no required optional string example redacted hidden masked secret password "
    "token value undefined empty n/a na tbd todo".split())
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_TEMPLATE = re.compile(r"(?i)(?:your|my|the|some|insert|replace|example|dummy|fake|sample)[_\- ]")


def _placeholder_value(value: str) -> bool:
    """Values that stand for a secret without being one: ``$VAR``, ``${VAR}``, ``<key>``, ``****``..."""
    if not value or value.startswith((PLACEHOLDER_PREFIX, "$", "%", "{{", "<", "#{")):
        return True
    if len(set(value)) <= 2:
        return True
    return value.lower() in _PLACEHOLDERS or bool(_TEMPLATE.match(value))


def _secret_like(value: str) -> bool:
    """Has a digit, a symbol, or an upper-case letter after the first character (not a plain word)."""
    return (any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)
            or any(c.isupper() for c in value[1:]) and any(c.islower() for c in value))


_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
#: Every assignment keyword (what the anchors below must cover; tests/test_redact_offsets.py checks it).
_KEYWORD = re.compile("|".join(words for _, words in _STRONG_WORDS) + "|" + _WEAK_WORDS)
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _ascii_lower(text: str) -> str:
    """``text`` with A-Z lower-cased and every offset kept (the markers and keywords are searched here,
    the patterns then run on ``text`` itself). ``str.lower`` when it keeps the length: several times
    faster than ``translate`` on non-ASCII text (CJK documents), and since no character then maps to
    more than one, each A-Z still lands at its own offset (a non-ASCII capital may map to a lower-case
    letter too, e.g. the Kelvin sign to ``k``: one more candidate for the patterns, never one fewer);
    else ``translate``."""
    low = text.lower()
    if len(low) != len(text):  # e.g. U+0130 lower-cases to two code points: offsets would shift
        low = text.translate(_ASCII_LOWER)
    return low


#: A literal that every keyword of :data:`_KEYWORD` holds (the tier-2 markers of :data:`_PASSES`), and how
#: many characters a keyword may have before it (``refresh_token``, ``private_key``: 8).
_ANCHORS = ("pass", "pwd", "secret", "token", "key", "auth", "signature", "credential", "cookie", "session", "salt",
            "bearer")
_ANCHOR_LEAD = 8
#: How far before its keyword an assignment's key may start (:data:`_ASSIGNMENT`'s ``{0,40}``).
_KEY_LEAD = 40


def _assignments(text: str, low: str | None = None):
    """The :data:`_ASSIGNMENT` matches of ``text``, tried at the start of the key around each keyword:
    found with ``str.find`` of the :data:`_ANCHORS` in the lower-cased text (a plain scan of every
    position with the full pattern costs ~10x more, a scan with :data:`_KEYWORD` ~5x). Every start the
    keyword scan would try is tried (the walk back from an anchor reaches as far as the one from its
    keyword), and a few more that the pattern then refuses."""
    low = low if low is not None else _ascii_lower(text)
    tried: set[int] = set()
    for anchor in _ANCHORS:
        hit = low.find(anchor)
        while hit >= 0:
            start, floor = hit, max(0, hit - _KEY_LEAD - _ANCHOR_LEAD)
            hit = low.find(anchor, hit + 1)
            while start > floor and text[start - 1] in _KEY_CHARS:
                start -= 1
            if start in tried or (start > 0 and text[start - 1] in _KEY_CHARS):
                continue
            tried.add(start)
            m = _ASSIGNMENT.match(text, start)
            if m is not None:
                yield m


def _assignment_matches(text: str, low: str | None = None) -> list[SecretMatch]:
    found = []
    for m in _assignments(text, low):
        suffix = m.group("suffix").lstrip("_-").lower()
        if suffix and suffix.replace("-", "_").split("_")[-1] in _NOT_SECRET_SUFFIX:
            continue
        quoted = m.group("qv") is not None
        value = m.group("qv") if quoted else m.group("uv")
        group = "qv" if quoted else "uv"
        start = m.start(group)
        if not quoted:
            value = value.rstrip(".,;:)]}!?")
            if not value or any(c in value for c in "()[]{}") or _DOTTED.fullmatch(value):
                continue
            if value.startswith(("/", "~/", "./", "../")):
                continue
        if _placeholder_value(value):
            continue
        tight = m.group("sep") != ":" or not m.group("gap").startswith((" ", "\t"))
        kind = next((_STRONG_WORDS[i][0] for i in range(len(_STRONG_WORDS)) if m.group(f"w{i}")), None)
        key = m.group("key").lower()
        if kind is None:  # weak, key-like name: only a high-entropy value counts
            plain = value.rstrip("=")
            if " " in value or not (_looks_random(plain, 16) or re.fullmatch(r"[0-9a-fA-F]{32,}", plain)):
                continue
            kind = "high-entropy-secret"
        else:
            if kind != "password" and value.isdigit():
                continue
            if kind != "password" and re.fullmatch(r"[A-Z_]+", value):
                continue  # an environment variable's name (TOKEN=GITHUB_TOKEN)
            minimum = 4 if kind == "password" else 8
            if len(value) < minimum:
                continue
            if " " in value or not tight:
                if not _secret_like(value) or len(value.split()) > 3:
                    continue
            elif kind != "password" and not (_secret_like(value) or len(value) >= 16):
                continue
        if "aws" in key and "secret" in key:
            kind = "aws-secret-access-key"
        found.append(SecretMatch(kind, start, start + len(value)))
    return found


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


# ----------------------------------------------------------------------------------------- public API

# Each pass runs only when one of its literal markers occurs in the ASCII-lower-cased text: a plain
# substring test, so that prose (the common case) costs a few string searches.
_TOKEN_MARKERS = ("sk-", "gh", "github_pat_", "gl", "xox", "xapp-", "aiza", "gocspx-", "ya29.", "_live_",
                  "_test_", "whsec_", "akia", "asia", "abia", "acca", "a3t", "npm_", "pypi-", "hf_")
_PASSES: tuple[tuple[int, tuple[str, ...], Any], ...] = (
    (0, ("private key", "ls0tls1crudjti"), _pem_matches),
    (0, _TOKEN_MARKERS, _token_matches),
    (0, ("eyj",), lambda t: _simple(_JWT, "jwt", t)),
    (0, ("sg.",), lambda t: _simple(_SENDGRID, "sendgrid-key", t)),
    (0, ("hooks.slack.com",), lambda t: _simple(_SLACK_WEBHOOK, "slack-webhook", t)),
    (1, ("://",), _url_matches),
    (1, ("bearer", "authorization"), _auth_matches),
    (2, ("pass", "pwd", "secret", "token", "key", "auth", "signature", "credential", "cookie", "session", "salt",
         "bearer"), _assignment_matches),
    (3, ("",), _aws_secret_matches),  # no marker: a bare AWS secret access key has no fixed part
)


def find_secrets(text: str) -> list[SecretMatch]:
    """Every value in ``text`` that looks like a credential, sorted by position, never overlapping.

    Where detections overlap, the specific format (a known token prefix, a PEM block, a JWT) wins over
    a URL or header rule, and those over a ``key=value`` rule, and those over a bare AWS secret access
    key. Offsets are code points. Pure; about 0.35 ms for a 10 KiB text of prose (0.2 ms before the bare
    AWS key pass, which has no literal to look for first; measured with the texts of ``bench/bench_redact.py``).
    """
    if not text:
        return []
    low = _ascii_lower(text)
    accepted: list[SecretMatch] = []
    for _, markers, finder in _PASSES:
        if not any(marker in low for marker in markers):
            continue
        found = finder(text, low) if finder is _assignment_matches else finder(text)
        for match in sorted(found, key=lambda m: (m.start, -m.end)):
            if match.end <= match.start:
                continue
            if any(match.start < a.end and a.start < match.end for a in accepted):
                continue
            if text.startswith(PLACEHOLDER_PREFIX, match.start):
                continue
            accepted.append(match)
    return sorted(accepted, key=lambda m: m.start)


def find_label_secrets(text: str) -> list[SecretMatch]:
    """:func:`find_secrets` for a label (a Memory Space item's tag or entity, a record's tag): a label has
    no key name around it, so besides every format :func:`find_secrets` knows, any word of 20 or more
    characters that :func:`random_value` calls random is a ``high-entropy-value`` (a password, a hex
    token). Sorted, never overlapping; offsets are code points of ``text``."""
    found = find_secrets(text)
    for match in _bare_value_matches(text):
        if not any(match.start < a.end and a.start < match.end for a in found) \
                and not text.startswith(PLACEHOLDER_PREFIX, match.start):
            found.append(match)
    return sorted(found, key=lambda m: m.start)


def _replace(text: str, matches: Sequence[SecretMatch]) -> str:
    parts, pos = [], 0
    for m in matches:
        parts.append(text[pos:m.start])
        parts.append(placeholder(m.kind))
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts)


def redact_label(text: str) -> tuple[str, list[SecretMatch]]:
    """:func:`redact_text` with :func:`find_label_secrets`: ``text`` with each value replaced by its
    placeholder, and the matches (offsets into the original). Idempotent."""
    matches = find_label_secrets(text)
    return (_replace(text, matches), matches) if matches else (text, [])


def redact_text(text: str) -> tuple[str, list[SecretMatch]]:
    """``text`` with every :func:`find_secrets` value replaced by its :func:`placeholder`, and the
    matches (offsets into the original ``text``). Idempotent: a redacted text has no match."""
    matches = find_secrets(text)
    if not matches:
        return text, []
    return _replace(text, matches), matches


def validate_mode(value: Any, field_name: str = "secrets") -> Mode:
    """``value`` if it is ``redact``, ``reject`` or ``allow``, else :class:`InvalidInput`."""
    if value not in MODES:
        raise InvalidInput(field_name, f"must be one of redact, reject, allow (got {value!r})")
    return value


T = TypeVar("T")


class Scrubber:
    """The redaction pass of one write: call it on every text field before validating it.

    ``mode`` is the ``secrets`` setting. Not thread-safe; make one per operation. After the write,
    :meth:`summary` is what the receipt reports. Methods return non-string values unchanged (the
    field's own validation rejects them afterwards).
    """

    def __init__(self, mode: Mode | str = "redact") -> None:
        self.mode: Mode = validate_mode(mode)
        self.kinds: Counter[str] = Counter()
        self.fields: list[str] = []

    def text(self, field: str, value: T) -> T:
        """A stored text: redacted (``redact``), refused (``reject``: :class:`InvalidInput` naming
        ``field`` with ``data.kind`` and ``data.position``) or kept (``allow``)."""
        return self._judge(field, value, find_secrets, redact_text)

    def _judge(self, field: str, value: T, find: Any, redact: Any) -> T:
        """``value`` judged by ``find`` (reject) or ``redact`` (redact) under this pass's mode."""
        if not isinstance(value, str) or self.mode == "allow":
            return value
        if self.mode == "reject":
            matches = find(value)
            if matches:
                raise _refusal(field, matches[0], "remove it, or set secrets to redact to store a placeholder")
            return value
        redacted, matches = redact(value)
        if matches:
            self.kinds.update(m.kind for m in matches)
            self.fields.append(field)
        return redacted  # type: ignore[no-any-return]

    def texts(self, field: str, values: T) -> T:
        """:meth:`text` on each string of a list/tuple (fields ``field[i]``); other values unchanged."""
        if isinstance(values, (list, tuple)):
            return type(values)(self.text(f"{field}[{i}]", v) for i, v in enumerate(values))  # type: ignore[return-value]
        return values

    def label(self, field: str, value: T) -> T:
        """A stored label (a tag or an entity): like :meth:`text`, with :func:`find_label_secrets` (a
        random-looking word of 20+ characters counts too, kind ``high-entropy-value``)."""
        return self._judge(field, value, find_label_secrets, redact_label)

    def labels(self, field: str, values: T) -> T:
        """:meth:`label` on each string of a list/tuple (fields ``field[i]``); other values unchanged."""
        if isinstance(values, (list, tuple)):
            return type(values)(self.label(f"{field}[{i}]", v) for i, v in enumerate(values))  # type: ignore[return-value]
        return values

    def selector(self, field: str, value: T) -> T:
        """A text compared with stored text but never written (``oldText``): redacted unless ``allow``,
        never refused and not counted, so it selects the entry its original text was redacted in."""
        if not isinstance(value, str) or self.mode == "allow":
            return value
        return redact_text(value)[0]  # type: ignore[return-value]

    def identifier(self, field: str, value: T) -> T:
        """A name no placeholder can stand in for (a git branch, a space name): refused with
        :class:`InvalidInput` when it holds a credential (``redact`` and ``reject``), else unchanged."""
        if not isinstance(value, str) or self.mode == "allow":
            return value
        matches = find_secrets(value)
        if matches:
            raise _refusal(field, matches[0], "a credential cannot be a name; choose another")
        return value

    def identifiers(self, field: str, values: T) -> T:
        """:meth:`identifier` on each string of a list/tuple (fields ``field[i]``)."""
        if isinstance(values, (list, tuple)):
            for i, v in enumerate(values):
                self.identifier(f"{field}[{i}]", v)
        return values

    @property
    def count(self) -> int:
        """How many values were redacted so far."""
        return sum(self.kinds.values())

    def summary(self) -> dict[str, Any] | None:
        """``{"count": N, "kinds": {kind: n}, "fields": [field, ...]}`` or ``None`` when nothing was
        redacted (receipts add it as ``redacted``)."""
        if not self.kinds:
            return None
        return {"count": self.count, "kinds": dict(sorted(self.kinds.items())), "fields": list(self.fields)}


def _refusal(field: str, match: SecretMatch, advice: str) -> InvalidInput:
    return InvalidInput(field, f"holds what looks like {KINDS.get(match.kind, match.kind)} at character position "
                               f"{match.start}; {advice}", kind=match.kind, position=match.start)


def describe(summary: dict[str, Any] | None) -> str:
    """One line for people: ``Redacted 2 values that looked like credentials (github-token, password).``"""
    if not summary:
        return ""
    kinds = ", ".join(k if n == 1 else f"{k} x{n}" for k, n in summary["kinds"].items())
    count = summary["count"]
    return f"Redacted {count} value{'s' if count != 1 else ''} that looked like credentials ({kinds})."


def redact_json_value(value: Any) -> tuple[Any, list[str]]:
    """A parsed JSON value with every string (not keys) redacted, and the kinds replaced."""
    kinds: list[str] = []

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            text, matches = redact_text(item)
            kinds.extend(m.kind for m in matches)
            return text
        if isinstance(item, list):
            return [walk(v) for v in item]
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        return item

    return walk(value), kinds


def redact_file_bytes(data: bytes, name: str) -> tuple[bytes, list[str]]:
    """A stored copy (a saved hand edit, a quarantined file, an archive) with its values redacted:
    ``.json`` files are parsed and re-serialized (2-space indent), ``.jsonl`` files line by line (so a
    placeholder never breaks an escape), anything else as text; bytes that are not UTF-8 are kept
    (surrogate escapes). Returns the new bytes and the kinds replaced (empty: ``data`` unchanged)."""
    import json

    text = data.decode("utf-8", "surrogateescape")
    if name.endswith(".json"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if parsed is not None:
            value, kinds = redact_json_value(parsed)
            if not kinds:
                return data, []
            out = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
            return out.encode("utf-8", "surrogateescape"), kinds
    if name.endswith(".jsonl"):
        lines, kinds = [], []
        for line in text.splitlines(keepends=True):
            try:
                parsed = json.loads(line) if line.strip() else None
            except ValueError:
                parsed = None
            if parsed is None:
                new, matches = redact_text(line)
                kinds.extend(m.kind for m in matches)
                lines.append(new)
                continue
            value, found = redact_json_value(parsed)
            if found:
                kinds.extend(found)
                line = json.dumps(value, ensure_ascii=False) + ("\n" if line.endswith("\n") else "")
            lines.append(line)
        return ("".join(lines).encode("utf-8", "surrogateescape"), kinds) if kinds else (data, [])
    new, matches = redact_text(text)
    if not matches:
        return data, []
    return new.encode("utf-8", "surrogateescape"), [m.kind for m in matches]


def scan_texts(items: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """Findings for stored texts: ``items`` are ``(location, text)``; returns ``[{"location", "kind",
    "position"}]`` for every match (never the value). Used by ``doctor`` and ``mnemon-ls redact``."""
    out = []
    for location, text in items:
        for m in find_secrets(text):
            out.append({"location": location, "kind": m.kind, "position": m.start})
    return out


__all__ = ["KINDS", "MODES", "Mode", "PLACEHOLDER_PREFIX", "Scrubber", "SecretMatch", "describe", "find_label_secrets",
           "find_secrets", "placeholder", "random_value", "redact_file_bytes", "redact_json_value", "redact_label",
           "redact_text", "scan_texts", "validate_mode"]


def redact_file_in_place(path: Path) -> bool:
    """Rewrite the stored copy at ``path`` (a saved hand edit, a quarantined file, an archive) with its
    values redacted (:func:`redact_file_bytes`), durably; ``False`` when it is missing or held nothing
    to redact. Used by every Source's ``redact --apply``."""
    from . import fsio

    data = fsio.read_bytes_or_none(path)
    if data is None:
        return False
    new, kinds = redact_file_bytes(data, path.name)
    if not kinds:
        return False
    fsio.write_file_atomically(path, new)
    return True
