"""Documents data model: records, field rules, the managed Markdown format and the formats' summary (pure).

Formats are the TypeScript plugin's (``shared/reference/dsh-mnemon.md`` sections 5.1-5.4), so either
tool can open a root the other wrote:

- ``documents/index.json``: ``{"version": 1, "documents": [record, ...]}``, 2-space indent, non-ASCII
  unescaped, trailing newline. A record's keys, in this order: id, title, description, status,
  filename, relativePath, sourcePaths, sessionIds, createdAt, updatedAt, lastAccessedAt, revision,
  contentHash, sizeBytes, [archivedAt], [archiveSummary], memoryBodyIds. Keys written by a newer tool
  are kept after memoryBodyIds (the plugin drops them; we never do).
- index revision: lowercase sha256 hex of the compact JSON (no whitespace) of
  ``{"version":1,"documents":[...]}`` without those extra keys: the plugin's ``indexRevision``, so both
  compute the same fence for the same file.
- managed Markdown (``documents/active/<filename>`` or ``documents/archived/<filename>``)::

      ---
      id: "<id>"
      title: "<title>"
      description: "<description>"
      status: "active"
      created_at: "<createdAt>"
      updated_at: "<updatedAt>"
      content_hash: "<sha256 hex of the body>"
      source_paths:
        - "<path>"            (or the single line "  []")
      session_ids:
        []
      memory_body_ids:
        []
      ---

      <body>

  Scalars are JSON strings. ``sizeBytes`` is the UTF-8 length of the whole rendered file.
- body: if the file starts with ``---\\n``, the text after the first ``\\n---\\n`` at or after offset 4,
  trimmed; else the whole file trimmed. ``contentHash`` is the sha256 hex of the body's UTF-8 bytes.
- filename: ``<slug(title)>-<first 8 chars of id>.md`` (the title's credentials as placeholders first: never one in
  a file name, even under ``secrets: allow``); slug = NFKD, lower case, runs of characters
  other than ``a-z0-9`` become ``-``, one leading and one trailing ``-`` removed, first 48 characters;
  an empty slug (a CJK-only title) is ``document``.

"chars" are JavaScript string lengths (UTF-16 code units, an astral character counts 2); "bytes" are
UTF-8 bytes; timestamps are ``Date.toISOString()`` strings (``YYYY-MM-DDTHH:MM:SS.mmmZ``, UTC).

The ``index.json`` codec (parse, salvage, serialize, revision) is :mod:`.indexformat`, and what a change
makes of a record (requests, the record after a create, update, archive or restore, the capacity plan) is
:mod:`.changes`; both import this module, which never imports them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Literal, Sequence

from ..errors import InvalidInput, echo_repr, echo_value, type_rule

Status = Literal["active", "archived"]
STATUSES: tuple[Status, ...] = ("active", "archived")
FORMAT_VERSION = 1
#: Longest title, in JavaScript characters (UTF-16 code units).
MAX_TITLE_CHARS = 160
#: Longest description, in JavaScript characters.
MAX_DESCRIPTION_CHARS = 600
#: Longest archive summary, in JavaScript characters.
MAX_SUMMARY_CHARS = 1000
#: Largest body by default, in UTF-8 bytes (2 MiB; setting ``documents.maxBodyBytes``).
DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
#: Default capacity of the active documents, in UTF-8 bytes of rendered files (10 MiB;
#: setting ``documents.activeLimitBytes``).
DEFAULT_ACTIVE_LIMIT_BYTES = 10 * 1024 * 1024
#: Largest configurable ``activeLimitBytes`` / ``maxBodyBytes`` (1 GiB, the plugin's bound).
MAX_LIMIT_BYTES = 1024 * 1024 * 1024
MAX_SOURCE_PATHS = 50
MAX_SESSION_IDS = 20
MAX_MEMORY_BODY_IDS = 20
#: Longest id accepted in a request, in characters (the plugin's bound).
MAX_ID_CHARS = 300
#: Summary used when an archive request gives none (the plugin's local-archive default).
DEFAULT_ARCHIVE_SUMMARY = "Archived locally by the user."
MANAGED_PREFIX = "documents"
LEGACY_PREFIX = ".mnemon/documents"


def validate_limit_bytes(value: Any, name: str) -> int:
    """``value`` when it is an integer in 1..:data:`MAX_LIMIT_BYTES` UTF-8 bytes (a limit setting ``name``, e.g.
    ``documents.activeLimitBytes``); else raises :class:`InvalidInput` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT_BYTES:
        raise InvalidInput(name, f"must be an integer in 1..{MAX_LIMIT_BYTES} bytes (got {echo_repr(value)})")
    return value

