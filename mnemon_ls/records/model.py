"""The workspace memory record (seed 002 section 2, ``schemaVersion`` 1) and its validation rules.

On disk a record is one JSON object per line, camelCase keys in the seed's order::

    {"schemaVersion": 1, "id": "memory:auto:fact:<16 hex>:<24 hex>", "scope": "session",
     "scopeKey": "<sessionId>|<rootId>", "type": "fact", "title": "...", "content": "...", "tags": [],
     "provenance": {"kind": "tool", "sessionId": "...", "eventSeq": 42, "note": "workspace auto-writer"},
     "createdAt": 1760000000000, "updatedAt": 1760000000000, "useCount": 0,
     "contentHash": "sha256:<64 hex>", "status": "active",
     "governance": {"origin": "derived", "sourceRefs": [{"kind": "session", "id": "..."}],
                    "verification": "unverified", "revision": 1, "retention": "session-end"}}

Times are epoch milliseconds. Optional fields that are unset (``verifiedAt``, ``provenance.eventSeq``...)
are omitted, as the seed's example omits ``verifiedAt`` of an unverified record.

:func:`validate_record` enforces the seed's ``MemoryStore.validateRecord`` rules and raises
:class:`~mnemon_ls.errors.InvalidInput` naming the field (dotted camelCase path) and the rule.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidInput, not_a_choice

SCHEMA_VERSION = 1
SCOPES = ("session", "project", "shared-project", "user")
TYPES = ("decision", "preference", "convention", "fact")
STATUSES = ("active", "archived", "forgotten")
ORIGINS = ("user-authored", "imported", "derived", "model-suggested")
VERIFICATIONS = ("unverified", "verified", "rejected", "stale")
RETENTIONS = ("session-end", "project-delete", "user-managed")
PROVENANCE_KINDS = ("user", "agent", "tool")

Scope = Literal["session", "project", "shared-project", "user"]
RecordType = Literal["decision", "preference", "convention", "fact"]
Status = Literal["active", "archived", "forgotten"]
Origin = Literal["user-authored", "imported", "derived", "model-suggested"]
Verification = Literal["unverified", "verified", "rejected", "stale"]
Retention = Literal["session-end", "project-delete", "user-managed"]

#: Retention a record gets from its scope (seed 002 sections 1 and 3).
SCOPE_RETENTION: dict[str, str] = {"session": "session-end", "project": "project-delete",
                                   "shared-project": "project-delete", "user": "user-managed"}

#: Bounds of the free-text fields, in characters (Unicode code points).
MAX_TITLE_CHARS = 200
MAX_CONTENT_CHARS = 64 * 1024
MAX_TAGS = 32
#: Most records one listing returns (``limit``: 1..this).
MAX_LIST_LIMIT = 10_000
MAX_TAG_CHARS = 64
MAX_ID_CHARS = 256
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
#: Largest epoch-ms timestamp accepted (year 9999), so a huge number is refused rather than stored.
MAX_EPOCH_MS = 253_402_300_799_999


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


class Provenance(_Model):
    """Who produced the record: ``kind`` (user|agent|tool), ``sessionId``, ``eventSeq``, ``note``."""

    kind: Literal["user", "agent", "tool"]
    session_id: str | None = Field(None, alias="sessionId", max_length=MAX_ID_CHARS)
    event_seq: int | None = Field(None, alias="eventSeq", ge=0, le=2**53)
    note: str | None = Field(None, max_length=1000)


class SourceRef(_Model):
    """What the record was derived from: ``{kind, id}`` (e.g. ``session``, ``event``, ``file``, ``import``)."""

    kind: str = Field(min_length=1, max_length=64)
    id: str = Field(min_length=1, max_length=1024)


class Governance(_Model):
    """Origin, evidence and review state: ``origin``, ``sourceRefs``, ``verification``, ``verifiedAt``
    (epoch ms, only when verified), ``revision`` (>= 1, +1 per edit), ``retention``."""

    origin: Origin = "user-authored"
    source_refs: list[SourceRef] = Field(default_factory=list, alias="sourceRefs", max_length=64)
    verification: Verification = "unverified"
    verified_at: int | None = Field(None, alias="verifiedAt", ge=0, le=MAX_EPOCH_MS)
    revision: int = Field(1, le=2**31)
    retention: Retention = "user-managed"


class MemoryRecord(_Model):
    """One record (seed 002 section 2). Build with :func:`validate_record` to get field-named errors."""

    schema_version: Literal[1] = Field(1, alias="schemaVersion")
    id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    scope: Scope
    scope_key: str = Field(alias="scopeKey", min_length=1, max_length=1024)
    type: RecordType
    title: str = Field(max_length=MAX_TITLE_CHARS)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    provenance: Provenance
    created_at: int = Field(alias="createdAt", ge=0, le=MAX_EPOCH_MS)
    updated_at: int = Field(alias="updatedAt", ge=0, le=MAX_EPOCH_MS)
    use_count: int = Field(0, alias="useCount", ge=0, le=2**53)
    content_hash: str = Field(alias="contentHash")
    status: Status = "active"
    governance: Governance

    def to_json(self) -> dict[str, Any]:
        """The on-disk / wire object: camelCase keys in the seed's order, unset optionals omitted."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    @property
    def is_proposal(self) -> bool:
        """An agent's proposal still waiting for a person (model-suggested, unverified, active)."""
        return (self.governance.origin == "model-suggested" and self.governance.verification == "unverified"
                and self.status == "active")


