"""MEMORY.md overflow archival (issue 9 item 2; reference/dsh-mnemon.md 4.1-4.3). Work in progress."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence


@dataclass(frozen=True, slots=True)
class Route:
    """One validated route: the 1-based ``source_indexes`` of plan entries that go to ``space_id``."""

    source_indexes: tuple[int, ...]
    space_id: str


def validate_routes(raw: Any, entry_count: int, eligible_ids: Sequence[str], field: str = "routes") -> list[Route]:
    """Validate explicit routes ``[{sourceIndexes: [int], spaceId}]``."""
    raise NotImplementedError


def mutate_runtime(runtime: Any, spaces: Any, request: Any, *, routes: Any = None, policy: str = "archive",
                   branch: str | None = None, root: Path) -> Any:
    """Apply a Runtime mutation, archiving MEMORY.md overflow first."""
    raise NotImplementedError


def archived_listing(root: Path) -> dict[str, Any]:
    """What left hot memory and where it went."""
    raise NotImplementedError
