"""Mnemon Packs: export, inspect and import a whole memory as one ZIP (reference section 9).

- :mod:`.format`: the container (manifest, checksums, allow-list, path rules, limits, deterministic ZIP);
- :mod:`.validate`: what each component's payload must hold;
- :mod:`.export`: a root -> pack bytes; :mod:`.importer`: pack bytes -> a root (merge/replace, staged,
  swapped in under ``.dsh-pack.lock``, rolled back on error and forward after a crash).

Every surface (CLI, language server, editors) calls :func:`export_pack`, :func:`inspect_pack` and
:func:`import_pack` with a :class:`~mnemon_ls.host.WorkspaceHost`.
"""

from .export import ExportedPack, export_pack, validate_scope, write_pack_file
from .importer import JOURNAL, PACK_LOCK, import_pack, inspect_pack, recover, validate_mode
from .validate import Pack, read_pack

__all__ = ["ExportedPack", "JOURNAL", "PACK_LOCK", "Pack", "export_pack", "import_pack", "inspect_pack",
           "read_pack", "recover", "validate_mode", "validate_scope", "write_pack_file"]
