"""What becomes of a damaged space registry file (rules in :mod:`.registry`'s module doc): the repair that
quarantines it, salvages every readable space and rewrites it (:func:`repair_locked`), and the doctor's findings
about the copies a repair kept (:func:`quarantine_findings`, :func:`damage_reason`).

A damaged catalog (``data/.dsh-memory-bodies.json``) is copied to ``data/.quarantine/<stamp>-<name>`` and its
spaces are salvaged from a lenient scan of the damaged text (a field the damage broke taken from the same space
in the last-good copy), then from the last-good copy (those whose store is still on disk); a damaged provider
file (``state/memory-providers.json``) to ``state/quarantine/<stamp>-<name>``, keeping every complete service
entry and enabled flag before the damage. :func:`repair_locked` reaches the
registry only through :class:`RepairedRegistry`.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Protocol

from .. import fsio
from .registry_model import (
    NATIVE_FILE,
    PROVIDERS_FILE,
    Problem,
    RegistryState,
    SpaceRecord,
    _Damaged,
    _TooNew,
    _native_record,
    _salvage_providers,
    parse_native,
    parse_providers,
)
from ..salvage import json_objects


class RepairedRegistry(Protocol):
    """What :func:`repair_locked` uses of its :class:`~.registry.SpaceRegistry`: the file paths, the clock,
    the notices it appends to, and the registry's provider-file parse, discovery and write path (see the
    registry's attributes and methods of these names)."""

    data_dir: Path
    state_dir: Path
    native_path: Path
    providers_path: Path
    last_good_path: Path
    clock: Callable[[], datetime]
    notices: list[Problem]

    def store_path(self, space_id: str) -> Path: ...

    def parse_providers_file(self, data: bytes | None | bool = False) -> tuple[tuple, Any]: ...

    def parse_native_file(self, data: bytes | None | bool = False) -> tuple[tuple[SpaceRecord, ...], Any]: ...

    def discovered(self, state: RegistryState) -> list[SpaceRecord]: ...

    def write_locked(self, state: RegistryState, *, all_provider_bodies: tuple[SpaceRecord, ...] | None = None,
                     keep_providers_file: bool = False,
                     disabled_spaces: tuple[dict[str, Any], ...] | None = None) -> None: ...


def repair_locked(registry: RepairedRegistry) -> RegistryState:
    """Quarantine whichever of ``registry``'s files is damaged, salvage, rewrite (call under the registry's
    lock); record a :class:`~.registry_model.Problem` per damaged file in ``registry.notices``. Returns the
    state written (discovered stores included). Raises :class:`OSError` when a copy or the rewrite fails."""
    stamp = fsio.file_stamp(registry.clock())
    native_data = fsio.read_bytes_or_none(registry.native_path)
    providers_data = fsio.read_bytes_or_none(registry.providers_path)
    native_refused = None
    try:  # a catalog of a newer version is read-only: never quarantined, rebuilt or rewritten (write_locked)
        bodies, native_refused = registry.parse_native_file(native_data)
    except _Damaged as damage:
        last_good = _last_good(registry.last_good_path)
        bodies = salvage_native(native_data or b"", registry.clock, last_good)
        kept = fsio.copy_file_exclusive(registry.data_dir / ".quarantine", f"{stamp}-{NATIVE_FILE}",
                                        native_data or b"")
        on_disk = {b.id for b in bodies}
        extra = [b for b in last_good if b.id not in on_disk and registry.store_path(b.id).is_file()]
        bodies = (*bodies, *extra)
        registry.notices.append(Problem(str(registry.native_path), damage.reason, str(kept), len(bodies)))
    providers_damaged, refused = False, None
    try:
        (services, enabled, provider_bodies), refused = registry.parse_providers_file(providers_data)
    except _Damaged as damage:
        providers_damaged = True
        services, enabled, provider_bodies = _salvage_providers(providers_data or b"")
        kept = fsio.copy_file_exclusive(registry.state_dir / "quarantine", f"{stamp}-{PROVIDERS_FILE}",
                                        providers_data or b"")
        registry.notices.append(Problem(str(registry.providers_path), damage.reason, str(kept),
                                        len(provider_bodies)))
    enabled_bodies = tuple(b for b in provider_bodies if enabled.get(b.provider_id))
    state = RegistryState(tuple(bodies), services, enabled, enabled_bodies, providers_refused=refused,
                          native_refused=native_refused)
    discovered = registry.discovered(state)
    state = replace(state, bodies=(*state.bodies, *discovered))
    # a repaired provider file stays (with what was salvaged): its credentials never live only in quarantine
    registry.write_locked(state, all_provider_bodies=provider_bodies, keep_providers_file=providers_damaged)
    return state


