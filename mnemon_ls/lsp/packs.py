"""Mnemon Packs in the language server: ``mnemon/pack/export``, ``mnemon/pack/inspect``, ``mnemon/pack/import``.

Registered from :mod:`.server` with :func:`register`, like :mod:`.records`. Each request calls the Host
operation (:meth:`~mnemon_ls.host.WorkspaceHost.export_pack`, ``inspect_pack``, ``import_pack``) of the
folder in a worker thread; errors are the usual JSON-RPC errors with ``data.code`` (``pack-invalid``,
``pack-refused``, ``runtime-capacity``, ``document-capacity``, ``invalid-input``...).

- ``mnemon/pack/export`` ``{workspace?, packScope?: full|runtime|documents|memory-spaces, path?,
  includeUserProfile?: bool}`` -> ``{fileName, bytes, scope, components, summary, exportedAt, userProfile:
  {carried, leftOut}, workspace, path | base64}`` (USER.md entries only with ``includeUserProfile``): with ``path``
  (absolute) the pack is written there (0600, durably); without, its bytes come back base64 (the
  reference's transport).
- ``mnemon/pack/exportFolder`` ``{workspace?}`` -> ``{folder, path, workspace}``: the file an export with no
  file named would write (``<global root>/state/pack-exports/mnemon-backup-<time>.zip``, the folder made
  0700), which the editors propose instead of the workspace folder, a git work tree where ``git add .``
  would commit the memory (:func:`mnemon_ls.packs.backups.default_export_path`, as ``pack export``
  without ``-o``).
- ``mnemon/pack/inspect`` ``{workspace?, path? | base64?}`` -> what the pack holds (never writes).
- ``mnemon/pack/import`` ``{workspace?, path? | base64?, mode?: merge|replace, components?: [...],
  dryRun?: bool, replaceUserProfile?: bool}`` -> the receipt (:func:`mnemon_ls.packs.import_pack`: counts
  added / skipped / renamed / removed per component and per Runtime target, ``userProfile``, ``backup``
  with the restoring command in replace mode); afterwards every open folder on the same storage root drops
  its cached Documents and Memory Spaces Sources and the server sends ``mnemon/packImported``
  ``{workspace, receipt}``. With ``dryRun`` nothing is written and nothing is sent: the receipt says what
  the import would do. ``replaceUserProfile`` (strict bool, replace mode only): replace a shared (global)
  USER.md too; without it a shared USER.md gets the pack's entries added and none removed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import InvalidInput

if TYPE_CHECKING:
    from .server import MnemonLanguageServer

EXPORT = "mnemon/pack/export"
EXPORT_FOLDER = "mnemon/pack/exportFolder"
INSPECT = "mnemon/pack/inspect"
IMPORT = "mnemon/pack/import"
IMPORTED = "mnemon/packImported"


@functools.cache
def _models() -> dict[str, Any]:
    """The params models (pydantic is imported on first use, after ``initialize``)."""
    from typing import Literal

    from pydantic import Field

    from .params import WorkspaceParams

    class PackExportParams(WorkspaceParams):
        """``{workspace?, packScope?, path?, includeUserProfile?}``."""

        pack_scope: Literal["full", "runtime", "documents", "memory-spaces"] = Field("full", alias="packScope")
        path: str | None = None
        include_user_profile: bool = Field(False, alias="includeUserProfile", strict=True)

    class PackSourceParams(WorkspaceParams):
        """``{workspace?, path? | base64?}``: the pack as a file or as base64 bytes."""

        path: str | None = None
        base64: str | None = Field(None, alias="base64")

    class PackImportParams(PackSourceParams):
        """``{workspace?, path? | base64?, mode?, components?, dryRun?, replaceUserProfile?}``."""

        mode: Literal["merge", "replace"] = "merge"
        dry_run: bool = Field(False, alias="dryRun", strict=True)
        replace_user_profile: bool = Field(False, alias="replaceUserProfile", strict=True)
        #: ``None``: every component the pack holds; a given list names at least one (``[]`` is refused,
        #: never read as "all")
        components: list[Literal["runtime", "documents", "memory-spaces"]] | None = Field(None, min_length=1)

    return {"export": PackExportParams, "source": PackSourceParams, "import": PackImportParams}


def _absolute(path: str, field: str = "path") -> Path:
    if "\x00" in path or not os.path.isabs(os.path.expanduser(path)):
        raise InvalidInput(field, f"must be an absolute file path (got {path!r})")
    return Path(os.path.expanduser(path))


def pack_bytes(path: str | None, encoded: str | None) -> bytes:
    """The pack a request names: exactly one of ``path`` (absolute) and ``base64``; raises
    :class:`InvalidInput` naming the field."""
    from ..packs.format import MAX_ARCHIVE_BYTES

    if (path is None) == (encoded is None):
        raise InvalidInput("path", "give exactly one of path and base64")
    if encoded is not None:
        if len(encoded) > (MAX_ARCHIVE_BYTES * 4) // 3 + 4:
            raise InvalidInput("base64", f"the pack is larger than {MAX_ARCHIVE_BYTES} bytes (48 MiB)")
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput("base64", "is not base64") from None
    file = _absolute(path or "")
    if not file.is_file():
        raise InvalidInput("path", f"{file} is not a file")
    if file.stat().st_size > MAX_ARCHIVE_BYTES:
        raise InvalidInput("path", f"{file} is larger than {MAX_ARCHIVE_BYTES} bytes (48 MiB)")
    return file.read_bytes()


def register(server: "MnemonLanguageServer", mnemon_request: Callable[[str], Callable[..., Any]]) -> None:
    """Register the ``mnemon/pack/*`` handlers on ``server``."""
    from . import protocol as P  # its params names (pydantic) load on first use, after ``initialize``

    @mnemon_request(EXPORT)
    async def pack_export(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/pack/export`` (module doc)."""
        p = P.parse_params(_models()["export"], params)
        state = ls.registry.resolve(p.workspace)
        target = _absolute(p.path) if p.path is not None else None

        def run() -> dict[str, Any]:
            from ..packs.backups import write_export

            exported = state.host.export_pack(p.pack_scope, include_user_profile=p.include_user_profile)
            data = exported.to_dict()
            if target is not None:
                try:
                    write_export(state.host, exported.data, target)
                except InvalidInput as exc:  # the CLI's -o (``output``) is this request's ``path``
                    raise InvalidInput("path" if exc.field == "output" else exc.field, exc.rule) from None
                return data | {"path": str(target)}
            return data | {"base64": base64.b64encode(exported.data).decode("ascii")}

        return await asyncio.to_thread(run) | {"workspace": state.uri}

    @mnemon_request(EXPORT_FOLDER)
    async def pack_export_folder(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/pack/exportFolder`` (module doc)."""
        from ..packs.backups import default_export_path
        from .params import WorkspaceParams

        p = P.parse_params(WorkspaceParams, params)
        state = ls.registry.resolve(p.workspace)

        path = await asyncio.to_thread(default_export_path, state.host)
        return {"folder": str(path.parent), "path": str(path), "workspace": state.uri}

    @mnemon_request(INSPECT)
    async def pack_inspect(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/pack/inspect`` (module doc)."""
        p = P.parse_params(_models()["source"], params)
        state = ls.registry.resolve(p.workspace)
        data = pack_bytes(p.path, p.base64)
        return await asyncio.to_thread(state.host.inspect_pack, data) | {"workspace": state.uri}

    @mnemon_request(IMPORT)
    async def pack_import(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/pack/import`` (module doc)."""
        p = P.parse_params(_models()["import"], params)
        state = ls.registry.resolve(p.workspace)
        data = pack_bytes(p.path, p.base64)
        receipt = await asyncio.to_thread(functools.partial(
            state.host.import_pack, data, p.mode, p.components, dry_run=p.dry_run,
            replace_user_profile=p.replace_user_profile))
        if receipt.get("dryRun"):
            return receipt | {"workspace": state.uri}  # nothing changed: no other folder to refresh, no notice
        from ..packs.importer import release_sources

        root = os.path.realpath(state.host.root)
        for other in list(ls.registry.folders.values()):
            if other is not state and os.path.realpath(other.host.root) == root:
                await asyncio.to_thread(release_sources, other.host)
        ls.protocol.notify(IMPORTED, {"workspace": state.uri, "receipt": receipt})
        return receipt | {"workspace": state.uri}
