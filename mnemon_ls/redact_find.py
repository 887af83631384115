"""Finding and replacing credentials: :func:`find_secrets` and the redaction of texts, JSON values and files.

Runs the finders of :mod:`mnemon_ls.redact_rules` and :mod:`mnemon_ls.redact_bare` over a text (each only
when one of its literal markers occurs), keeps the most specific of overlapping matches, and replaces each
value by its placeholder: in a text (:func:`redact_text`, :func:`redact_label`), in a parsed JSON value
(:func:`redact_json_value`), in a stored file's bytes (:func:`redact_file_bytes`, :func:`redact_file_in_place`).
Everything here is re-exported by :mod:`mnemon_ls.redact`, the module callers import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from .redact_bare import _aws_secret_matches, _bare_value_matches
from .redact_rules import (
    _JWT,
    _SENDGRID,
    _SLACK_WEBHOOK,
    PLACEHOLDER_PREFIX,
    SecretMatch,
    _ascii_lower,
    _assignment_matches,
    _auth_matches,
    _pem_matches,
    _simple,
    _token_matches,
    _url_matches,
    placeholder,
)

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
