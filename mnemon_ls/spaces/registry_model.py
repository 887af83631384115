"""The space registry's file model: the records of ``data/.dsh-memory-bodies.json`` and
``state/memory-providers.json``, their JSON forms, parsing (with the version 1-3 -> 4 migration of the
provider file) and the lenient salvage of a damaged file. Pure: no file is read or written here
(:mod:`.registry` owns the IO and locks, :mod:`.registry_repair` the repair; formats and rules in :mod:`.registry`'s
module doc)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from ..errors import InvalidInput
from .model import SPACE_ID_RE, Clock, iso_ms, utc_now
from .provider_fields import (MEMORY_FIELDS, SERVICE_FIELDS, known_provider, stored_field_problem,
                              stored_fields_problem)


def _plugins() -> Any:
    """:mod:`.plugins` (installed provider distributions), imported on first use: reading a registry that
    names no third-party provider needs neither it nor the provider protocol it imports."""
    from . import plugins

    return plugins


NATIVE_FILE = ".dsh-memory-bodies.json"
PROVIDERS_FILE = "memory-providers.json"
LOCK_FILE = ".dsh-memory-bodies.lock"
LAST_GOOD_FILE = ".dsh-memory-bodies.last-good.json"
NATIVE_VERSION = 1
PROVIDERS_VERSION = 4
NATIVE_PROVIDER = "mnemon-native"
DISCOVERED_DESCRIPTION = "Existing Mnemon Store discovered on disk."
#: Prefix of the directory a new native store is built in before it is renamed to ``data/<id>``.
STAGING_PREFIX = ".creating-"
#: A staging directory this old (seconds) is a crash leftover; creating a store takes milliseconds.
STAGING_MAX_AGE_SECONDS = 600

METADATA_SOURCES = ("provider", "manual", "ai")


@dataclass(frozen=True, slots=True)
class SpaceRecord:
    """One registered space. ``provider_id`` is ``mnemon-native`` for the native catalog; third-party
    spaces also carry ``external_id``, ``metadata_source`` and ``connection`` (memory-scope fields)."""

    id: str
    name: str
    description: str
    active: bool
    created_at: str
    updated_at: str
    provider_id: str = NATIVE_PROVIDER
    placement: dict[str, Any] | None = None
    external_id: str | None = None
    metadata_source: str | None = None
    connection: dict[str, Any] = field(default_factory=dict)

    @property
    def native(self) -> bool:
        """True for a Mnemon native store."""
        return self.provider_id == NATIVE_PROVIDER

    def to_native_json(self) -> dict[str, Any]:
        """The catalog entry (key order of the plugin)."""
        data: dict[str, Any] = {"id": self.id, "name": self.name, "description": self.description,
                                "active": self.active, "createdAt": self.created_at, "updatedAt": self.updated_at}
        if self.placement is not None:
            data["placement"] = self.placement
        return data

    def to_provider_json(self) -> dict[str, Any]:
        """The provider-plane entry (key order of the plugin)."""
        data: dict[str, Any] = {"id": self.id, "name": self.name, "description": self.description,
                                "active": self.active, "providerId": self.provider_id}
        if self.external_id is not None:
            data["externalId"] = self.external_id
        data["metadataSource"] = self.metadata_source or "manual"
        if self.placement is not None:
            data["placement"] = self.placement
        data["connection"] = dict(self.connection)
        data["createdAt"] = self.created_at
        data["updatedAt"] = self.updated_at
        return data


@dataclass(frozen=True, slots=True)
class RegistryState:
    """What a read saw: native ``bodies`` (catalog order), provider ``services`` (with secrets: internal
    only), ``enabled`` flags and provider ``provider_bodies``."""

    bodies: tuple[SpaceRecord, ...] = ()
    services: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    enabled: Mapping[str, bool] = field(default_factory=dict)
    provider_bodies: tuple[SpaceRecord, ...] = ()
    #: The :class:`~mnemon_ls.errors.FormatTooNew` of a provider file written by a newer version (then
    #: ``services``, ``enabled`` and ``provider_bodies`` are empty and the file is never written).
    providers_refused: Any = None
    #: The same for a native catalog written by a newer version (then ``bodies`` is empty, no store on disk is
    #: discovered, and neither the catalog nor its last-good copy is written).
    native_refused: Any = None

    def require_providers(self) -> "RegistryState":
        """``self``, or the :attr:`providers_refused` error when the provider plane cannot be read here."""
        if self.providers_refused is not None:
            raise self.providers_refused
        return self

    def require_native(self) -> "RegistryState":
        """``self``, or the :attr:`native_refused` error when the native catalog cannot be read here."""
        if self.native_refused is not None:
            raise self.native_refused
        return self

    @property
    def all(self) -> tuple[SpaceRecord, ...]:
        """Native spaces first, then provider spaces of enabled providers."""
        return (*self.bodies, *self.provider_bodies)

    def find(self, space_id: str) -> SpaceRecord | None:
        """The space with ``space_id`` or ``None``."""
        return next((b for b in self.all if b.id == space_id), None)


@dataclass(frozen=True, slots=True)
class Problem:
    """A damaged registry file: ``file``, ``reason``, where the damaged bytes were kept (``quarantined``),
    how many spaces were ``recovered``."""

    file: str
    reason: str
    quarantined: str | None
    recovered: int
    #: ``damaged`` (quarantined and rebuilt) or ``newer`` (written by a newer version: left as it is).
    kind: str = "damaged"

    def to_dict(self) -> dict[str, Any]:
        """``{file, reason, quarantined, recovered, message}``."""
        return {"file": self.file, "reason": self.reason, "quarantined": self.quarantined,
                "recovered": self.recovered, "message": self.message}

    @property
    def message(self) -> str:
        """One line for people."""
        if self.kind == "newer":
            what = ("the native Memory Spaces are not shown and cannot be created, changed or written to"
                    if self.file.endswith(NATIVE_FILE) else
                    "third-party spaces are not shown and provider settings cannot change")
            return (f"{self.file} was written by a newer version of mnemon-ls ({self.reason}); it is left unchanged "
                    f"and read-only here: {what} until mnemon-ls is upgraded")
        kept = f"; the damaged file is kept at {self.quarantined}" if self.quarantined else ""
        return (f"{self.file} was damaged ({self.reason}); rebuilt with {self.recovered} recoverable "
                f"space{'' if self.recovered == 1 else 's'}{kept}")


class _Damaged(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_native(data: bytes | None) -> tuple[SpaceRecord, ...]:
    """The catalog's spaces from its bytes (``None``: no file); :class:`_Damaged` when it breaks a rule,
    :class:`_TooNew` when its version is above :data:`NATIVE_VERSION` (written by a newer version: read-only,
    never repaired)."""
    if data is None:
        return ()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Damaged(f"not valid JSON: {exc}") from None
    version = _version_above(doc, NATIVE_VERSION)
    if version is not None:
        raise _TooNew(version)
    if (not isinstance(doc, dict) or type(doc.get("version")) is not int or doc.get("version") != NATIVE_VERSION
            or not isinstance(doc.get("bodies"), list)):  # `true` and `1.0` are not the version 1 (== in Python)
        raise _Damaged(f"expected {{\"version\": {NATIVE_VERSION}, \"bodies\": [...]}}")
    out: list[SpaceRecord] = []
    for index, raw in enumerate(doc["bodies"]):
        record = _native_record(raw)
        if record is None or any(r.id == record.id for r in out):
            raise _Damaged(f"bodies[{index}] is not a valid space")
        out.append(record)
    return tuple(out)


def parse_providers(data: bytes | None) -> tuple[dict, dict, tuple[SpaceRecord, ...]]:
    """``(services, enabled, bodies)`` of the provider file's bytes (``None``: no file), migrated to version 4
    and validated with the strict model of :mod:`.registry_schema` (a value of the wrong type is damage, never
    read as something else; so is a field of an installed provider whose JSON type is not the one the
    provider declares, :func:`~.provider_fields.stored_fields_problem`: ``"minTrust": true`` is not read as
    1); :class:`_Damaged` when it breaks a rule, :class:`_TooNew` when its version is
    above :data:`PROVIDERS_VERSION` (written by a newer version: read-only, never repaired)."""
    if data is None:
        return {}, {}, ()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Damaged(f"not valid JSON: {exc}") from None
    if _version_above(doc, PROVIDERS_VERSION) is not None:
        raise _TooNew(doc["version"])
    version = doc.get("version") if isinstance(doc, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= PROVIDERS_VERSION:
        raise _Damaged("expected a JSON object with version 1..4")
    doc = _migrate_providers(doc)
    from .registry_schema import ShapeError, check_document

    try:
        check_document(doc)
    except ShapeError as exc:
        raise _Damaged(exc.reason) from None
    services, enabled, bodies = doc["services"], doc["enabled"], doc["bodies"]
    for provider, fields in services.items():  # each installed provider's declared field types
        problem = stored_fields_problem(provider, fields, f"services.{provider}") if known_provider(provider) \
            else None
        if problem is not None:
            raise _Damaged(problem)
    out: list[SpaceRecord] = []
    for index, raw in enumerate(bodies):
        record = _provider_record(raw)
        if record is None or any(r.id == record.id for r in out):
            raise _Damaged(f"bodies[{index}] is not a valid provider space")
        problem = stored_fields_problem(record.provider_id, raw["connection"], f"bodies[{index}].connection",
                                        scope="connection") if isinstance(raw.get("connection"), dict) else None
        if problem is not None:
            raise _Damaged(problem)
        out.append(record)
    # the reference's providers and every installed one (a provider package may bring a new id: ``postgres``)
    clean_services = {k: dict(v) for k, v in services.items() if known_provider(k)}
    clean_enabled = {k: v for k, v in enabled.items() if known_provider(k)}
    return clean_services, clean_enabled, tuple(out)


class _TooNew(Exception):
    """A registry file's ``version`` is above the one this version writes (:data:`PROVIDERS_VERSION`,
    :data:`NATIVE_VERSION`)."""

    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def newer_version(data: bytes | None, known: int = PROVIDERS_VERSION) -> int | None:
    """A registry file's ``version`` when it is above ``known`` (the newest this version reads:
    :data:`PROVIDERS_VERSION` for the provider file, :data:`NATIVE_VERSION` for the catalog), else ``None``
    (no file, bytes that do not parse, an older or the current version)."""
    try:
        doc = json.loads(data.decode("utf-8")) if data is not None else None
    except (UnicodeDecodeError, ValueError):
        return None
    return _version_above(doc, known)


def _version_above(doc: Any, known: int) -> int | None:
    """The parsed document's integer ``version`` when it is above ``known``, else ``None``."""
    version = doc.get("version") if isinstance(doc, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > known:
        return version
    return None


#: Top-level key of ``state/memory-providers.json`` keeping the user's name and description of the spaces of
#: a disabled provider (an extension of the reference's version 4; the reference ignores it).
DISABLED_SPACES_KEY = "disabledSpaces"


def disabled_space_entry(record: SpaceRecord) -> dict[str, Any]:
    """What disabling keeps of a provider space whose name/description the user (or the AI metadata pass)
    set, or that was active: ``{"providerId", "externalId", "name", "description", "metadataSource",
    "active"}`` (no id, no connection: it is not a mapping, only the words and the active flag to give the
    namespace again when it is rediscovered; ``metadataSource`` ``provider`` keeps only the flag)."""
    return {"providerId": record.provider_id, "externalId": record.external_id, "name": record.name,
            "description": record.description, "metadataSource": record.metadata_source, "active": record.active}


def parse_disabled_spaces(data: bytes | None) -> tuple[dict[str, Any], ...]:
    """The valid :func:`disabled_space_entry` objects under :data:`DISABLED_SPACES_KEY` of the provider
    file's bytes (``()`` for no file, a damaged file or a missing key; invalid entries are skipped)."""
    if data is None:
        return ()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ()
    raw = doc.get(DISABLED_SPACES_KEY) if isinstance(doc, dict) else None
    out: list[dict[str, Any]] = []
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, dict) or not known_provider(entry.get("providerId")):
            continue
        external, name, description = entry.get("externalId"), entry.get("name"), entry.get("description")
        if not (isinstance(external, str) and external and isinstance(name, str) and name.strip()
                and isinstance(description, str)) or entry.get("metadataSource") not in ("manual", "ai", "provider"):
            continue
        if entry["metadataSource"] == "provider" and entry.get("active") is not True:  # nothing to give back
            continue
        if any(e["providerId"] == entry["providerId"] and e["externalId"] == external for e in out):
            continue
        out.append({"providerId": entry["providerId"], "externalId": external, "name": name[:100],
                    "description": description[:1000], "metadataSource": entry["metadataSource"],
                    "active": entry.get("active") is True})
    return tuple(out)


