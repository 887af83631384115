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
gives it back its words, from the ``.json`` beside the copy). ``space list`` and ``doctor`` name the kept stores
(:func:`kept_summary`, :func:`kept_line`); ``space purge-deleted --confirm`` removes them for good (:func:`purge`).
"""

from __future__ import annotations

import json
import os
import re
import stat
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


#: A kept store's folder name: ``<stamp>-<id>`` (``-<n>`` when two deletes of one id met in one millisecond).
_KEPT_NAME = re.compile(r"^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[a-zA-Z0-9][a-zA-Z0-9_-]*$")


def _tree_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (``lstat`` sizes; a symbolic link counts as itself, never followed)."""
    total = 0
    for folder, dirs, files in os.walk(path, followlinks=False):
        for name in (*files, *dirs):
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                total += info.st_size
    return total


def kept_stores(data_dir: Path) -> list[Path]:
    """The deleted spaces' stores kept in ``data_dir/.deleted/`` (the ``<stamp>-<id>`` folders :func:`set_aside`
    made, oldest first); ``[]`` when there is none or the folder cannot be listed. Reads one listing."""
    folder = data_dir / DELETED_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [folder / n for n in names if _KEPT_NAME.match(n) and (folder / n).is_dir()
            and not (folder / n).is_symlink()]


def kept_summary(data_dir: Path) -> dict[str, object] | None:
    """``{count, bytes, path}`` of the kept stores (:func:`kept_stores`; ``bytes``: their files' sizes with the
    ``.json`` beside each, ``path``: the ``.deleted`` folder), or ``None`` when none is kept."""
    return _summary(data_dir, kept_stores(data_dir))


def _summary(data_dir: Path, kept: list[Path]) -> dict[str, object] | None:
    """:func:`kept_summary` of the stores ``kept`` (one listing of ``data_dir/.deleted/``, already read)."""
    if not kept:
        return None
    size = 0
    for copy in kept:
        size += _tree_bytes(copy)
        try:
            size += os.lstat(f"{copy}.json").st_size
        except OSError:
            pass
    return {"count": len(kept), "bytes": size, "path": str(data_dir / DELETED_DIR)}


def size_words(size: int) -> str:
    """``size`` bytes for a person: ``512 bytes``, ``3.4 KiB``, ``12.0 MiB``, ``1.2 GiB``."""
    if size < 1024:
        return f"{size} byte{'' if size == 1 else 's'}"
    value, unit = float(size), "bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024:
            break
    return f"{value:.1f} {unit}"


def stores_words(count: int) -> str:
    """``space's store`` (one) or ``spaces' stores`` (any other count)."""
    return "space's store" if count == 1 else "spaces' stores"


def kept_line(summary: dict[str, object]) -> str:
    """The sentence that names the kept stores (:func:`kept_summary`) on ``space list`` and in ``doctor``."""
    count, size = int(summary["count"]), int(summary["bytes"])  # type: ignore[call-overload]
    return (f"{count} deleted {stores_words(count)} "
            f"({size_words(size)}) {'is' if count == 1 else 'are'} kept in {summary['path']}: "
            f"`mnemon-ls space purge-deleted --confirm` removes {'it' if count == 1 else 'them'} for good (to restore "
            "one, move its folder back to data/<id>)")


def purge(registry: SpaceRegistry) -> dict[str, object]:
    """Remove the kept stores of deleted spaces for good (:func:`kept_stores`, each folder with the ``.json``
    beside it), under the registry lock (a delete setting one aside meanwhile waits). Anything else in
    ``.deleted/`` stays. Returns ``{removed, bytes, path, message}``. Raises :class:`OSError` (a
    :class:`~mnemon_ls.errors.StorageError`) when a removal fails: what was removed before stays removed, the
    rest stays kept (a second run removes it); :class:`~mnemon_ls.errors.StoreBusy` when the lock is not taken
    in time."""
    import shutil

    with registry.locked():
        kept = kept_stores(registry.data_dir)  # one listing: what is counted is what is removed
        summary = _summary(registry.data_dir, kept)
        for copy in kept:
            shutil.rmtree(copy)
            try:
                os.unlink(f"{copy}.json")
            except FileNotFoundError:
                pass
        if kept:
            fsio.fsync_dir(registry.data_dir / DELETED_DIR)
    removed = len(kept)
    size = int(summary["bytes"]) if summary else 0  # type: ignore[call-overload]
    where = str(registry.data_dir / DELETED_DIR)
    message = (f"Removed {removed} deleted {stores_words(removed)} "
               f"({size_words(size)}) from {where} for good." if removed else
               f"No deleted space's store is kept in {where}; nothing was removed.")
    return {"removed": removed, "bytes": size, "path": where, "message": message}
