"""Mnemon Packs: export, inspect and import a whole memory as one ZIP (reference section 9).

- :mod:`.format`: the container (manifest, checksums, allow-list, path rules, limits, deterministic ZIP);
- :mod:`.validate`: what each component's payload must hold;
- :mod:`.export`: a root -> pack bytes; :mod:`.importer`: pack bytes -> a root (merge/replace, staged,
  swapped in under ``.dsh-pack.lock``); :mod:`.swap`: its commit protocol (journal, swap, rolled back on error
  and forward after a crash).

Every surface (CLI, language server, editors) calls :func:`export_pack`, :func:`inspect_pack` and
:func:`import_pack` with a :class:`~mnemon_ls.host.WorkspaceHost`.
"""

from typing import Any

#: Public name -> submodule. Imported on first use: ``mnemon_ls.cli.full`` imports :mod:`.cli` at start, and
#: every other command must not pay for the Sources this package uses.
_EXPORTS = {"ExportedPack": "export", "export_pack": "export", "validate_scope": "export", "write_pack_file": "export",
            "JOURNAL": "swap", "PACK_LOCK": "swap", "import_pack": "importer", "inspect_pack": "importer",
            "recover": "swap", "validate_mode": "importer", "Pack": "validate", "read_pack": "validate"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
