"""The backup a ``replace`` import keeps of what it replaces, and the default folder of exported packs.

Backups: before a ``replace`` import swaps anything, the current content of the components it replaces
is exported as a Mnemon Pack (the same code and deterministic format as ``pack export``,
:func:`.export.export_held`, while the import holds every lock, so the backup is exactly the state the
swap replaces) and written durably to ``<root>/state/pack-backups/mnemon-backup-<time>.zip`` (directory
0700, file 0600). The newest :data:`KEEP` backups of a root are kept; older ones are removed after a
successful import. A backup that cannot be made (a store whose WAL cannot be checkpointed, a full disk,
an unwritable folder) refuses the import (:class:`~mnemon_ls.errors.PackRefused`, reason
``backup-failed``) before anything is swapped; a swap that fails and is rolled back removes its backup
again, so a refused import leaves the folder as it was. The backup carries the user profile only when the
import replaces it. Restoring is one command (``restore`` in the receipt):
``mnemon-ls pack import <backup> --replace --component ... [--replace-user-profile]``.

Exports: ``mnemon-ls pack export`` without ``-o`` writes to :func:`export_dir`, ``<global root>/state/
pack-exports/`` (``~/.mnemon/state/pack-exports`` unless ``MNEMON_DATA_DIR``, or ``--data-dir`` with ``--scope global``,
says otherwise; 0700), never
into the current directory, which is usually a git work tree where ``git add .`` would commit the memory.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .. import fsio
from ..errors import MnemonError, PackRefused
from . import format as fmt

if TYPE_CHECKING:
    from ..hosting import Host

#: How many backups of one root are kept (the newest).
KEEP = 5
BACKUP_DIR = ("state", "pack-backups")
EXPORT_DIR = ("state", "pack-exports")
_PREFIX = "mnemon-backup-"


def backup_dir(root: Path) -> Path:
    """``<root>/state/pack-backups``: where the replace imports into ``root`` keep their backups."""
    return root.joinpath(*BACKUP_DIR)


def export_dir(host: "Host") -> Path:
    """``<global root>/state/pack-exports``: the default folder of ``pack export`` (module doc); the global root
    is the ``dataDir`` with ``storageScope=global`` (``host.global_env``, :func:`mnemon_ls.roots.global_env`)."""
    from ..roots import global_root

    return global_root(host.global_env).joinpath(*EXPORT_DIR)


def default_export_path(host: "Host", file_name: str | None = None) -> Path:
    """Where an export with no file named goes: ``<export_dir>/<file_name>`` (default the reference's
    ``mnemon-backup-<time>.zip`` of now), the folder made (0700) if missing. For the CLI's ``pack export``
    without ``-o`` and the editors' proposed file (``mnemon/pack/exportFolder``)."""
    folder = export_dir(host)
    fsio.ensure_dir(folder)
    return Path(os.path.abspath(folder / (file_name or fmt.pack_file_name(datetime.now(timezone.utc)))))


def write_export(host: "Host", data: bytes, target: Path) -> Path:
    """Write an exported pack's ``data`` to ``target`` (absolute) with
    :func:`~.export.write_pack_file`'s rules: never inside a storage root of ``host``, except directly in
    :func:`export_dir` (the packs' own folder). Returns ``target``; :class:`InvalidInput` (``output``) as
    ``write_pack_file`` raises it."""
    from .export import pack_roots, write_pack_file

    write_pack_file(target, data, pack_roots(host), allowed=[export_dir(host)])
    return target


def _scope_of(chosen: Sequence[str]) -> str:
    """The export scope holding every ``chosen`` component (``full`` for two or more)."""
    return chosen[0] if len(chosen) == 1 else "full"


def restore_command(host: "Host", path: Path, chosen: Sequence[str], user_profile: bool) -> str:
    """The ``mnemon-ls`` command line that puts the backup at ``path`` back in place of ``chosen``, naming
    the same workspace and storage settings as ``host`` (shell-quoted), prefixed with
    ``MNEMON_DATA_DIR=<global root>`` when the global root is not the default ``~/.mnemon``."""
    settings = host.settings
    argv = ["mnemon-ls", "pack", "import", str(path), "--replace"]
    for component in chosen:
        argv += ["--component", component]
    if user_profile:
        argv.append("--replace-user-profile")
    if host.workspace is not None:
        argv += ["--workspace", str(host.workspace)]
    if settings.storage_scope != "workspaces":
        argv += ["--scope", settings.storage_scope]
    if settings.data_dir:
        argv += ["--data-dir", settings.data_dir]
    if settings.runtime_user_scope != "global":
        argv += ["--runtime-user-scope", settings.runtime_user_scope]
    # the global root (the workspaces' roots and a global USER.md live under it) as this import saw it: a
    # shell without the same MNEMON_DATA_DIR would restore into another memory
    from ..roots import global_root

    data_dir = str(global_root(getattr(host, "_env", None)))
    if data_dir != str(global_root({})):
        return f"MNEMON_DATA_DIR={shlex.quote(data_dir)} " + shlex.join(argv)
    return shlex.join(argv)


