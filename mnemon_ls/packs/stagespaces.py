"""Staging of the memory-spaces component of a pack import (:mod:`.importer`, reference section 9).

``merge``: a pack space with the id of a native space here and the same store (:func:`.stores.same_store`)
is already here (``skipped``); one whose id is taken otherwise (another store, a third-party space, a name)
comes in under a new UUID id (``renamed``); the rest is ``added``; every new store directory and the new
catalog are staged and swapped in one by one. ``replace``: the pack's native spaces become ``data/`` (one
directory swap); a pack space with the id and store of a native space here is ``skipped`` (it stays), the
other native spaces are ``removed``; the stores of deleted spaces (``data/.deleted/``) and the quarantined
catalogs (``data/.quarantine/``) are copied into the new ``data/`` (kept, as a documents replace keeps
``quarantine/``); a pack without spaces is refused for a root that has stores (``would-empty``). Names are made
unique and the active flags settled (:func:`_settle_names_and_flags`),
``<root>/active`` repaired (:func:`_active_store`), every staged store opened once and redacted under
``secrets`` (:func:`_check_and_redact_spaces`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .. import fsio
from ..errors import MnemonError, PackInvalid, PackRefused
from ..spaces.deleted import DELETED_DIR
from ..spaces.model import SPACE_ID_RE
from ..spaces.registry_model import LAST_GOOD_FILE, LOCK_FILE, NATIVE_FILE, SpaceRecord
from .staging import copy_tree
from .stores import any_secret, same_store, store_has_secret
from .validate import Pack, PackSpace

if TYPE_CHECKING:
    from ..hosting import Host
    from .plan import ImportPlan


def _catalog_bytes(records: Sequence[SpaceRecord]) -> bytes:
    doc = {"version": 1, "bodies": [r.to_native_json() for r in records]}
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def stage_spaces(host: "Host", pack: Pack, mode: str, plan: "ImportPlan", stage: Path) -> None:
    """Stage the memory-spaces component of ``pack`` (module doc; :mod:`.importer` swaps ``plan.pairs``)."""
    from ..spaces.registry import SpaceRegistry

    root = host.root
    data_dir = root / "data"
    registry = SpaceRegistry(root)
    if data_dir.is_dir():
        state = registry.read().require_native()  # a newer version's catalog is never replaced (FormatTooNew)
        native, provider_ids = list(state.bodies), {b.id for b in state.provider_bodies}
        providers = list(state.provider_bodies)
        store_dirs = registry.store_dirs()
    else:
        native, provider_ids, store_dirs, providers = [], set(), [], []
    incoming = list(pack.spaces or ())
    report: dict[str, Any] = {"added": 0, "skipped": 0, "renamed": [], "removed": 0, "nameChanged": [],
                              "arrivedInactive": []}
    if mode == "replace" and not incoming and store_dirs:
        raise PackRefused(f"the pack holds no Memory Space and would empty the {len(store_dirs)} native store(s) of "
                          f"{root}; nothing was imported (use merge, or a pack with spaces)", reason="would-empty")
    added: list[PackSpace] = []
    if mode == "merge":
        from ..spaces.naming import name_key

        # ids are matched ignoring case and may not be another space's name (mnemon_ls.spaces.naming)
        taken = {name_key(i) for i in ({b.id for b in native} | provider_ids | set(store_dirs))}
        taken |= {name_key(b.name) for b in (*native, *providers)}
        for space in incoming:
            record = space.record
            if name_key(record.id) in taken:
                existing = data_dir / record.id / "mnemon.db"
                if record.id in {b.id for b in native} and existing.is_file() and same_store(
                        existing, space.db, stage, read_copy=plan.dry_run):
                    report["skipped"] += 1
                    continue
                record = _under_new_id(record, report)
            taken.add(name_key(record.id))
            added.append(dataclasses.replace(space, record=record))
    else:
        from ..spaces.naming import name_key

        # the third-party spaces stay: a pack space whose id is one of theirs (ignoring case), or one of their
        # names, comes in under a new id, as in a merge (two spaces must never share an id)
        provider_taken = {name_key(i) for i in provider_ids} | {name_key(b.name) for b in providers}
        renamed_in: list[PackSpace] = []
        for space in incoming:
            record = space.record
            if name_key(record.id) in provider_taken:
                record = _under_new_id(record, report)
            provider_taken.add(name_key(record.id))
            renamed_in.append(dataclasses.replace(space, record=record))
        incoming = renamed_in
        kept_here: set[str] = set()  # native spaces whose store the pack carries unchanged (same id)
        native_ids = {b.id for b in native}
        for space in incoming:
            existing = data_dir / space.record.id / "mnemon.db"
            if space.record.id in native_ids and existing.is_file() and same_store(
                    existing, space.db, stage, read_copy=plan.dry_run):
                kept_here.add(space.record.id)
        report["removed"] = len(native_ids - kept_here)
        report["skipped"] = len(kept_here)
        added = incoming
    added = _settle_names_and_flags(added, [*native, *providers] if mode == "merge" else providers, report)
    staged_root = stage / "spaces-root"
    for space in added:
        fsio.create_file_durably(staged_root / "data" / space.record.id / "mnemon.db", space.db)
    fsio.create_file_durably(staged_root / "data" / NATIVE_FILE, _catalog_bytes([s.record for s in added]))
    added_records = _check_and_redact_spaces(host, staged_root, [s.record for s in added])
    # each pack space is one outcome: added, already here (``skipped``) or under a new id (``renamed``)
    report["added"] = len(added_records) - len(report["renamed"]) - (report["skipped"] if mode == "replace" else 0)
    final = [*native, *added_records] if mode == "merge" else added_records
    catalog = _catalog_bytes(final)
    active = _active_store(root, final)
    report["activeSpaces"] = sum(1 for r in [*final, *providers] if r.active)
    plan.receipt["spaces"] = report
    plan.receipt["activeStore"] = active or _current_active(root)
    if mode == "merge" and not added_records and active is None:
        return  # nothing comes in: data/, the catalog and the last-good copy are left exactly as they are
    if mode == "merge":
        for record in added_records:
            plan.pairs.append((staged_root / "data" / record.id, data_dir / record.id))
        staged_catalog = stage / "catalog" / NATIVE_FILE
        fsio.create_file_durably(staged_catalog, catalog)
        plan.pairs.append((staged_catalog, data_dir / NATIVE_FILE))
    else:
        staged_data = staged_root / "data"
        for kept in (DELETED_DIR, ".quarantine"):  # not memory the pack replaces: copies a person may still need
            if (data_dir / kept).is_dir() and not (data_dir / kept).is_symlink():
                copy_tree(data_dir / kept, staged_data / kept, lambda _name: False)
        os.unlink(staged_data / NATIVE_FILE)
        fsio.create_file_durably(staged_data / NATIVE_FILE, catalog)
        plan.links.append((data_dir / LOCK_FILE, staged_data / LOCK_FILE))
        plan.pairs.append((staged_data, data_dir))
    staged_last_good = stage / "last-good" / LAST_GOOD_FILE
    fsio.create_file_durably(staged_last_good, catalog)
    plan.pairs.append((staged_last_good, root / "state" / LAST_GOOD_FILE))
    if active is not None:
        staged_active = stage / "active-file" / "active"
        fsio.create_file_durably(staged_active, (active + "\n").encode("utf-8"))
        plan.pairs.append((staged_active, root / "active"))


def _settle_names_and_flags(added: list[PackSpace], kept: Sequence[SpaceRecord],
                            report: dict[str, Any]) -> list[PackSpace]:
    """The incoming spaces made to fit the root's rules. Names are unique within a root ignoring case and
    width and by confusable skeleton (:func:`mnemon_ls.spaces.naming.name_keys`: Cyrillic ``Р`` for Latin
    ``P`` is taken too): a name taken by a ``kept`` space or an earlier incoming one becomes
    ``"<name> (2)"`` (:func:`~mnemon_ls.spaces.naming.unique_name`, the rule of ``migrate``), listed in
    ``report["nameChanged"]`` as ``{spaceId, from, to}``. The reference (section 9) is silent on the active
    flag: an import must not change which spaces are active, so when ``kept`` holds an active space the
    incoming active ones arrive inactive (``report["arrivedInactive"]``: their ids); otherwise the pack's
    flags are kept."""
    from ..spaces.naming import name_keys, unique_name

    taken: set[str] = set()
    for kept_record in kept:
        taken |= name_keys(kept_record.name) | name_keys(kept_record.id)
    id_keys = {s.record.id: name_keys(s.record.id) for s in added}
    root_has_active = any(r.active for r in kept)
    settled: list[PackSpace] = []
    for space in added:
        record = space.record
        # the other incoming spaces' ids are taken too (a space's own id may be its name)
        others = {k for other, keys in id_keys.items() if other != record.id for k in keys}
        name = unique_name(taken | others, record.name)
        taken |= name_keys(name) | id_keys[record.id]
        changes: dict[str, Any] = {}
        if name != record.name:
            changes["name"] = name
            report["nameChanged"].append({"spaceId": record.id, "from": record.name, "to": name})
        if record.active and root_has_active:
            changes["active"] = False
            report["arrivedInactive"].append(record.id)
        if changes:
            record = dataclasses.replace(record, **changes)
        settled.append(dataclasses.replace(space, record=record))
    return settled


def _current_active(root: Path) -> str | None:
    try:
        text = (root / "active").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if SPACE_ID_RE.match(text) else None


def _active_store(root: Path, final: Sequence[SpaceRecord]) -> str | None:
    """The ``<root>/active`` value to write, or ``None`` to leave the file as it is (reference section 9)."""
    ids = [r.id for r in final]
    if not ids:
        return None
    current = _current_active(root)
    if current in ids or (current is None and "default" in ids and not (root / "active").exists()):
        return None
    if "default" in ids:
        return "default"
    return next((r.id for r in final if r.active), ids[0])


def _under_new_id(record: SpaceRecord, report: dict[str, Any]) -> SpaceRecord:
    """``record`` under a fresh UUID id (its id is taken here), listed in ``report["renamed"]`` as
    ``{from, to}``."""
    new_id = str(uuid.uuid4())
    report["renamed"].append({"from": record.id, "to": new_id})
    return SpaceRecord(new_id, record.name, record.description, record.active, record.created_at,
                       record.updated_at, placement=record.placement)


def secrets_pass(redaction: Any, source: Any, mode: str) -> bool:
    """The ``secrets`` setting's pass over a staged Source (``redaction`` the Source's module:
    :mod:`mnemon_ls.documents.redaction` or :mod:`mnemon_ls.spaces.redaction`, each with ``scan(source)``
    -> ``[{location, kind, ...}]`` and ``apply(source)``): ``reject`` raises :class:`PackRefused` (reason
    ``secret``) naming the first finding, ``redact`` applies the redaction and returns True; ``reject``
    with nothing found returns False (nothing changed)."""
    if mode == "reject":
        found = redaction.scan(source)
        if found:
            raise PackRefused(f"{found[0]['location']}: holds what looks like a credential ({found[0]['kind']}); "
                              "nothing was imported (secrets is reject)", reason="secret", **found[0])
        return False
    redaction.apply(source)
    return True


def _check_and_redact_spaces(host: "Host", staged_root: Path,
                             records: list[SpaceRecord]) -> list[SpaceRecord]:
    """Open each staged store once as a Mnemon store (:class:`PackInvalid` when it is not one), run the
    redaction pass of ``secrets`` on the staged stores and catalog, return the (redacted) records."""
    from ..spaces import SpacesService
    from ..spaces import redaction
    from ..spaces.providers.native import NativeProvider

    for record in records:
        db_path = staged_root / "data" / record.id / "mnemon.db"
        provider = NativeProvider(db_path, space_id=record.id, create=False, track_access=False)
        try:
            provider.count()
        except (MnemonError, Exception) as exc:
            message = exc.message if isinstance(exc, MnemonError) else str(exc)
            raise PackInvalid(f"entry:payload/data/{record.id}/mnemon.db",
                              f"is not a Mnemon store ({message})") from None
        finally:
            provider.close()
    mode = host.settings.secrets
    names = [t for r in records for t in (r.name, r.description)]
    if mode == "allow" or not records or not (any_secret(names) or any(
            store_has_secret(staged_root / "data" / r.id / "mnemon.db") for r in records)):
        return records
    service = SpacesService(staged_root, secrets=mode)
    try:
        if not secrets_pass(redaction, service, mode):
            return records
        by_id = {b.id: b for b in service.state().bodies}
    finally:
        service.close()
    return [by_id.get(r.id, r) for r in records]
