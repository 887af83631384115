"""What a credential looks like: the rules :mod:`mnemon_ls.redact` finds values by.

Holds the kinds a placeholder can name (:data:`KINDS`), the placeholder text (:func:`placeholder`), the match
type (:class:`SecretMatch`, offsets only, never the value), the randomness heuristics, and the finders of each
family of formats: prefixed tokens (the vendors' published prefixes, also split over two lines), structured
formats (PEM private key blocks, JWTs, SendGrid keys, Slack webhooks, passwords in URLs, ``Authorization``
values) and ``key=value`` assignments after key-like names. Each finder is pure and returns the
:class:`SecretMatch` es it sees in one text; :mod:`mnemon_ls.redact_find` runs them in order of specificity and
resolves overlaps. Bare values with no key name (a bare AWS secret access key, a random label) are in
:mod:`mnemon_ls.redact_bare`.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

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


#: A literal that every keyword of :data:`_KEYWORD` holds (the tier-2 markers of
#: :data:`mnemon_ls.redact_find._PASSES`), and how many characters a keyword may have before it
#: (``refresh_token``, ``private_key``: 8).
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
