"""What the work across tiers (:mod:`mnemon_ls.packs`, :mod:`mnemon_ls.maintenance`) needs of a workspace's
host, as a typing protocol: :class:`~mnemon_ls.host.WorkspaceHost` is the one implementation. It lets those
packages name the host in their signatures without importing :mod:`mnemon_ls.host`, which sits above them
and imports them (no upward import, no circle). Types only: nothing here runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ContextManager, Mapping, Protocol


class Host(Protocol):
    """One workspace's wiring (:class:`mnemon_ls.host.WorkspaceHost`): its storage ``root`` and root
    ``resolution`` (:class:`mnemon_ls.roots.RootResolution`), the ``workspace`` directory (``None`` for a
    root opened without one), the :class:`~mnemon_ls.settings.Settings`, and its Sources."""

    settings: Any
    resolution: Any
    #: The environment the global scope's places are found from (:func:`mnemon_ls.roots.global_env`).
    global_env: Mapping[str, str] | None
    workspace: Path | None
    runtime: Any
    documents: Any
    spaces: Any

    @property
    def root(self) -> Path:
        """The selected storage root."""
        ...

    def pack_gate(self) -> ContextManager[Any]:
        """Hold the root's pack gate shared for one operation (:mod:`mnemon_ls.packgate`)."""
        ...

    def check_storage(self) -> None:
        """Raise :class:`~mnemon_ls.errors.StorageUnsafe` when the storage root or its layout is a link."""
        ...
