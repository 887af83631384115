"""Deleted native stores, kept aside: ``space delete`` never erases a ``mnemon.db``.

Deleting a native space moves its whole store directory (``data/<id>/``: ``mnemon.db`` with its ``-wal`` and
``-shm``, the side index, the vectors) to ``data/.deleted/<stamp>-<id>/`` (``<stamp>``:
:func:`mnemon_ls.fsio.file_stamp`, UTC, e.g. ``20261207T091500.123Z``) and writes the space's catalog entry
beside it as ``data/.deleted/<stamp>-<id>.json`` (``{id, name, description, active, createdAt, updatedAt,
deletedAt}``: the words a restore gives back). The folder name starts with a dot, so it never matches the
store-name rule (``^[a-zA-Z0-9][a-zA-Z0-9_-]*$``): neither discovery (:mod:`.registry`) nor the Mnemon CLI's
``store list`` takes it for a store, as with ``data/.quarantine/``.

Restoring is a manual move back (docs/storage.md): ``mv data/.deleted/<stamp>-<id> data/<id>``; the next
command discovers the store and registers it under its id (``space update <id> --name ... --description ...``
gives it back its words, from the ``.json`` beside the copy). Delete the copy when it is no longer needed.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING

from .. import fsio
from ..errors import InvalidInput
from .model import iso_ms
from .registry_model import parse_native

if TYPE_CHECKING:
    from .registry import SpaceRegistry

#: The folder under ``data/`` that holds deleted stores (module doc).
DELETED_DIR = ".deleted"


def _free_path(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name-2``, ``name-3``... when taken (two deletes of one id in one millisecond)."""
    candidate, n = folder / name, 1
    while os.path.lexists(candidate) or os.path.lexists(f"{candidate}.json"):
        n += 1
        candidate = folder / f"{name}-{n}"
    return candidate


def set_aside(registry: SpaceRegistry, space_id: str) -> Path | None:
    """Unregister the native space ``space_id`` and move its store directory to ``data/.deleted/`` (module
    doc), all or nothing, under the registry lock (so discovery never sees the store between the two steps):
    rename ``data/<id>`` to ``data/.deleted/<stamp>-<id>``, write the entry's ``.json`` beside it, then write
    the catalog without the space (its rename is the commit). When anything fails before the commit, the
    directory is renamed back and the ``.json`` removed, and the error is raised: the space stays registered
    with its store in place. Returns the copy's absolute path, or ``None`` when the space had no store
    directory (nothing to keep). Raises :class:`InvalidInput` (``spaceId``) when the space is not registered,
    :class:`~mnemon_ls.errors.StoreBusy` when the lock is not taken in time, :class:`OSError` (a
    :class:`~mnemon_ls.errors.StorageError`) when the move or the writes fail."""
    with registry.locked():
        state = registry.read_locked()
        record = state.find(space_id)
        if record is None:
            state.require_native()
            raise InvalidInput("spaceId", "is not a registered space", spaceId=space_id)
        moment = registry.clock()
        source = registry.data_dir / space_id
        copy = entry = None
        if source.is_dir() and not source.is_symlink():
            folder = registry.data_dir / DELETED_DIR
            fsio.ensure_dir(folder)
            copy = _free_path(folder, f"{fsio.file_stamp(moment.astimezone(timezone.utc))}-{space_id}")
            entry = Path(f"{copy}.json")
            os.rename(source, copy)
        try:
            if copy is not None and entry is not None:
                words = {**record.to_native_json(), "deletedAt": iso_ms(moment)}
                fsio.create_file_durably(entry, (json.dumps(words, ensure_ascii=False, indent=2) + "\n")
                                         .encode("utf-8"))
            registry.write_locked(replace(state, bodies=tuple(b for b in state.bodies if b.id != space_id)))
        except BaseException:
            try:
                committed = all(b.id != space_id for b in parse_native(fsio.read_bytes_or_none(registry.native_path)))
            except Exception:  # noqa: BLE001 - a catalog that does not parse holds no commit of ours
                committed = False
            if not committed and copy is not None:
                os.rename(copy, source)
                if entry is not None and entry.exists():
                    entry.unlink()
            raise
        if copy is not None:
            fsio.fsync_dir(copy.parent)
            fsio.fsync_dir(registry.data_dir)
        return copy
