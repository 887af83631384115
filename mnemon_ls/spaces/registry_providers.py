"""The provider plane of the space registry (``state/memory-providers.json``): service configuration,
namespace discovery sync and spaces made with ``space create --provider`` (rules and format in
:mod:`.registry`'s module doc).

:class:`ProviderPlane` is a part a :class:`~.registry.SpaceRegistry` owns (``registry.provider_plane``); it
reaches the registry only through :class:`PlaneRegistry` (paths, clock, and the write path: every method locks,
re-reads, validates and writes through the registry's ``locked``, ``read_locked`` and ``write_locked``)."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import replace
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol

from .. import fsio
from ..errors import InvalidInput
from .model import FORBIDDEN_NAME_CATEGORIES, iso_ms, monotonic_iso, require_unicode
from .naming import name_key, name_keys, space_label, unique_name
from .provider_fields import (
    MAX_FIELD_CHARS,
    _fallback_name,
    _provider_id,
    merge_service,
    provider_label,
    secret_fields,
    validate_memory_fields,
    validate_service_fields,
)
from .registry_model import (
    RegistryState,
    SpaceRecord,
    _Damaged,
    _TooNew,
    disabled_space_entry,
    parse_disabled_spaces,
    parse_providers,
)


def provider_space_id(provider_id: str, external_id: str, taken: set[str]) -> str:
    """``<providerId>-<24 hex of sha256(externalId)>``, re-hashed as ``externalId:<n>`` (n = 1, 2, ...) while
    the id's :func:`.naming.name_key` is in ``taken`` (reference 6.2; ``taken`` holds the keys of the ids, and
    for a space made now also of the names, of the other spaces: an id is matched ignoring case and may not
    be another space's name)."""
    n, key = 0, external_id
    while True:
        candidate = f"{provider_id}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:24]}"
        if name_key(candidate) not in taken:
            return candidate
        n += 1
        key = f"{external_id}:{n}"


class PlaneRegistry(Protocol):
    """What the provider plane uses of its :class:`~.registry.SpaceRegistry`: the root (for a field naming a
    path), ``state/`` and its provider file, the clock, and the read/write path (see the registry's
    attributes and methods of these names)."""

    root: Path
    state_dir: Path
    providers_path: Path
    clock: Callable[[], datetime]

    def read(self) -> RegistryState: ...

    def locked(self) -> AbstractContextManager[Any]: ...

    def read_locked(self) -> RegistryState: ...

    def write_locked(self, state: RegistryState, *, all_provider_bodies: tuple[SpaceRecord, ...] | None = None,
                     keep_providers_file: bool = False,
                     disabled_spaces: tuple[dict[str, Any], ...] | None = None) -> None: ...


