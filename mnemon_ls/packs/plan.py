"""What a pack import stages (:class:`ImportPlan`), and the hand edits a Runtime repair took in
(:func:`repair_results`): shared by :mod:`.importer`, :mod:`.stagespaces`, :mod:`.swap` and :mod:`.export`,
below all of them (so none imports the importer back)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runtime.store import RuntimeStore


@dataclass
class ImportPlan:
    """What an import stages: swap ``pairs`` (staged, target), directories to remove afterwards, the
    receipt, and lock markers to hard-link into staged directories."""

    stage: Path
    pairs: list[tuple[Path, Path]] = field(default_factory=list)
    dirs: list[Path] = field(default_factory=list)
    receipt: dict[str, Any] = field(default_factory=dict)
    links: list[tuple[Path, Path]] = field(default_factory=list)
    #: a dry run stages in a temporary directory outside every root and swaps nothing
    dry_run: bool = False
    #: the replace replaces USER.md too (:func:`user_profile_replaced`): the backup carries it
    backup_user_profile: bool = False
    #: other roots the swap replaces a directory of (the global root's ``runtime/``): each gets a copy of
    #: the journal, so a host of another workspace finishes a killed swap before it reads or writes there
    other_roots: list[Path] = field(default_factory=list)
    #: component directories copied into the stage, with their :func:`tree_stamp` when they were read: the
    #: swap is refused when one changed meanwhile (a hand edit, a program that does not take the locks)
    watched: list[tuple[Path, list[list[Any]]]] = field(default_factory=list)


def repair_results(store: "RuntimeStore", report: Any) -> list[dict[str, Any]]:
    """The hand edits a :meth:`~mnemon_ls.runtime.repair.ProjectionRepair.repair` took in or undid, one
    ``{file, status, message, savedAs?}`` per file: its ``hand_edits`` results, and a projection restored
    from ``memories.json`` under ``handEdits: restore`` (status ``restored``, the edit saved first)."""
    results = [{"file": str(store.runtime_dir / name), **result} for name, result in sorted(report.hand_edits.items())]
    for name, saved in sorted(report.preserved.items()):
        if name not in report.hand_edits:
            results.append({"file": str(store.runtime_dir / name), "status": "restored", "savedAs": saved,
                            "message": f"{name} rebuilt from memories.json (handEdits is restore)"})
    return results