def salvage_native(data: bytes, clock: Callable[[], datetime],
                   last_good: tuple[SpaceRecord, ...] = ()) -> tuple[SpaceRecord, ...]:
    """The spaces a lenient scan finds in the damaged catalog text ``data`` (UTF-8, undecodable bytes
    replaced): each JSON object that makes a valid record, the first of each id. A field the damage broke
    comes from the same space in ``last_good`` (the last-good copy's spaces) when it is there; ``clock``
    stamps a record that lacks its times otherwise."""
    before = {r.id: r for r in last_good}
    out: list[SpaceRecord] = []
    for raw in json_objects(data.decode("utf-8", "replace")):
        ident = raw.get("id") if isinstance(raw, dict) else None
        record = _native_record(raw, lenient=True, clock=clock,
                                fallback=before.get(ident.strip()) if isinstance(ident, str) else None)
        if record is not None and not any(r.id == record.id for r in out):
            out.append(record)
    return tuple(out)


def _last_good(path: Path) -> tuple[SpaceRecord, ...]:
    """The spaces of the last-good catalog copy at ``path``; none when it is missing, damaged or of a newer
    version."""
    try:
        return parse_native(fsio.read_bytes_or_none(path))
    except (_Damaged, _TooNew):
        return ()


def quarantine_findings(root: Path) -> list[Any]:
    """Doctor findings (:class:`~mnemon_ls.findings.Finding`, level ``warning``) for each damaged registry
    file a repair moved aside under ``root`` (``state/quarantine/<stamp>-memory-providers.json``,
    ``data/.quarantine/<stamp>-.dsh-memory-bodies.json``): the rebuilt file holds only what could be
    salvaged, so what was lost (services, enabled flags, names) may be only in that copy. The message names
    why the copy was damaged (the JSON path and the rule, :func:`damage_reason`, e.g. ``services.holographic.
    minTrust: must be a JSON number, not true/false (...)``). Reads the directory listings and each copy (at
    most :data:`MAX_REASON_BYTES` bytes of it); writes nothing."""
    from ..findings import Finding

    out = []
    for path, name in quarantined_copies(root):
        reason = damage_reason(path, providers=name == PROVIDERS_FILE)
        out.append(Finding("warning", f"spaces {name}",
                           f"a damaged {name}{f' ({reason})' if reason else ''} was rebuilt from what could be "
                           f"salvaged; the damaged copy is kept at {path}",
                           "compare it with the rebuilt file, restore by hand what is missing (provider "
                           "services, enabled flags, space names), then delete the copy"))
    return out


def quarantined_copies(root: Path) -> list[tuple[Path, str]]:
    """``[(copy, registry file name)]``: the damaged registry files a repair moved aside under ``root`` and that
    are still there (``state/quarantine/<stamp>-memory-providers.json``, ``data/.quarantine/<stamp>-.dsh-memory-
    bodies.json``), oldest first per file. Reads two directory listings; writes nothing."""
    found = []
    for folder, name in (("state/quarantine", PROVIDERS_FILE), ("data/.quarantine", NATIVE_FILE)):
        try:  # every recall asks: one listdir of a folder that usually does not exist, no Path per entry first
            names = os.listdir(os.path.join(root, folder))
        except OSError:
            continue
        found.extend((root / folder / entry, name) for entry in sorted(names) if entry.endswith(f"-{name}"))
    return found


def repair_notice(copy: Path, name: str) -> str:
    """The one line a read (``space list``, ``recall``) shows while ``copy``, a damaged ``name`` a repair moved
    aside, is kept: what happened and where to look (``mnemon-ls doctor`` names why it was damaged)."""
    return (f"a damaged {name} was rebuilt from what could be salvaged; the damaged copy is kept at {copy} "
            "(`mnemon-ls doctor` says more; delete the copy once the rebuilt file has what you need)")


#: The most of a quarantined copy :func:`damage_reason` reads (bytes); a larger copy gets no reason.
MAX_REASON_BYTES = 4 * 1024 * 1024


def damage_reason(path: Path, *, providers: bool) -> str | None:
    """Why the quarantined registry copy ``path`` is damaged, as its parser says it (``<json path>: <rule>``;
    ``providers``: a ``memory-providers.json`` copy, else a ``.dsh-memory-bodies.json`` one), or ``None``
    when it cannot be read, is larger than :data:`MAX_REASON_BYTES`, parses now (e.g. the provider package
    that declared a field's type is no longer installed) or was written by a newer version."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_REASON_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_REASON_BYTES:
        return None
    try:
        (parse_providers if providers else parse_native)(data)
    except _Damaged as damage:
        return damage.reason
    except _TooNew:
        return None
    return None