# JavaScript's \s / String.prototype.trim() set (WhiteSpace + LineTerminator): the one whitespace class
# every normalization here uses, so matching and byte counts agree with the TypeScript plugin.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACE_CHARS = "\t\n\v\f\r \u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + \
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACE_RUN = re.compile(f"[{_JS_SPACE}]+")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_HASH = re.compile("[0-9a-f]{64}")
_SURROGATE_ESCAPE = re.compile(r"\\[uU][dD][89a-fA-F]|[\ud800-\udfff]")
_SLUG_SEPARATORS = re.compile("[^a-z0-9]+")


# ---------------------------------------------------------------------------------------------- text


def js_trim(text: str) -> str:
    """``String.prototype.trim()``: strip the JavaScript whitespace set from both ends."""
    return text.strip(_JS_SPACE_CHARS)


def trim_drops_text(text: str) -> bool:
    """Whether :func:`js_trim` drops more of ``text`` than the line breaks at its end (a file's final newline):
    whitespace before it, or spaces/tabs after it (the body is kept without them)."""
    tail = text[len(text.rstrip(_JS_SPACE_CHARS)):]
    return (bool(text) and text[0] in _JS_SPACE_CHARS) or bool(tail.strip("\r\n"))


def collapse_space(text: str) -> str:
    """Trim and collapse every whitespace run (newlines and tabs included) to one space."""
    return _SPACE_RUN.sub(" ", text).strip(" ")


