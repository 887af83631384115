"""Field rules, value formats and result shapes of the Memory Spaces Source (pure; no I/O).

Formats (shared/reference/mnemon-cli.md sections 5-6, dsh-mnemon.md section 6):

- Space ids: ``^[a-zA-Z0-9][a-zA-Z0-9_-]*$`` (the Mnemon CLI's store-name rule), at most 128 chars.
- Item (insight) ids: any text without whitespace, ``/`` or ``..``, at most 200 chars (the CLI writes
  lowercase UUIDv4; lookups are exact).
- Insight timestamps: RFC3339 UTC with second precision, ``YYYY-MM-DDTHH:MM:SSZ`` (the CLI parses them
  strictly on every read); registry timestamps: ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the plugin's
  ``toISOString``).
- Content: non-blank, at most 8,000 UTF-8 bytes; category one of :data:`CATEGORIES`; importance an
  integer 1..5; tags at most 20 strings of at most 100 bytes; entities at most 50 of at most 200 bytes
  (each trimmed, empties dropped, order kept, exact repeats dropped); source 1..100 chars.
- Queries: 1..2,000 chars (UTF-16 code units, as the plugin counts) after trimming; limit an integer 1..50.

Every validator raises :class:`~mnemon_ls.errors.InvalidInput` naming the field (``tags[2]``) and the rule.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Literal

from ..errors import InvalidInput, ItemNotFound, choice_rule, control_rule, echo_repr, echo_value, range_rule, type_rule

Clock = Callable[[], datetime]

SPACE_ID_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$")
MAX_SPACE_ID_CHARS = 128
MAX_ITEM_ID_CHARS = 200
MAX_CONTENT_BYTES = 8000
MIN_LIMIT, MAX_LIMIT = 1, 50
DEFAULT_LIMIT = 10
#: Results a recall returns at most, whatever the limit (reference 6.5: the recall worker's cap).
MAX_RESULTS = 12
MAX_TAGS, MAX_TAG_BYTES = 20, 100
MAX_ENTITIES, MAX_ENTITY_BYTES = 50, 200
MAX_SOURCE_CHARS = 100
MAX_NAME_CHARS = 100
MAX_DESCRIPTION_CHARS = 1000

CATEGORIES = ("preference", "decision", "fact", "insight", "context", "general")
EDGE_TYPES = ("temporal", "semantic", "causal", "entity", "supersedes")
WALK_EDGE_TYPES = ("temporal", "semantic", "causal", "entity")
RECALL_MODES = ("smart", "keyword", "basic")
SOURCES = ("user", "agent", "external")
INTENTS = ("WHY", "WHEN", "ENTITY", "GENERAL")
BRANCH_TAG_PREFIX = "branch:"

Tier = Literal["high", "medium", "low", "unknown"]


# --------------------------------------------------------------------------- time


def utc_now() -> datetime:
    """The current UTC time (the default clock)."""
    return datetime.now(timezone.utc)


def rfc3339(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC (the CLI's insight/edge/oplog timestamp)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` in UTC (the registry's timestamp, JS ``toISOString``)."""
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_LEGACY_TS = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def parse_time(value: Any) -> datetime | None:
    """Lenient timestamp parse (RFC3339 with ``Z``/offset/fraction, or the legacy ``YYYY-MM-DD HH:MM:SS``
    SQLite form, taken as UTC); ``None`` when missing or unparsable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        if _LEGACY_TS.match(text):
            return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def epoch_seconds(value: Any) -> float | None:
    """Seconds since the epoch of a timestamp string (see :func:`parse_time`), or ``None``."""
    parsed = parse_time(value)
    return parsed.timestamp() if parsed else None


def monotonic_iso(clock: Clock, previous: str | None) -> str:
    """:func:`iso_ms` of now, strictly after ``previous`` (+1 ms when the clock did not advance)."""
    now = clock()
    before = parse_time(previous) if previous else None
    if before is not None and now <= before:
        now = before + timedelta(milliseconds=1)
    return iso_ms(now)


# --------------------------------------------------------------------------- validation


def js_length(text: str) -> int:
    """Length in UTF-16 code units (the plugin's ``String.length``)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def require_unicode(text: str, field_name: str) -> str:
    """``text`` unchanged, or :class:`InvalidInput` naming ``field_name`` when it holds a lone surrogate
    (U+D800..U+DFFF alone: not valid Unicode, cannot be stored as UTF-8), as Runtime and Documents answer."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(field_name, "must be valid Unicode (it holds a lone surrogate)") from None
    return text


def validate_space_id(value: Any, field_name: str = "spaceId") -> str:
    """A trimmed space id (module doc) or :class:`InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput(field_name, type_rule("a string", value))
    text = value.strip()
    if not text:
        raise InvalidInput(field_name, "is required")
    if len(text) > MAX_SPACE_ID_CHARS or not SPACE_ID_RE.match(text):
        raise InvalidInput(field_name, "must match ^[a-zA-Z0-9][a-zA-Z0-9_-]*$ (no '/', '..' or spaces), "
                                       f"at most {MAX_SPACE_ID_CHARS} chars", value=_clip(text))
    return text


def validate_item_id(value: Any, field_name: str = "id") -> str:
    """A trimmed item id (module doc) or :class:`InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput(field_name, type_rule("a string", value))
    text = value.strip()
    if not text:
        raise InvalidInput(field_name, "is required")
    require_unicode(text, field_name)
    if len(text) > MAX_ITEM_ID_CHARS or "/" in text or ".." in text or any(c.isspace() for c in text) \
            or "\x00" in text:
        raise InvalidInput(field_name, "must be an item id without '/', '..' or spaces, "
                                       f"at most {MAX_ITEM_ID_CHARS} chars", value=_clip(text))
    return text


#: The fewest characters of an item id that name it (``recall`` prints 8, as ``doc list`` prints a document's).
MIN_ITEM_ID_PREFIX = 8


def full_item_id(provider: Any, given: str, field_name: str = "id") -> str:
    """The full id of the item of ``provider``'s space whose id starts with ``given`` (a well-formed id,
    :func:`validate_item_id`), when ``given`` has at least :data:`MIN_ITEM_ID_PREFIX` characters and the
    provider can look ids up by their start (``ids_starting``: a native space; ASCII letters in either case, ids
    being lower-case UUIDs, so an id typed or pasted in upper case names its item); otherwise, or when no item
    starts so, ``given`` as it is (the provider then says whether it holds it). An item whose id is ``given``
    itself wins over longer ones. Forgotten items count (their full id is answered; the provider then says it is
    not active): the id, or a start, of an item already forgotten never names another one. Raises
    :class:`InvalidInput` (``field_name``) when ``given`` starts several items' ids."""
    starting = getattr(provider, "ids_starting", None)
    if starting is None or len(given) < MIN_ITEM_ID_PREFIX:
        return given
    found = starting(given, 2)
    if not found or found[0] == given:
        return given
    if len(found) > 1:
        raise InvalidInput(field_name, f"{echo_repr(given)} is the start of several item ids; give more characters")
    return str(found[0])


def item_not_found(exc: InvalidInput, ids: dict[str, str]) -> InvalidInput:
    """``exc``, a provider's refusal of an item id, as :class:`~mnemon_ls.errors.ItemNotFound` (code
    ``no-match``, exit 3) when it says that a well-formed id of ``ids`` (field -> the id sent: ``{"id": key}``,
    ``{"sourceId": src, "targetId": tgt}``) names no active item (every provider's rule starts ``no active
    item`` or ``is not an item``); the rule then ends ``(got <id>)``. Any other error is returned as it is."""
    if isinstance(exc, ItemNotFound) or exc.field not in ids or not exc.rule.startswith(("no active item",
                                                                                          "is not an item")):
        return exc
    return ItemNotFound(exc.field, f"{exc.rule} (got {echo_value(ids[exc.field])})",
                        **{k: v for k, v in exc.data.items() if k not in ("field", "rule")})


def validate_query(value: Any, field_name: str = "query") -> str:
    """A trimmed query of 1..2,000 characters (code points, :func:`mnemon_ls.text.check_query_length`) or
    :class:`InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput(field_name, type_rule("a string", value))
    text = value.strip()
    if not text:
        raise InvalidInput(field_name, "is required (an empty query is not allowed)", value=echo_value(value))
    require_unicode(text, field_name)
    if not any(unicodedata.category(ch)[0] not in "CZ" for ch in text):  # only controls, format and spaces
        raise InvalidInput(field_name, "is required (a query of only invisible or control characters, such as "
                                       "zero-width spaces or NUL, is empty)", value=echo_value(value))
    from ..text import check_query_length  # the one query-length rule (code points); regex: imported on use

    return check_query_length(text, field_name)


def validate_limit(value: Any, field_name: str = "limit", *, default: int = DEFAULT_LIMIT,
                   maximum: int = MAX_LIMIT) -> int:
    """An integer 1..``maximum`` (``None`` -> ``default``) or :class:`InvalidInput` worded as every range
    (:func:`~mnemon_ls.errors.range_rule`: ``must be an integer in 1..50 (got 0)``)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(field_name, range_rule("integer", {"ge": MIN_LIMIT, "le": maximum}))
    if not MIN_LIMIT <= value <= maximum:
        raise InvalidInput(field_name, range_rule("integer", {"ge": MIN_LIMIT, "le": maximum}, value), value=value)
    return value


def validate_content(value: Any, field_name: str = "content") -> str:
    """Non-blank content of at most 8,000 UTF-8 bytes (stored trimmed), with no NUL and no other control character
    than newline and tab (:func:`~mnemon_ls.errors.control_rule`), or :class:`InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput(field_name, type_rule("a string", value))
    text = value.strip()
    if not text:
        raise InvalidInput(field_name, "is required (blank content is not allowed)", value=echo_value(value))
    require_unicode(text, field_name)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(field_name, f"must be at most {MAX_CONTENT_BYTES} UTF-8 bytes", bytes=size)
    if "\x00" in text:
        raise InvalidInput(field_name, "must not contain NUL characters", value=echo_value(text))
    rule = control_rule(text, "\n\t")  # the rule of Runtime entries, which keep no newline at all
    if rule is not None:
        raise InvalidInput(field_name, f"{rule}; they would reach the terminal raw when recalled",
                           value=echo_value(text))
    return text


def validate_category(value: Any, field_name: str = "category", *, default: str | None = "general") -> str | None:
    """One of :data:`CATEGORIES` (``None`` -> ``default``) or :class:`InvalidInput`."""
    if value is None:
        return default
    if not isinstance(value, str) or value.strip() not in CATEGORIES:
        raise InvalidInput(field_name, choice_rule(CATEGORIES, value))
    return value.strip()


def validate_importance(value: Any, field_name: str = "importance") -> int:
    """An integer 1..5 (``None`` -> 3) or :class:`InvalidInput` whose rule quotes the value given, escaped and
    clipped (:func:`~mnemon_ls.errors.range_rule`, :func:`~mnemon_ls.errors.echo_value`)."""
    if value is None:
        return 3
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        raise InvalidInput(field_name, range_rule("integer", {"ge": 1, "le": 5}, value) + (
            "" if number else f" (got {echo_repr(value)})"))
    return value


def _string_list(value: Any, field_name: str, max_items: int, max_bytes: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise InvalidInput(field_name, type_rule("a list of strings", value))
    out: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidInput(f"{field_name}[{index}]", type_rule("a string", item))
        text = item.strip()
        if not text:
            continue
        require_unicode(text, f"{field_name}[{index}]")
        if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
            raise InvalidInput(f"{field_name}[{index}]", f"must be at most {max_bytes} UTF-8 bytes")
        if "\x00" in text:
            raise InvalidInput(f"{field_name}[{index}]", "must not contain NUL characters")
        if text not in out:
            out.append(text)
    if len(out) > max_items:
        raise InvalidInput(field_name, f"must hold at most {max_items} items", count=len(out))
    return out


def validate_tags(value: Any, field_name: str = "tags") -> list[str]:
    """At most 20 strings of at most 100 bytes each (trimmed, empties and repeats dropped)."""
    return _string_list(value, field_name, MAX_TAGS, MAX_TAG_BYTES)


def validate_entities(value: Any, field_name: str = "entities") -> list[str]:
    """At most 50 strings of at most 200 bytes each (trimmed, empties and repeats dropped; case kept)."""
    return _string_list(value, field_name, MAX_ENTITIES, MAX_ENTITY_BYTES)


def validate_source(value: Any, field_name: str = "source", *, default: str = "user") -> str:
    """A source label of 1..100 chars (``None`` -> ``default``) or :class:`InvalidInput`."""
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field_name, "must be a non-empty string")
    text = require_unicode(value.strip(), field_name)
    if len(text) > MAX_SOURCE_CHARS:
        raise InvalidInput(field_name, f"must be at most {MAX_SOURCE_CHARS} characters")
    return text


#: Unicode categories a space name may not hold: controls (Cc), invisible format characters such as zero-width
#: spaces and joiners, word joiners, byte-order marks and bidirectional overrides (Cf), line and paragraph
#: separators (Zl, Zp). Two names that look alike must compare alike (:func:`.naming.name_key`).
FORBIDDEN_NAME_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")


def validate_name(value: Any, field_name: str = "name") -> str:
    """A space name as stored: trimmed, NFKC-normalised (fullwidth ``ｗｏｒｋ`` is stored as ``work``,
    ``ﬁ`` as ``fi``), 1..100 chars (UTF-16 code units), one line of visible text. Raises :class:`InvalidInput`
    naming ``field_name``: blank; a lone surrogate; a control (Cc), invisible format (Cf: U+200B/200C/200D/
    2060/FEFF, bidi overrides, soft hyphen...) or line/paragraph separator (Zl/Zp) character, giving its code
    point and category (a name is shown in lists, pickers and terminals and is compared as it is seen);
    too long after normalising."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field_name, "is required")
    text = require_unicode(value.strip(), field_name)
    bad = next((c for c in text if unicodedata.category(c) in FORBIDDEN_NAME_CATEGORIES), None)
    if bad is not None:
        category = unicodedata.category(bad)
        if category == "Cc":
            raise InvalidInput(field_name, f"must not contain control characters (found U+{ord(bad):04X})",
                               value=echo_value(value))
        what = "invisible format characters such as zero-width spaces" if category == "Cf" else "line separators"
        raise InvalidInput(field_name, f"must not contain {what} (found U+{ord(bad):04X} "
                                       f"{unicodedata.name(bad, 'unnamed')}, Unicode category {category}): "
                                       "a space name is compared as it is seen")
    text = unicodedata.normalize("NFKC", text).strip()
    if not text:
        raise InvalidInput(field_name, "is required")
    if js_length(text) > MAX_NAME_CHARS:
        raise InvalidInput(field_name, f"must be at most {MAX_NAME_CHARS} characters")
    return text


def validate_description(value: Any, field_name: str = "description") -> str:
    """A trimmed description of 1..1,000 chars."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field_name, "is required")
    text = require_unicode(value.strip(), field_name)
    if js_length(text) > MAX_DESCRIPTION_CHARS:
        raise InvalidInput(field_name, f"must be at most {MAX_DESCRIPTION_CHARS} characters")
    return text


def validate_branch(value: Any, field_name: str = "branch") -> str | None:
    """A branch name for a ``branch:<name>`` tag (git ref rules, at most 92 bytes so the tag fits 100)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field_name, "must be a non-empty branch name")
    name = require_unicode(value.strip(), field_name)
    bad = (name.startswith(("/", "-", ".")) or name.endswith(("/", ".", ".lock")) or ".." in name
           or "//" in name or "@{" in name or any(c.isspace() or c in "~^:?*[\\" or ord(c) < 32 for c in name))
    if bad or len(name.encode("utf-8")) > MAX_TAG_BYTES - len(BRANCH_TAG_PREFIX):
        raise InvalidInput(field_name, "must be a valid git branch name of at most 92 bytes")
    return name