class ProviderPlane:
    """The provider plane of one space registry: provider services (their fields, secrets and enabled flags)
    and the spaces mapped from their namespaces, all in ``state/memory-providers.json``.

    Owns ``registry`` (a :class:`PlaneRegistry`) and nothing else; every write goes through the registry's lock
    and ``write_locked``. Methods raise :class:`InvalidInput` naming the field and the rule (nothing written),
    :class:`~mnemon_ls.errors.StoreBusy` (lock timeout), :class:`~mnemon_ls.errors.FormatTooNew` (a provider
    file of a newer version, never written) and :class:`OSError`.
    """

    def __init__(self, registry: PlaneRegistry) -> None:
        self.registry = registry

    def configure_service(self, provider_id: str, fields: Mapping[str, Any] | None = None, *,
                          enabled: bool | None = None, clear_secrets: Iterable[str] = ()) -> dict[str, Any]:
        """Save a provider's service-scope fields (validated: :func:`.provider_fields.validate_service_fields`;
        merged over the stored ones; a ``None`` or blank value clears its field; a secret is kept unless given
        or named in ``clear_secrets``) and optionally its enabled flag. Disabling drops its projections and
        keeps the names/descriptions people gave them and their active flags in ``disabledSpaces`` (registry
        module doc).
        Returns :meth:`service_view`."""
        provider_id = _provider_id(provider_id)
        registry = self.registry
        clean = validate_service_fields(fields or {}, provider_id, (registry.root,))
        clear = self.validate_clear_secrets(provider_id, clear_secrets)
        with registry.locked():
            state = registry.read_locked().require_providers()
            services = {k: dict(v) for k, v in state.services.items()}
            merged = merge_service(services.get(provider_id, {}), clean)
            for name in clear:
                merged.pop(name, None)
            services[provider_id] = merged
            flags = dict(state.enabled)
            all_bodies = self._all_provider_bodies()
            kept = None
            if enabled is not None:
                flags[provider_id] = bool(enabled)
                if not enabled:
                    dropped = [b for b in all_bodies if b.provider_id == provider_id]
                    renamed = [disabled_space_entry(b) for b in dropped
                               if b.external_id and (b.metadata_source in ("manual", "ai") or b.active)]
                    kept = (*(e for e in parse_disabled_spaces(fsio.read_bytes_or_none(registry.providers_path))
                              if not (e["providerId"] == provider_id
                                      and any(r["externalId"] == e["externalId"] for r in renamed))), *renamed)
                    all_bodies = tuple(b for b in all_bodies if b.provider_id != provider_id)
            new_state = RegistryState(state.bodies, services, flags,
                                      tuple(b for b in all_bodies if flags.get(b.provider_id)))
            registry.write_locked(new_state, all_provider_bodies=all_bodies, disabled_spaces=kept)
            if clear:
                self._clear_quarantined_secrets(provider_id, clear)
            return self.service_view(new_state, provider_id)

    def _clear_quarantined_secrets(self, provider_id: str, names: Iterable[str]) -> None:
        """Take the cleared credentials ``names`` of ``provider_id`` out of the copies a repair kept in
        ``state/quarantine/<stamp>-memory-providers.json`` too (rewritten atomically, 0600): a key the user
        removed must not live on there. A copy that does not parse as JSON holds no readable field and is
        left as it is (doctor lists it)."""
        import json

        folder = self.registry.state_dir / "quarantine"
        try:
            copies = sorted(p for p in folder.iterdir() if p.name.endswith("-memory-providers.json") and p.is_file()
                            and not p.is_symlink())
        except (FileNotFoundError, NotADirectoryError):
            return
        for copy in copies:
            try:
                doc = json.loads(copy.read_bytes().decode("utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                continue
            service = doc.get("services", {}).get(provider_id) if isinstance(doc, dict) and isinstance(
                doc.get("services"), dict) else None
            if not isinstance(service, dict) or not any(n in service for n in names):
                continue
            for name in names:
                service.pop(name, None)
            fsio.write_file_atomically(copy, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))

    @staticmethod
    def validate_clear_secrets(provider_id: str, clear_secrets: Iterable[str]) -> list[str]:
        """``clear_secrets`` as a list when each names a secret field of the provider, else
        :class:`InvalidInput` (``clearSecrets[<i>]``) listing them."""
        clear = list(clear_secrets)
        secrets = secret_fields(provider_id)
        for index, name in enumerate(clear):
            if name not in secrets:
                raise InvalidInput(f"clearSecrets[{index}]", "names no secret field of " + provider_label(provider_id)
                                   + " (" + (", ".join(sorted(secrets)) or "it has none") + ")")
        return clear

    def sync_namespaces(self, provider_id: str, discovered: Iterable[Mapping[str, Any]], *,
                        renamed: list[dict[str, Any]] | None = None) -> list[SpaceRecord]:
        """Replace ``provider_id``'s projections by the ``discovered`` namespaces atomically (reference 6.2):
        each ``{"externalId", "name"?, "description"?, "connection"?}``; ids ``<providerId>-<24 hex of
        sha256(externalId)>`` (``externalId:<n>`` on collision); existing ids keep ``active`` and
        ``createdAt``; names/descriptions refresh only while ``metadataSource`` is ``provider``; vanished
        namespaces disappear; a repeated externalId rejects the sync. A namespace new to the registry that
        ``disabledSpaces`` remembers (the provider was disabled) gets its active flag and (unless the entry's
        ``metadataSource`` is ``provider``) that name, description and ``metadataSource`` back, and the
        entry is dropped.

        Naming (:mod:`.naming`, the rule ``space create`` applies): no two spaces share an id or a name (ids and
        names compared by :func:`.naming.name_keys`: ignoring case and width, and by confusable skeleton, so a
        namespace named ``Рroject`` in Cyrillic never sits beside a space ``Project``; an id never equal to
        another space's name). The spaces
        of other providers and the native ones (made while this provider was disabled, say) keep theirs;
        this provider's space whose name is taken gets ``"<name> (2)"``... (:func:`.naming.unique_name`) and
        one whose id is taken is re-hashed. A name from the provider is NFKC-normalised with control and
        format characters (:data:`~.model.FORBIDDEN_NAME_CATEGORIES`) dropped. Spaces already mapped claim
        their names before namespaces new to the registry. When ``renamed`` is given, each space this sync
        gave another name or id than it wanted (a mapped space that keeps the name an earlier sync gave it
        is not listed) is appended to it as ``{"spaceId", "externalId", "name", "wantedName"?,
        "wantedId"?, "takenBy": [{"what": "name"|"id", "spaceId", "label"}]}`` (the name/id it would have had,
        and the spaces holding them). Returns the provider's spaces."""
        provider_id = _provider_id(provider_id)
        entries = list(discovered)
        seen: set[str] = set()
        for index, entry in enumerate(entries):
            external = entry.get("externalId") if isinstance(entry, Mapping) else None
            if not isinstance(external, str) or not external.strip():
                raise InvalidInput(f"discovered[{index}].externalId", "is required")
            require_unicode(external, f"discovered[{index}].externalId")
            for key in ("name", "description"):
                if isinstance(entry.get(key), str):
                    require_unicode(entry[key], f"discovered[{index}].{key}")
            if external in seen:
                raise InvalidInput(f"discovered[{index}].externalId", "is repeated in one discovery")
            seen.add(external)
        registry = self.registry
        with registry.locked():
            state = registry.read_locked().require_providers()
            all_bodies = self._all_provider_bodies()
            mine = {b.external_id: b for b in all_bodies if b.provider_id == provider_id}
            found = {entry["externalId"] for entry in entries}
            # spaces made with ``space create --provider`` stay until the provider lists them (an empty
            # namespace is not listed by every engine)
            others = [b for b in all_bodies if b.provider_id != provider_id
                      or (b.metadata_source == "manual" and b.external_id not in found)]
            holders = {}  # key of every id and name already given -> the space holding it
            for body in (*state.bodies, *others):  # every key: confusable names are kept apart too
                for key in name_keys(body.id) | name_keys(body.name):
                    holders.setdefault(key, body)
            changes: list[dict[str, Any]] = []
            label = provider_label(provider_id)
            remembered = parse_disabled_spaces(fsio.read_bytes_or_none(registry.providers_path))
            words = {e["externalId"]: e for e in remembered if e["providerId"] == provider_id}
            used: set[str] = set()
            placed: dict[int, SpaceRecord] = {}
            prepared = []
            for index, entry in enumerate(entries):
                external = entry["externalId"]
                connection = validate_memory_fields(entry.get("connection") or {}, provider_id,
                                                    f"discovered[{index}].connection")
                name = _visible_name(entry.get("name")) or _visible_name(_fallback_name(
                    None, connection, label, external)) or f"{label} namespace"
                description = entry.get("description") if isinstance(entry.get("description"), str) and \
                    entry["description"].strip() else f"{label} memory namespace mapped from {external}."
                prepared.append((index, external, connection, name, description.strip()[:MAX_FIELD_CHARS // 2]))
            # spaces already mapped claim their id and name first, so a namespace new to the registry never
            # takes a name from a space the user knows
            for index, external, connection, name, description in prepared:
                old = mine.get(external)
                if old is None:
                    continue
                keep_meta = old.metadata_source != "provider"
                space_id = old.id if name_key(old.id) not in holders else provider_space_id(
                    provider_id, external, set(holders))
                wanted = old.name if keep_meta else name
                record = replace(old, id=space_id, name=unique_name(set(holders), wanted),
                                 description=old.description if keep_meta else description,
                                 connection=connection, updated_at=monotonic_iso(registry.clock, old.updated_at))
                # reported only when it changed: a name already numbered by an earlier sync stays quiet
                self._claim(holders, record, old.name if record.name == old.name else wanted, old.id, changes)
                placed[index] = record
            for index, external, connection, name, description in prepared:
                if external in mine:
                    continue
                now = iso_ms(registry.clock())
                wanted_id = provider_space_id(provider_id, external, {name_key(r.id) for r in placed.values()})
                candidate = provider_space_id(provider_id, external, set(holders))
                source, active = "provider", False
                if external in words:  # the user's words and flag for this namespace, kept while it was disabled
                    if words[external]["metadataSource"] != "provider":
                        name, description, source = (_visible_name(words[external]["name"]) or name,
                                                     words[external]["description"],
                                                     words[external]["metadataSource"])
                    active = words[external]["active"]
                    used.add(external)
                record = SpaceRecord(candidate, unique_name(set(holders), name), description, active, now, now,
                                     provider_id=provider_id, external_id=external, metadata_source=source,
                                     connection=connection)
                self._claim(holders, record, name, wanted_id, changes)
                placed[index] = record
            result = [placed[index] for index in sorted(placed)]
            all_bodies = (*others, *result)
            new_state = RegistryState(state.bodies, state.services, state.enabled,
                                      tuple(b for b in all_bodies if state.enabled.get(b.provider_id)))
            kept = tuple(e for e in remembered if not (e["providerId"] == provider_id and e["externalId"] in used))
            registry.write_locked(new_state, all_provider_bodies=all_bodies,
                               disabled_spaces=kept if used else None)
            if renamed is not None:
                renamed.extend(changes)
            return result

    @staticmethod
    def _claim(holders: dict[str, SpaceRecord], record: SpaceRecord, wanted_name: str, wanted_id: str,
               changes: list[dict[str, Any]]) -> None:
        """Record in ``changes`` whether ``record`` got another name or id than it wanted (and which space
        holds the wanted one), then give its id and name to it in ``holders``."""
        change: dict[str, Any] = {}
        taken_by = []
        for what, wanted, got in (("name", wanted_name, record.name), ("id", wanted_id, record.id)):
            if got != wanted:
                change[f"wanted{what.title()}"] = wanted
                holder = holders.get(name_key(wanted)) or next(
                    (holders[k] for k in sorted(name_keys(wanted)) if k in holders), None)
                if holder is not None:
                    taken_by.append({"what": what, "spaceId": holder.id, "label": space_label(holder)})
        if change:
            changes.append({"spaceId": record.id, "externalId": record.external_id, "name": record.name, **change,
                            "takenBy": taken_by})
        for key in name_keys(record.id) | name_keys(record.name):
            holders.setdefault(key, record)

    def add_provider_space(self, provider_id: str, external_id: str, name: str, description: str, *,
                           connection: Mapping[str, Any], active: bool = False) -> SpaceRecord:
        """Register a namespace made with ``space create --provider`` (``metadataSource`` ``manual``, id
        ``<providerId>-<24 hex of sha256(externalId)>``, re-hashed with ``:<n>`` on collision). The provider
        must be enabled; a namespace already mapped is :class:`InvalidInput` (``name``). Discovery keeps
        such a space even while the provider does not list the namespace (an empty one)."""
        provider_id = _provider_id(provider_id)
        clean = validate_memory_fields(connection, provider_id)
        registry = self.registry
        with registry.locked():
            state = registry.read_locked().require_providers()
            if not state.enabled.get(provider_id):
                raise InvalidInput("provider",
                                   f"{provider_id} is not enabled (mnemon-ls provider enable {provider_id})")
            all_bodies = self._all_provider_bodies()
            if any(b.provider_id == provider_id and b.external_id == external_id for b in all_bodies):
                raise InvalidInput("name", f"names a {provider_label(provider_id)} namespace that is already a space",
                                   externalId=external_id)
            taken = {k for b in (*state.bodies, *all_bodies) for k in (name_key(b.id), name_key(b.name))}
            candidate = provider_space_id(provider_id, external_id, taken)
            now = iso_ms(registry.clock())
            record = SpaceRecord(candidate, name, description, bool(active), now, now, provider_id=provider_id,
                                 external_id=external_id, metadata_source="manual", connection=clean)
            all_bodies = (*all_bodies, record)
            new_state = RegistryState(state.bodies, state.services, state.enabled,
                                      tuple(b for b in all_bodies if state.enabled.get(b.provider_id)))
            registry.write_locked(new_state, all_provider_bodies=all_bodies)
            return record

    def service_view(self, state: RegistryState | None, provider_id: str) -> dict[str, Any]:
        """``{"providerId", "label", "enabled", "configuredFields", "configuredSecrets", "spaces"}``: field
        names only, never values."""
        state = state or self.registry.read()
        fields = state.services.get(provider_id, {})
        secrets = secret_fields(provider_id)
        return {"providerId": provider_id, "label": provider_label(provider_id),
                "enabled": bool(state.enabled.get(provider_id)),
                "configured": provider_id in state.services,
                "configuredFields": sorted(k for k in fields if k not in secrets),
                "configuredSecrets": sorted(k for k in fields if k in secrets),
                "spaces": sum(1 for b in state.provider_bodies if b.provider_id == provider_id)}

    def _all_provider_bodies(self) -> tuple[SpaceRecord, ...]:
        """Provider spaces on disk including those of disabled providers (call under the lock)."""
        try:
            return parse_providers(fsio.read_bytes_or_none(self.registry.providers_path))[2]
        except (_Damaged, _TooNew):
            return ()


def _visible_name(value: Any) -> str:
    """A name a provider gave, as a space name is stored (:func:`~.model.validate_name`): NFKC-normalised,
    control, format and line-separator characters dropped (the provider's name is not the user's input to
    refuse), white space collapsed, at most 100 characters; ``""`` when nothing visible is left."""
    if not isinstance(value, str):
        return ""
    text = "".join(" " if c.isspace() else "" if unicodedata.category(c) in FORBIDDEN_NAME_CATEGORIES else c
                   for c in unicodedata.normalize("NFKC", value))
    return " ".join(text.split())[:100]