def _free_name(folder: Path, name: str) -> Path:
    path = folder / name
    number = 2
    while os.path.lexists(path):
        path = folder / f"{name[:-4]}-{number}.zip"
        number += 1
    return path


@dataclass(frozen=True)
class Saved:
    """A backup staged by :func:`save`: the ``staged`` file (in the import's stage directory), the
    ``path`` the swap renames it to, and the directories on the way there that do not exist yet (deepest
    first: :func:`discard` removes them again when the import is rolled back)."""

    staged: Path
    path: Path
    created: tuple[Path, ...] = ()


def save(host: "Host", chosen: Sequence[str], user_profile: bool, stage: Path, *,
         dry_run: bool = False, now: datetime | None = None) -> tuple[dict[str, Any], Saved | None]:
    """Export what a replace of ``chosen`` is about to replace into ``stage`` (the import's stage
    directory in the root; the caller holds the gate and component locks and swaps :attr:`Saved.staged`
    to :attr:`Saved.path` with the components, so a killed import leaves the backup exactly when it
    leaves the new root). ``user_profile``: the replace replaces USER.md too, so the backup carries it.
    Returns (the receipt's ``backup`` part ``{path, components, userProfile, keep, restore, written,
    reused}``, the staged backup or ``None`` for a ``dry_run``, which exports nothing: it names the file a
    real import would write, and when the newest backup already holds exactly what would be saved:
    ``reused`` true, ``path`` that backup, nothing new written, so repeated replaces never rotate an older
    state out). Raises :class:`PackRefused` (``backup-failed``) naming the reason."""
    from .export import export_held

    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    folder = backup_dir(host.root)
    saved = None
    if dry_run:
        path = folder / fmt.pack_file_name(moment)
    else:
        try:
            exported = export_held(host, _scope_of(chosen), include_user_profile=user_profile, now=moment)
            fsio.check_store_path(folder / exported.file_name)
            if os.path.lexists(folder) and not folder.is_dir():
                raise OSError(20, "Not a directory")
            same = _same_as_newest(folder, exported.data)
            if same is None:
                path = _free_name(folder, exported.file_name)
                staged = stage / "backup" / path.name
                fsio.create_file_durably(staged, exported.data)
        except (MnemonError, OSError) as exc:
            reason = exc.message if isinstance(exc, MnemonError) else (exc.strerror or str(exc))
            raise PackRefused(f"the backup of what --replace would replace could not be made for {folder} ({reason});"
                              " nothing was imported", reason="backup-failed", file=str(folder)) from exc
        if same is not None:  # the newest backup already holds exactly this: no copy that would rotate it out
            path = same
        else:
            saved = Saved(staged, path, tuple(d for d in (folder, folder.parent) if not os.path.lexists(d)))
    part = {"path": str(path), "components": list(chosen), "userProfile": user_profile, "keep": KEEP,
            "restore": restore_command(host, path, chosen, user_profile), "written": not dry_run,
            "reused": not dry_run and saved is None}
    return part, saved


def _payload_of(data: bytes) -> tuple[Any, Any] | None:
    """``(manifest components, checksums files)`` of a pack's ZIP bytes, ``None`` when unreadable."""
    import io
    import json
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            manifest = json.loads(archive.read("manifest.json"))
            checksums = json.loads(archive.read("checksums.json"))
        return manifest.get("components"), checksums.get("files")
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, AttributeError):
        return None


def _newest(folder: Path) -> list[os.DirEntry]:
    """The backups in ``folder`` (``mnemon-backup-*.zip`` regular files), newest first (modification time,
    then name)."""
    try:
        entries = [e for e in os.scandir(folder)
                   if e.name.startswith(_PREFIX) and e.name.endswith(".zip") and e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    entries.sort(key=lambda e: (e.stat(follow_symlinks=False).st_mtime_ns, e.name), reverse=True)
    return entries


def _same_as_newest(folder: Path, data: bytes) -> Path | None:
    """The newest backup in ``folder`` when it holds exactly the payload of ``data`` (same components, same
    sha256 of every payload file; only ``exportedAt`` differs), else ``None``: a replace that replaced
    nothing new keeps the backup it has instead of adding a copy that would push an older state out."""
    entries = _newest(folder)
    if not entries:
        return None
    mine = _payload_of(data)
    try:
        theirs = _payload_of(Path(entries[0].path).read_bytes())
    except OSError:
        return None
    return Path(entries[0].path) if mine is not None and mine == theirs else None


def discard(saved: Saved) -> None:
    """Remove the directories :func:`save` found missing when the import that would have filled them was
    rolled back (the file itself went back into the stage with the rollback)."""
    for directory in saved.created:
        with contextlib.suppress(OSError):
            directory.rmdir()


def prune(folder: Path, keep: int = KEEP) -> list[Path]:
    """Remove all but the newest ``keep`` backups in ``folder`` (by modification time, then name); returns
    the removed paths. Only files named ``mnemon-backup-*.zip`` are considered."""
    entries = _newest(folder)
    removed = []
    for entry in entries[keep:]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    if removed:
        fsio.fsync_dir(folder)
    return removed
