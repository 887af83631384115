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

Where the parts live: the kinds, the placeholder, :class:`SecretMatch` and the rules of each format family in
:mod:`mnemon_ls.redact_rules`; bare values (a bare AWS secret access key, :func:`random_value` for labels) in
:mod:`mnemon_ls.redact_bare`; :func:`find_secrets`, :func:`redact_text` and the redaction of JSON values and
stored files in :mod:`mnemon_ls.redact_find`; the modes, :class:`Scrubber` and :func:`describe` here. Every
public name is importable from this module.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal, TypeVar

from .errors import InvalidInput, echo_repr
from .redact_bare import BARE_VALUE_MIN_CHARS, random_value
from .redact_find import (
    find_label_secrets,
    find_secrets,
    redact_file_bytes,
    redact_file_in_place,
    redact_json_value,
    redact_label,
    redact_text,
    scan_texts,
)
from .redact_rules import KINDS, PLACEHOLDER_PREFIX, SecretMatch, placeholder

Mode = Literal["redact", "reject", "allow"]
MODES: tuple[Mode, ...] = ("redact", "reject", "allow")


def validate_mode(value: Any, field_name: str = "secrets") -> Mode:
    """``value`` if it is ``redact``, ``reject`` or ``allow``, else :class:`InvalidInput`."""
    if value not in MODES:
        raise InvalidInput(field_name, f"must be one of redact, reject, allow (got {echo_repr(value)})")
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
            scrubbed = (self.text(f"{field}[{i}]", v) for i, v in enumerate(values))
            return type(values)(scrubbed)  # type: ignore[return-value]
        return values

    def label(self, field: str, value: T) -> T:
        """A stored label (a tag or an entity): like :meth:`text`, with :func:`find_label_secrets` (a
        random-looking word of 20+ characters counts too, kind ``high-entropy-value``)."""
        return self._judge(field, value, find_label_secrets, redact_label)

    def labels(self, field: str, values: T) -> T:
        """:meth:`label` on each string of a list/tuple (fields ``field[i]``); other values unchanged."""
        if isinstance(values, (list, tuple)):
            labelled = (self.label(f"{field}[{i}]", v) for i, v in enumerate(values))
            return type(values)(labelled)  # type: ignore[return-value]
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


#: Code points of a stored text an error message quotes (:func:`quoted`).
QUOTE_CHARS = 60


def quoted(text: str) -> str:
    """How a message names a stored text another program may have written: redacted (:func:`redact_text`), cut at
    :data:`QUOTE_CHARS` code points, as Python's ``repr`` (``'we deploy with [redacted:password]...'``)."""
    return repr(redact_text(text)[0][:QUOTE_CHARS])


__all__ = ["BARE_VALUE_MIN_CHARS", "KINDS", "MODES", "Mode", "PLACEHOLDER_PREFIX", "QUOTE_CHARS", "Scrubber",
           "SecretMatch", "describe", "find_label_secrets", "find_secrets", "placeholder", "quoted", "random_value",
           "redact_file_bytes", "redact_file_in_place", "redact_json_value", "redact_label", "redact_text",
           "scan_texts", "validate_mode"]