def content_hash(content: str) -> str:
    """``sha256:<64 hex>`` of ``content``'s UTF-8 bytes (the seed's ``contentHash``)."""
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


_RULES = {
    "schemaVersion": "must be 1",
    "scope": "must be one of " + ", ".join(SCOPES),
    "type": "must be one of " + ", ".join(TYPES),
    "status": "must be one of " + ", ".join(STATUSES),
    "governance.origin": "must be one of " + ", ".join(ORIGINS),
    "governance.verification": "must be one of " + ", ".join(VERIFICATIONS),
    "governance.retention": "must be one of " + ", ".join(RETENTIONS),
    "provenance.kind": "must be one of " + ", ".join(PROVENANCE_KINDS),
}


def validate_record(data: Any) -> MemoryRecord:
    """Parse and check one record (a dict in the on-disk shape); the seed's ``validateRecord``.

    Rules, each raising :class:`InvalidInput` with the field and the rule (nothing else happens):
    the shape and enums of seed 002 section 2 (``schemaVersion`` 1; unknown keys refused; integers
    strict, no floats or booleans); ``contentHash`` is ``sha256:<64 hex>`` and equals
    :func:`content_hash` of ``content``; a record whose origin is not ``user-authored`` has at least one
    ``sourceRefs`` entry; ``verified`` needs ``verifiedAt``; ``revision >= 1``;
    ``updatedAt >= createdAt``; tags are non-empty strings of at most 64 characters.
    A missing ``governance`` is completed with defaults (origin user-authored, unverified, revision 1,
    retention from the scope), as the seed's export completes it.
    """
    if not isinstance(data, dict):
        raise InvalidInput("record", "must be a JSON object")
    if "governance" not in data and isinstance(data.get("scope"), str):
        data = {**data, "governance": {"retention": SCOPE_RETENTION.get(data["scope"], "user-managed")}}
    try:
        record = MemoryRecord.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(_camel(str(p)) for p in err["loc"]) or "record"
        rule = _RULES.get(field) if err["type"] in ("literal_error", "enum") else None
        if rule is not None and rule.startswith("must be one of"):
            rule += not_a_choice(err.get("input"))
        if err["type"] == "extra_forbidden":
            rule = "is not a field of a record (schemaVersion 1)"
        elif err["type"] == "missing":
            rule = "is required"
        message = str(err["msg"]).removeprefix("Value error, ")
        raise InvalidInput(field, rule or message[:1].lower() + message[1:]) from None  # "string should have..."
    check_rules(record)
    return record


def check_rules(record: MemoryRecord) -> None:
    """The cross-field rules of :func:`validate_record` on an already-typed record."""
    if not _HASH.match(record.content_hash):
        raise InvalidInput("contentHash", f"must be sha256:<64 lowercase hex> (got {record.content_hash[:80]!r})")
    if record.content_hash != content_hash(record.content):
        raise InvalidInput("contentHash", "must equal sha256 of content (the content was changed or the hash is wrong)")
    gov = record.governance
    if gov.origin != "user-authored" and not gov.source_refs:
        raise InvalidInput("governance.sourceRefs", f"a {gov.origin} record needs at least one source reference")
    if gov.verification == "verified" and gov.verified_at is None:
        raise InvalidInput("governance.verifiedAt", "is required when verification is verified")
    if gov.revision < 1:
        raise InvalidInput("governance.revision", f"must be >= 1 (got {gov.revision})")
    if record.updated_at < record.created_at:
        raise InvalidInput("updatedAt", f"must be >= createdAt ({record.updated_at} < {record.created_at})")
    for i, tag in enumerate(record.tags):
        if not tag.strip() or len(tag) > MAX_TAG_CHARS:
            raise InvalidInput(f"tags[{i}]", f"must be a non-empty string of at most {MAX_TAG_CHARS} characters")
    if not record.title.strip():
        raise InvalidInput("title", "must not be empty")
    if not record.content.strip():
        raise InvalidInput("content", "must not be empty")


_CAMEL = {"schema_version": "schemaVersion", "scope_key": "scopeKey", "session_id": "sessionId",
          "event_seq": "eventSeq", "created_at": "createdAt", "updated_at": "updatedAt", "use_count": "useCount",
          "content_hash": "contentHash", "source_refs": "sourceRefs", "verified_at": "verifiedAt"}


def _camel(part: str) -> str:
    return _CAMEL.get(part, part)