def branch_tags(tags: Iterable[str]) -> list[str]:
    """The branch names of the ``branch:<name>`` tags in ``tags`` (in order)."""
    return [t[len(BRANCH_TAG_PREFIX):] for t in tags if t.startswith(BRANCH_TAG_PREFIX)
            and len(t) > len(BRANCH_TAG_PREFIX)]


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------- rows and receipts


@dataclass(slots=True)
class Item:
    """One memory item as a provider returns it (reference 6.5 row normalization).

    ``score`` is the provider's relevance (``None`` when it gives none), ``created_at`` the item's RFC3339
    time, ``matched_via`` how it was found (``keyword``, ``entity``, ``causal``, ...), ``depth`` and
    ``edge_type`` only for graph walks, ``similarity`` the vector evidence of an item found by meaning
    (``{"cosine", "z"}``: the cosine of query and item, and ``z`` that cosine in standard deviations above
    the query's mean cosine over the space, or ``None``; :mod:`mnemon_ls.semantic.fusion`).
    """

    id: str
    content: str
    category: str | None = None
    importance: int | None = None
    tags: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    source: str | None = None
    created_at: str | None = None
    score: float | None = None
    matched_via: str | None = None
    depth: int | None = None
    edge_type: str | None = None
    similarity: dict[str, Any] | None = None
    #: When the item was last updated and last accessed (RFC3339, as the store keeps them), for the review rule
    #: (:func:`mnemon_ls.citations.review.review_due`); ``None`` when the provider does not say. Not in
    #: :meth:`to_dict`.
    updated_at: str | None = None
    accessed_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{id, content, category, importance, tags, entities, source, createdAt, score, matchedVia,
        [depth, edgeType, similarity]}``."""
        data: dict[str, Any] = {
            "id": self.id, "content": self.content, "category": self.category, "importance": self.importance,
            "tags": list(self.tags), "entities": list(self.entities), "source": self.source,
            "createdAt": self.created_at, "score": self.score, "matchedVia": self.matched_via,
        }
        if self.depth is not None:
            data["depth"] = self.depth
        if self.edge_type is not None:
            data["edgeType"] = self.edge_type
        if self.similarity is not None:
            data["similarity"] = dict(self.similarity)
        return data


def normalize_row(row: Any) -> Item | None:
    """A provider row (flat, or ``{insight: {...}, score, ...}``) -> :class:`Item`; ``None`` when it lacks a
    string ``id`` or ``content`` (reference 6.5: such rows are dropped)."""
    if not isinstance(row, dict):
        return None
    core = row.get("insight") if isinstance(row.get("insight"), dict) else row
    ident, content = core.get("id"), core.get("content")
    if not isinstance(ident, str) or not isinstance(content, str):
        return None
    importance = core.get("importance")
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not math.isfinite(importance):
        importance = None
    score = row.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        score = None
    depth = row.get("depth")
    return Item(
        id=ident,
        content=content,
        category=core.get("category") if isinstance(core.get("category"), str) else None,
        importance=int(importance) if importance is not None else None,
        tags=[t for t in core.get("tags") or [] if isinstance(t, str)] if isinstance(core.get("tags"), list) else [],
        entities=[e for e in core.get("entities") or [] if isinstance(e, str)]
        if isinstance(core.get("entities"), list) else [],
        source=core.get("source") if isinstance(core.get("source"), str) else None,
        created_at=core.get("created_at") if isinstance(core.get("created_at"), str) else None,
        score=float(score) if score is not None else None,
        matched_via=next((row.get(k) for k in ("matched_via", "via", "via_edge_type") if isinstance(row.get(k), str)),
                         None),
        depth=depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
        edge_type=row.get("via_edge_type") if isinstance(row.get("via_edge_type"), str) else None,
    )


ReceiptStatus = Literal["committed", "accepted", "candidate", "partial", "failed", "unknown"]

_COMMITTED_VERBS = ("added", "created", "stored", "updated", "replaced", "removed", "deleted", "forgotten",
                    "invalidated", "imported", "linked", "merged", "succeeded", "success", "completed", "committed")
_ACCEPTED = ("accepted", "pending", "processing", "queued", "running")
_FAILED = ("failed", "error", "canceled", "cancelled")
_COUNT_KEYS = ("created", "deleted", "edges_inserted", "imported", "removed", "stored", "updated")


def receipt_status(raw: Any) -> ReceiptStatus:
    """Map a provider's raw write result to a completion status (reference 6.9, vN mapping).

    ``partial`` when a status word contains "partial" or errors coexist with positive counts; ``failed`` on
    ``success``/``ok`` false, errors, or a failed/error/cancel(l)ed word; ``candidate``; ``accepted`` for
    accepted/pending/processing/queued/running; ``unknown`` for ``committed``/``durable`` false or
    ``skipped``; ``committed`` for ``committed``/``durable`` true, a committed verb or a positive count;
    anything else (e.g. a bare id) ``unknown``.
    """
    if not isinstance(raw, dict):
        return "unknown"
    words = [str(raw[k]).strip().lower() for k in ("action", "status", "state") if isinstance(raw.get(k), str)]
    errors = raw.get("errors")
    error_count = errors if isinstance(errors, (int, float)) and not isinstance(errors, bool) else (
        len(errors) if isinstance(errors, list) else (1 if errors else 0))
    positive = any(isinstance(raw.get(k), (int, float)) and not isinstance(raw.get(k), bool) and raw.get(k) > 0
                   for k in _COUNT_KEYS)
    if any("partial" in w for w in words) or (error_count and positive):
        return "partial"
    if raw.get("success") is False or raw.get("ok") is False or error_count or any(
            any(f in w for f in _FAILED) for w in words):
        return "failed"
    if any("candidate" in w for w in words):
        return "candidate"
    if any(w in _ACCEPTED for w in words):
        return "accepted"
    if raw.get("committed") is False or raw.get("durable") is False or any(w == "skipped" for w in words):
        return "unknown"
    if raw.get("committed") is True or raw.get("durable") is True or any(w in _COMMITTED_VERBS for w in words) \
            or positive:
        return "committed"
    return "unknown"


@dataclass(slots=True)
class WriteReceipt:
    """What a space mutation returns.

    ``status``: ``committed`` (durably written), ``skipped`` (no new item stored: an exact duplicate, ``id`` names
    the existing item), ``accepted``/``candidate``/``partial``/``failed``/``unknown`` (provider mapping of
    reference 6.9). ``action`` is the verb (``added``, ``skipped``, ``linked``, ``deleted``, ``merged``);
    ``detail`` operation-specific data (``edgesCreated``, ``duplicateOf``, ...); ``activated`` true when
    this write activated an inactive space.
    """

    status: str
    action: str
    space_id: str
    space_name: str
    id: str | None
    message: str
    detail: dict[str, Any] = field(default_factory=dict)
    activated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{status, action, spaceId, spaceName, id, message, activated, **detail}``."""
        return {"status": self.status, "action": self.action, "spaceId": self.space_id,
                "spaceName": self.space_name, "id": self.id, "message": self.message,
                "activated": self.activated, **self.detail}