def _dump(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _replace_body(state: RegistryState, record: SpaceRecord) -> RegistryState:
    return replace(state,
                   bodies=tuple(record if b.id == record.id else b for b in state.bodies),
                   provider_bodies=tuple(record if b.id == record.id else b for b in state.provider_bodies))


def _native_record(raw: Any, *, lenient: bool = False, clock: Clock = utc_now,
                   fallback: SpaceRecord | None = None) -> SpaceRecord | None:
    """A catalog entry as a record, or ``None``. Strict: every field valid. ``lenient`` (salvage of a damaged
    catalog): a field that is missing or invalid comes from ``fallback`` (the same space in the last-good copy)
    when given, else a default (the id as name, the discovery description, inactive, ``clock``'s now)."""
    if not isinstance(raw, dict):
        return None
    ident = raw.get("id")
    if not isinstance(ident, str) or not SPACE_ID_RE.match(ident.strip()):
        return None
    ident = ident.strip()
    name, description = raw.get("name"), raw.get("description")
    created, updated = raw.get("createdAt"), raw.get("updatedAt")
    active = raw.get("active")
    placement = raw.get("placement") if isinstance(raw.get("placement"), dict) else None
    if not lenient:
        if not (isinstance(name, str) and name.strip() and isinstance(description, str)
                and isinstance(active, bool) and isinstance(created, str) and isinstance(updated, str)):
            return None
        return SpaceRecord(ident, name, description, active, created, updated, placement=placement)
    if "name" not in raw and "active" not in raw and "description" not in raw:
        return None
    now = iso_ms(clock())
    was = fallback if fallback is not None and fallback.id == ident else None
    return SpaceRecord(ident, name.strip() if isinstance(name, str) and name.strip() else was.name if was else ident,
                       description if isinstance(description, str) and description.strip()
                       else was.description if was else DISCOVERED_DESCRIPTION,
                       active if isinstance(active, bool) else was.active if was else False,
                       created if isinstance(created, str) else was.created_at if was else now,
                       updated if isinstance(updated, str) else was.updated_at if was else now,
                       placement=placement if placement is not None or was is None else was.placement)


def _provider_record(raw: Any) -> SpaceRecord | None:
    if not isinstance(raw, dict):
        return None
    ident, provider = raw.get("id"), raw.get("providerId")
    if not isinstance(ident, str) or not SPACE_ID_RE.match(ident) or not known_provider(provider) \
            or not ident.startswith(f"{provider}-"):
        return None
    name, description, active = raw.get("name"), raw.get("description"), raw.get("active")
    if not (isinstance(name, str) and name.strip() and isinstance(description, str) and isinstance(active, bool)):
        return None
    source = raw.get("metadataSource") if raw.get("metadataSource") in METADATA_SOURCES else "manual"
    connection = raw.get("connection") if isinstance(raw.get("connection"), dict) else {}
    external = raw.get("externalId") if isinstance(raw.get("externalId"), str) else None
    created = raw.get("createdAt") if isinstance(raw.get("createdAt"), str) else ""
    updated = raw.get("updatedAt") if isinstance(raw.get("updatedAt"), str) else created
    placement = raw.get("placement") if isinstance(raw.get("placement"), dict) else None
    return SpaceRecord(ident, name, description, active, created, updated, provider_id=provider,
                       placement=placement, external_id=external, metadata_source=source,
                       connection={k: v for k, v in connection.items()
                                   if k in MEMORY_FIELDS or k in _plugins().declared_fields(provider)[1]})


def _migrate_providers(doc: dict) -> dict:
    """Versions 1-3 -> 4: service-scope fields found in a space's connection move to ``services``; a legacy
    top-level ``openViking`` object becomes the openviking service."""
    if doc.get("version") == PROVIDERS_VERSION:
        return doc
    services = dict(doc.get("services") or {}) if isinstance(doc.get("services"), dict) else {}
    enabled = dict(doc.get("enabled") or {}) if isinstance(doc.get("enabled"), dict) else {}
    legacy = doc.get("openViking")
    if isinstance(legacy, dict):
        services.setdefault("openviking", {}).update({k: v for k, v in legacy.items() if k in SERVICE_FIELDS})
        enabled.setdefault("openviking", True)
    bodies = []
    for raw in doc.get("bodies") or []:
        if isinstance(raw, dict):
            connection = dict(raw.get("connection") or {}) if isinstance(raw.get("connection"), dict) else {}
            provider = raw.get("providerId")
            moved = {k: connection.pop(k) for k in list(connection) if k in SERVICE_FIELDS}
            if moved and isinstance(provider, str):
                services.setdefault(provider, {}).update(moved)
            bodies.append({**raw, "connection": connection})
    return {"version": PROVIDERS_VERSION, "services": services, "enabled": enabled, "bodies": bodies}


def _salvage_providers(data: bytes) -> tuple[dict, dict, tuple[SpaceRecord, ...]]:
    """What a damaged provider file still holds: every *complete* service entry (with its credentials) and
    enabled flag of the top-level ``services``/``enabled`` objects (members before a cut or damage), and
    every provider space object that decodes anywhere in the text, each only when it has the strict shape of
    :mod:`.registry_schema` (a wrong-typed value is never salvaged as something else). Of a service entry,
    a field whose value breaks that shape or the installed provider's declared type
    (:func:`~.provider_fields.stored_field_problem`) is left out and the other fields are kept; a space whose
    connection holds such a field is left out."""
    from ..salvage import complete_members, json_objects
    from .registry_schema import check_body, check_service

    text = data.decode("utf-8", "replace")
    services: dict[str, dict] = {}
    enabled: dict[str, bool] = {}
    for key, target in (("services", services), ("enabled", enabled)):
        match = re.search(rf'"{key}"\s*:\s*\{{', text)
        if not match:
            continue
        for provider, fields in complete_members(text, match.end() - 1):
            if not known_provider(provider):
                continue
            if key == "services" and isinstance(fields, dict):
                # a wrong-typed field is not salvaged (as something else or at all); the others are, credentials
                # included: they must not survive only in quarantine
                target[provider] = {name: value for name, value in fields.items() if check_service({name: value})
                                    and stored_field_problem(provider, name, value) is None}
            elif key == "enabled" and isinstance(fields, bool):
                target[provider] = fields
    bodies: list[SpaceRecord] = []
    for raw in json_objects(text):
        record = _provider_record(raw) if check_body(raw) else None
        if record is not None and stored_fields_problem(record.provider_id, raw.get("connection") or {}, "connection",
                                                        scope="connection") is not None:
            record = None  # a space whose connection holds a wrong-typed field is not salvaged (rediscovery maps it)
        if record is not None and not any(b.id == record.id for b in bodies):
            bodies.append(record)
    return services, enabled, tuple(bodies)


def require(state: RegistryState, space_id: str, field_name: str = "spaceId") -> SpaceRecord:
    """The registered space ``space_id`` or :class:`InvalidInput` naming ``field_name``."""
    record = state.find(space_id)
    if record is None:
        raise InvalidInput(field_name, "is not a registered space", spaceId=space_id)
    return record