def js_length(text: str) -> int:
    """JavaScript ``String.length``: UTF-16 code units (astral characters count 2)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def utf8_len(text: str) -> int:
    """UTF-8 bytes of ``text``."""
    return len(text.encode("utf-8"))


def sha256_hex(text: str) -> str:
    """Lowercase sha256 hex of the UTF-8 bytes of ``text`` (a document's ``contentHash``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def js_string(value: str) -> str:
    """``JSON.stringify(value)`` for a string without lone surrogates (non-ASCII left as is)."""
    return json.dumps(value, ensure_ascii=False)


def now_iso(now: datetime) -> str:
    """``Date.toISOString()`` of ``now``: ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC, milliseconds)."""
    now = now.astimezone(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def parse_timestamp_ms(value: Any) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp (``Z`` or an offset; naive = UTC), or ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text[-1:] in ("z", "Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


@functools.lru_cache(maxsize=65536)
def time_key(value: str) -> int:
    """Sort key of a stored timestamp: epoch ms, or ``-1`` for an unreadable one (sorts oldest). Cached."""
    parsed = parse_timestamp_ms(value)
    return -1 if parsed is None else parsed


def slug(title: str) -> str:
    """The filename stem of ``title`` (module doc); ``document`` when nothing is left."""
    text = unicodedata.normalize("NFKD", title).lower()
    text = _SLUG_SEPARATORS.sub("-", text)
    if text.startswith("-"):
        text = text[1:]
    if text.endswith("-"):
        text = text[:-1]
    return text[:48] or "document"


def filename_for(title: str, document_id: str) -> str:
    """``<slug(title)>-<id[:8]>.md``, the slug made from ``title`` with every value that looks like a credential
    replaced by its placeholder (:func:`mnemon_ls.redact.redact_text`) whatever the ``secrets`` setting: under
    ``allow`` the title keeps it, the file name (which ``doctor``, listings and paths show) never does."""
    from ..redact_find import redact_text  # on use: the model stays importable without the redaction pass

    return f"{slug(redact_text(title)[0])}-{document_id[:8]}.md"


def new_id() -> str:
    """A random UUID v4, lower-case hex with dashes (``crypto.randomUUID()``)."""
    import uuid  # imported here: reading documents (every wake) never makes an id, and uuid costs ~2 ms

    return str(uuid.uuid4())


def relative_path(status: Status, filename: str) -> str:
    """``documents/<status>/<filename>`` (the storage-root-relative path the plugin records)."""
    return f"{MANAGED_PREFIX}/{status}/{filename}"


# ----------------------------------------------------------------------------------------- field rules


def _check_text(value: Any, field_name: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(field_name, "is required" if value is None else
                           type_rule("a string", value))
    if _SURROGATE.search(value):
        raise InvalidInput(field_name, "must be valid Unicode (it holds a lone surrogate)")
    return value


def normalize_line(value: Any, field_name: str, maximum: int, required: bool) -> str:
    """Title / description / archive summary rule: whitespace collapsed and trimmed; no control characters;
    ``required`` rejects an empty result; at most ``maximum`` JavaScript characters."""
    text = collapse_space(_check_text(value, field_name))
    if _CONTROL.search(text):
        raise InvalidInput(field_name, "must not contain control characters (U+0000-U+001F other than "
                                       "whitespace, U+007F)", value=echo_value(value))
    if required and not text:
        raise InvalidInput(field_name, "is required (empty or only whitespace)", value=echo_value(value))
    length = js_length(text)
    if length > maximum:
        raise InvalidInput(field_name, f"is {length} characters; at most {maximum}", chars=length, limit=maximum)
    return text


def validate_title(value: Any) -> str:
    """Required, at most 160 characters after normalization."""
    return normalize_line(value, "title", MAX_TITLE_CHARS, True)


def validate_description(value: Any) -> str:
    """Optional (``None`` -> ``""``), at most 600 characters after normalization."""
    return "" if value is None else normalize_line(value, "description", MAX_DESCRIPTION_CHARS, False)


def validate_summary(value: Any) -> str:
    """Archive summary: required, at most 1000 characters (``None`` -> :data:`DEFAULT_ARCHIVE_SUMMARY`)."""
    return DEFAULT_ARCHIVE_SUMMARY if value is None else normalize_line(value, "summary", MAX_SUMMARY_CHARS, True)


def validate_content(value: Any, max_bytes: int, field_name: str = "content") -> str:
    """Body rule: NUL characters removed, trimmed; required; at most ``max_bytes`` UTF-8 bytes.

    The trim is the document format's (reference dsh-mnemon.md 5.2-5.3: the body is read back trimmed and
    ``contentHash`` is the hash of that body, so the TypeScript plugin and a body kept untrimmed would
    disagree on every such file). It drops leading blank lines, trailing whitespace and up to 3 columns of
    indentation of the first line with text, which carry nothing in Markdown (CommonMark); but 4 columns or
    more (a tab counts to the next multiple of 4) make that line an indented code block, whose indentation is
    content, and dropping it would lose what was written: such a body is refused, saying why, rather than
    stored changed (``data.indent``: the number of whitespace characters it starts with).

    Raises :class:`InvalidInput` for a non-string, an empty (or whitespace/NUL-only) body, a body whose first
    line with text is indented, a lone surrogate or an oversized body (``data.bytes``, ``data.limit``).
    """
    raw = _check_text(value, field_name).replace("\x00", "")
    text = js_trim(raw)
    if not text:
        raise InvalidInput(field_name, "is required (empty, only whitespace or only NUL characters)",
                           value=echo_value(value))
    indent = code_indent(raw)
    if indent:
        raise InvalidInput(field_name, f"starts with an indented line ({_whitespace_words(indent)}), which a "
                                       f"document body cannot keep: {TRIM_RULE}; start it with a line that is not "
                                       "indented, e.g. a heading, or fence the code block with ```",
                           indent=len(indent), value=echo_value(value))
    size = utf8_len(text)
    if size > max_bytes:
        raise InvalidInput(field_name, f"is {size} UTF-8 bytes; a document body is at most {max_bytes} bytes",
                           bytes=size, limit=max_bytes)
    return text


#: Columns of indentation that make a Markdown line an indented code block (CommonMark 4.4).
CODE_INDENT = 4

#: Why a body's leading indentation cannot be kept (the words of a refusal).
TRIM_RULE = "a body is stored without its leading and trailing whitespace (the document format's rule)"


def code_indent(raw: str) -> str:
    """The indentation (whitespace characters) of the first line with text of ``raw`` (a body as written,
    untrimmed) when it spans :data:`CODE_INDENT` columns or more, so the line is an indented code block whose
    indentation the trim of a body would drop; ``""`` otherwise. A byte order mark is no indentation."""
    indent = raw[:len(raw) - len(raw.lstrip(_JS_SPACE_CHARS))].rsplit("\n", 1)[-1].rsplit("\r", 1)[-1]
    indent = indent.replace("\ufeff", "")  # a byte order mark is no indentation (a file saved with one)
    return indent if _columns(indent) >= CODE_INDENT else ""


def indented_start(raw: str) -> str | None:
    """Of a body as written (untrimmed): ``None`` when trimming it loses no indentation, else the words of the
    indentation of its first line with text (``4 spaces``, ``1 tab``; :func:`code_indent`)."""
    indent = code_indent(raw)
    return _whitespace_words(indent) if indent else None


def _columns(indent: str) -> int:
    """The columns ``indent`` (whitespace) spans: a tab to the next multiple of 4, any other character 1."""
    width = 0
    for char in indent:
        width = (width // 4 + 1) * 4 if char == "\t" else width + 1
    return width


def _whitespace_words(indent: str) -> str:
    """``4 spaces``, ``1 tab``, ``3 whitespace characters``: the words of a run of indentation."""
    for char, word in ((" ", "space"), ("\t", "tab")):
        if indent == char * len(indent):
            return f"{len(indent)} {word}" + ("" if len(indent) == 1 else "s")
    return f"{len(indent)} whitespace character" + ("" if len(indent) == 1 else "s")


def validate_id(value: Any, field_name: str = "id") -> str:
    """A document id from a request: a non-empty string (trimmed), at most 300 characters."""
    text = js_trim(_check_text(value, field_name))
    if not text:
        raise InvalidInput(field_name, "is required")
    if len(text) > MAX_ID_CHARS:
        raise InvalidInput(field_name, f"is {len(text)} characters; at most {MAX_ID_CHARS}")
    return text


def validate_id_list(value: Any, field_name: str, maximum: int) -> tuple[str, ...]:
    """Session / memory-body id lists: strings, trimmed, empties dropped, de-duplicated keeping the first;
    more than ``maximum`` distinct ids is rejected (nothing is dropped silently)."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise InvalidInput(field_name, type_rule("a list of strings", value))
    out: list[str] = []
    for index, raw in enumerate(value):
        text = js_trim(_check_text(raw, f"{field_name}[{index}]"))
        if _CONTROL.search(text):
            raise InvalidInput(f"{field_name}[{index}]", "must not contain control characters", value=echo_value(raw))
        if text and text not in out:
            out.append(text)
    if len(out) > maximum:
        raise InvalidInput(field_name, f"has {len(out)} distinct ids; at most {maximum}", count=len(out),
                           limit=maximum)
    return tuple(out)


def merge_session_ids(current: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """Update rule for ``sessionIds``: the union (existing first), keeping the most recent 20.

    The plugin keeps the *first* 20 forever (reference section 11); keeping the latest records the
    sessions that touched the document last, which is what a reader wants to follow.
    """
    merged = [s for s in current if s not in new] + list(new)
    merged = list(dict.fromkeys(merged))
    return tuple(merged[-MAX_SESSION_IDS:])


# --------------------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One ``index.json`` record (module doc for the format).

    ``extra`` keeps keys written by a newer tool, in order, so a rewrite never drops them.
    ``revision`` counts the document's versions from 1; ``size_bytes`` is the rendered file's UTF-8
    length; timestamps are stored strings, kept verbatim.
    """

    id: str
    title: str
    description: str
    status: Status
    filename: str
    relative_path: str
    source_paths: tuple[str, ...]
    session_ids: tuple[str, ...]
    created_at: str
    updated_at: str
    last_accessed_at: str
    revision: int
    content_hash: str
    size_bytes: int
    archived_at: str | None = None
    archive_summary: str | None = None
    memory_body_ids: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def canonical_json(self) -> dict[str, Any]:
        """The record as the plugin keeps it after loading (no extra keys), in canonical key order."""
        data: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "status": self.status,
            "filename": self.filename,
            "relativePath": self.relative_path,
            "sourcePaths": list(self.source_paths),
            "sessionIds": list(self.session_ids),
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "lastAccessedAt": self.last_accessed_at,
            "revision": self.revision,
            "contentHash": self.content_hash,
            "sizeBytes": self.size_bytes,
        }
        if self.archived_at is not None:
            data["archivedAt"] = self.archived_at
        if self.archive_summary is not None:
            data["archiveSummary"] = self.archive_summary
        data["memoryBodyIds"] = list(self.memory_body_ids)
        return data

    def to_json(self) -> dict[str, Any]:
        """The record as written to ``index.json``: canonical keys, then any extra keys."""
        data = self.canonical_json()
        for key, value in self.extra:
            data[key] = value
        return data

    @property
    def managed_dir(self) -> Status:
        """The directory (``active`` / ``archived``) the record's file lives in."""
        return self.status

    def with_changes(self, **changes: Any) -> "DocumentRecord":
        """A copy with ``changes`` (dataclass field names) applied."""
        return replace(self, **changes)




# ------------------------------------------------------------------------------------ managed Markdown


def _yaml_list(values: Sequence[str]) -> list[str]:
    return [f"  - {js_string(v)}" for v in values] if values else ["  []"]


def render_markdown(record: DocumentRecord, body: str) -> str:
    """The managed file's text for ``record`` and ``body`` (module doc); ``body`` is trimmed."""
    lines = [
        "---",
        f"id: {js_string(record.id)}",
        f"title: {js_string(record.title)}",
        f"description: {js_string(record.description)}",
        f"status: {js_string(record.status)}",
        f"created_at: {js_string(record.created_at)}",
        f"updated_at: {js_string(record.updated_at)}",
        f"content_hash: {js_string(record.content_hash)}",
        "source_paths:",
        *_yaml_list(record.source_paths),
        "session_ids:",
        *_yaml_list(record.session_ids),
        "memory_body_ids:",
        *_yaml_list(record.memory_body_ids),
        "---",
        "",
        js_trim(body),
    ]
    return "\n".join(lines) + "\n"


def rendered_size(record: DocumentRecord, body: str) -> int:
    """UTF-8 bytes of :func:`render_markdown` (the record's ``sizeBytes``)."""
    return utf8_len(render_markdown(record, body))


def decode_markdown(data: bytes) -> str:
    """A managed file's text: UTF-8 with U+FFFD for invalid bytes (what the plugin's reader sees)."""
    return data.decode("utf-8", errors="replace")


def split_markdown(text: str) -> tuple[str | None, str]:
    """``(frontmatter text or None, body)`` with the plugin's body rule (module doc)."""
    front, raw = split_markdown_raw(text)
    return front, js_trim(raw)


def split_markdown_raw(text: str) -> tuple[str | None, str]:
    """:func:`split_markdown` without the trim: ``(frontmatter text or None, the body as written)``."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 4)
    if end < 0:
        return None, text
    return text[4:end], text[end + 5:]


def document_body(text: str) -> str:
    """The body of a managed file's text (module doc)."""
    return split_markdown(text)[1]


def body_hash(data: bytes) -> str | None:
    """``contentHash`` of the body in a managed file's bytes; ``None`` when they are not UTF-8."""
    try:
        return sha256_hex(split_markdown(data.decode("utf-8"))[1])
    except UnicodeDecodeError:
        return None


_FM_SCALAR = re.compile(r"^([a-z_]+):\s*(.*)$")


def parse_frontmatter(front: str) -> dict[str, Any]:
    """Read our frontmatter leniently: ``key: "json string"`` scalars and ``key:`` + ``  - "item"`` lists.

    Unquoted scalars are taken verbatim; unreadable lines are ignored. Returns ``{key: str | list[str]}``.
    """
    result: dict[str, Any] = {}
    current_list: list[str] | None = None
    for line in front.split("\n"):
        if line.startswith("  ") and current_list is not None:
            item = line.strip()
            if item == "[]":
                continue
            if item.startswith("- "):
                current_list.append(_scalar(item[2:].strip()))
            continue
        match = _FM_SCALAR.match(line)
        if not match:
            current_list = None
            continue
        key, value = match.group(1), match.group(2).strip()
        if value == "":
            current_list = []
            result[key] = current_list
        else:
            current_list = None
            result[key] = _scalar(value)
    return result


def _scalar(text: str) -> str:
    if text.startswith('"'):
        try:
            value = json.loads(text)
            if isinstance(value, str):
                return value
        except ValueError:  # a JSONDecodeError, or a number past Python's digit limit
            pass
    return text


_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_SETEXT_HEADING = re.compile(r"^ {0,3}(\S[^\n]*)\n {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)


def suggest_title(text: str, filename: str) -> str:
    """Title for "Create document from file": the first Markdown heading (ATX ``# Title`` or setext
    ``Title\n=====``, whichever comes first; leading frontmatter skipped), else the file name without its
    extension; normalized and cut to :data:`MAX_TITLE_CHARS` characters; ``Document`` when nothing is left."""
    body = document_body(text) if text.startswith("---\n") else text
    found = [m for m in (_ATX_HEADING.search(body), _SETEXT_HEADING.search(body)) if m]
    if found:
        candidate = min(found, key=lambda m: m.start()).group(1)
    else:
        name = filename.rsplit("/", 1)[-1]
        candidate = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    title = collapse_space(_CONTROL.sub(" ", _SURROGATE.sub("", candidate)))
    while js_length(title) > MAX_TITLE_CHARS:
        title = title[:-1]
    return title.rstrip() or "Document"
