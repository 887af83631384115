"""What every Memory Space provider offers the service (the data-plane protocol).

A provider serves one space. The service validates every request first (field-named
:class:`~mnemon_ls.errors.InvalidInput`), so providers receive clean values; they still raise
``InvalidInput`` for facts only the store knows (an id that is missing or forgotten).

Shapes:

- :class:`SearchOutcome` ``items`` (best first, :class:`~mnemon_ls.spaces.model.Item` with ``score`` in
  0..1 when ``capabilities.normalized_scores``), ``hint`` (``"sparse_results"`` or ``None``), ``fetched``
  (rows the provider produced before the ``keep`` predicate), ``dropped`` (rows ``keep`` refused).
- ``remember`` returns a raw receipt dict in the Mnemon CLI's shape (``{"id", "action": "added"|"skipped",
  "content", "category", "importance", "tags", "entities", "created_at", "edges_created": {...},
  "replaced_id"?}``); the service maps it with :func:`~mnemon_ls.spaces.model.receipt_status`.
- ``link`` returns ``{"status": "linked", "source_id", "target_id", "edge_type", "weight", "metadata"}``;
  ``forget`` ``{"id", "status": "deleted", "message"}``; ``status`` the CLI's status object
  (``total_insights``, ``deleted_insights``, ``by_category``, ``edge_count``, ``top_entities``,
  ``oplog_count``, ``db_path``, ``db_size_bytes``) plus provider extras.
- ``export_items`` / ``import_items`` are the merge pair (native data planes only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol, Sequence

from ..model import Item

#: ``keep(tags) -> bool``: the branch predicate a provider applies before cutting to the limit.
KeepFn = Callable[[Sequence[str]], bool]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a provider supports (reference 6.7 provider matrix); the UI hides what is false."""

    search: bool = True
    browse: bool = True
    graph: bool = True
    entities: bool = True
    related: bool = True
    link: bool = True
    forget: bool = True
    merge: bool = True
    write: str = "exact"          # exact | async-extracting
    delete: str = "soft"          # soft | hard | unsupported
    normalized_scores: bool = True

    def to_dict(self) -> dict[str, Any]:
        """camelCase JSON."""
        return {"search": self.search, "browse": self.browse, "graph": self.graph, "entities": self.entities,
                "related": self.related, "link": self.link, "forget": self.forget, "merge": self.merge,
                "write": self.write, "delete": self.delete, "normalizedScores": self.normalized_scores}


NATIVE_CAPABILITIES = Capabilities()


@dataclass(slots=True)
class SearchOutcome:
    """A provider's answer to a search (module doc)."""

    items: list[Item]
    hint: str | None = None
    fetched: int = 0
    dropped: int = 0
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ExportItem:
    """One active item of a space being merged (values as stored)."""

    id: str
    content: str
    category: str
    importance: int
    tags: list[str]
    entities: list[str]
    source: str
    created_at: str


@dataclass(frozen=True, slots=True)
class ExportEdge:
    """One edge between two exported items (by their source-space ids)."""

    source_id: str
    target_id: str
    edge_type: str
    weight: float
    metadata: dict[str, str]


class SpaceProvider(Protocol):
    """The data plane of one space (see module doc for the result shapes)."""

    provider_id: str
    capabilities: Capabilities

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]: ...

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome: ...

    def related(self, item_id: str, *, depth: int = 2, edge_type: str | None = None, limit: int = 20) -> list[Item]: ...

    def link(self, source_id: str, target_id: str, *, edge_type: str = "semantic", weight: float = 0.5,
             metadata: dict[str, str] | None = None) -> dict[str, Any]: ...

    def forget(self, item_id: str) -> dict[str, Any]: ...

    def status(self) -> dict[str, Any]: ...

    def count(self) -> int: ...

    def export_items(self) -> tuple[list[ExportItem], list[ExportEdge]]: ...

    def import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = ()) -> dict[str, Any]: ...

    def close(self) -> None: ...


def sparse_hint(count: int, limit: int) -> str | None:
    """The CLI's ``"sparse_results"`` hint: no results, or fewer than half the limit."""
    return "sparse_results" if count == 0 or count < limit / 2 else None


def iter_chunks(seq: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``seq`` in consecutive slices of at most ``size``."""
    for start in range(0, len(seq), size):
        yield seq[start:start + size]
