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

Third-party providers (public protocol, seed 003 "no dependency scan chooses implementations"): a
distribution registers a :class:`ProviderPlugin` under the entry point group :data:`ENTRY_POINT_GROUP`
(``mnemon_ls.providers``; entry point name = provider id, value = ``module:OBJECT``, an instance or a
zero-argument class). It is used only when it is installed *and* the user configured and enabled it in
``state/memory-providers.json`` (``mnemon-ls provider enable NAME``). Loading the entry point must be cheap
(no engine import): the engine is imported by :meth:`ProviderPlugin.open`. The plugin declares:

- ``capabilities`` (:class:`Capabilities`): every surface hides or refuses what is false (seed 000: the UI
  and agents do not pretend missing behaviour exists);
- ``service_fields`` / ``memory_fields`` / ``secret_fields``: the configuration keys it reads (an installed
  provider's service fields are exactly its own; unknown keys are refused naming them), and optionally
  ``field_rules`` (``{field: FieldRule}``): the value rule of each field, checked when it is configured,
  before anything is written (:class:`FieldRule`);
- ``open(service, root=...)`` -> :class:`ProviderEngine`: one engine per provider and root, built from the
  service-scope configuration; raises :class:`~mnemon_ls.errors.ProviderUnavailable` (``reason``
  ``engine-missing`` | ``engine-failed``) when the engine is not installed or does not open.

A :class:`ProviderEngine` answers :meth:`~ProviderEngine.health` (:class:`Health`),
:meth:`~ProviderEngine.discover` (the provider's own namespaces, :class:`Namespace`: they become spaces),
:meth:`~ProviderEngine.create_namespace` (when ``capabilities.create_namespace``) and
:meth:`~ProviderEngine.space` (the :class:`SpaceProvider` of one namespace, from the space's memory-scope
``connection``). Receipts are the dicts described above (``action`` ``added`` / ``skipped`` /
``accepted``), mapped by :func:`~mnemon_ls.spaces.model.receipt_status`; evidence is
:class:`SearchOutcome` of :class:`~mnemon_ls.spaces.model.Item`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

from ..model import Item

#: ``keep(tags) -> bool``: the branch predicate a provider applies before cutting to the limit. It decides by the
#: ``branch:<name>`` tags alone and keeps an item without any, so a provider may pass only those tags and need
#: not ask about an item that has none (the native provider's side index keeps them apart).
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
    #: Third-party only: the provider lists its own namespaces / can make a new one (``space create --provider``).
    discover: bool = False
    create_namespace: bool = False

    def to_dict(self) -> dict[str, Any]:
        """camelCase JSON (``discover``/``createNamespace`` only when a provider declares them)."""
        data = {"search": self.search, "browse": self.browse, "graph": self.graph, "entities": self.entities,
                "related": self.related, "link": self.link, "forget": self.forget, "merge": self.merge,
                "write": self.write, "delete": self.delete, "normalizedScores": self.normalized_scores}
        if self.discover or self.create_namespace:
            data.update(discover=self.discover, createNamespace=self.create_namespace)
        return data


NATIVE_CAPABILITIES = Capabilities()

FIELD_KINDS = ("string", "number", "integer", "boolean", "choice", "path", "url")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


@dataclass(frozen=True, slots=True)
class FieldRule:
    """The value rule of one configuration field of a provider (``field_rules`` of its plugin), checked when
    the field is configured (``mnemon-ls provider configure|enable``, ``mnemon/providers/configure|enable``)
    before anything is written; the provider's engine may check combinations again when it opens.

    ``kind``: ``string`` (text; ``pattern``, when given, must match the whole value), ``number`` (a decimal
    number, ``minimum``..``maximum`` inclusive when given), ``integer`` (same bounds), ``boolean``
    (``true|false|1|0|yes|no``), ``choice`` (one of ``choices``), ``path`` (a file or directory on this
    machine: absolute or ``~/``, outside every mnemon-ls storage root; ``target`` ``file`` or ``directory``
    refuses an existing entry of the other type) or ``url`` (http(s) without credentials). Numbers given
    as text take ASCII digits only. ``text`` is the rule people read (``"must be a number between 0 and 1"``), generated
    from the other fields when empty. Every field is optional: an empty value clears it back to the provider's default.
    :meth:`normalise` gives the value stored in ``state/memory-providers.json`` (a float, an int, a bool or the text) or
    raises :class:`ValueError`."""

    kind: str = "string"
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    text: str = ""
    target: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"FieldRule.kind must be one of {', '.join(FIELD_KINDS)}")
        if self.target not in (None, "file", "directory"):
            raise ValueError("FieldRule.target must be file, directory or None")
        if self.kind == "choice" and not self.choices:
            raise ValueError("FieldRule.choices is required with kind choice")

    @property
    def rule(self) -> str:
        """What the value must be (``text``, else generated: ``"must be a number between 0 and 1"``)."""
        if self.text:
            return self.text
        noun = {"number": "a number", "integer": "an integer"}.get(self.kind)
        if noun is not None:
            low, high = (None if b is None else f"{b:g}" for b in (self.minimum, self.maximum))
            if low is not None and high is not None:
                return f"must be {noun} between {low} and {high}"
            if low is not None or high is not None:
                return f"must be {noun} {'at least ' + low if low is not None else 'at most ' + str(high)}"
            return f"must be {noun}"
        if self.kind == "boolean":
            return "must be true or false"
        if self.kind == "choice":
            return "must be one of " + ", ".join(self.choices)
        if self.kind == "path":
            return "must be an absolute path or start with ~/"
        if self.kind == "url":
            return "must be an http(s) URL without credentials"
        return f"must match {self.pattern}" if self.pattern else "must be text"

    @property
    def stored_type(self) -> str:
        """The JSON type the field's value has in ``state/memory-providers.json`` (what :meth:`normalise`
        stores): ``"a JSON number"`` (kind ``number``), ``"a JSON integer"`` (``integer``), ``"true or
        false"`` (``boolean``), else ``"a JSON string"``."""
        return {"number": "a JSON number", "integer": "a JSON integer", "boolean": "true or false"}.get(
            self.kind, "a JSON string")

    def stored_type_ok(self, value: Any) -> bool:
        """Whether ``value`` (as read from the file by :func:`json.loads`) has :attr:`stored_type`. Nothing is
        converted: ``true`` is not a number, ``"0.1"`` is not a number, ``1`` is not ``true``, ``5.0`` is not
        an integer."""
        if self.kind == "boolean":
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if self.kind == "number":
            return isinstance(value, (int, float))
        if self.kind == "integer":
            return isinstance(value, int)
        return isinstance(value, str)

    def normalise(self, value: Any) -> Any:
        """The stored form of a non-empty ``value`` (text from the command line, or a JSON value), or
        :class:`ValueError` when it breaks the rule."""
        if self.kind in ("number", "integer"):
            if isinstance(value, bool):
                raise ValueError(self.rule)
            try:
                number = _decimal(value) if self.kind == "number" else _integer(value)
            except (TypeError, ValueError):
                ascii_only = isinstance(value, str) and not value.isascii()
                raise ValueError(f"{self.rule}, in ASCII digits (0-9)" if ascii_only else self.rule) from None
            if (isinstance(number, float) and not math.isfinite(number)) \
                    or (self.minimum is not None and number < self.minimum) \
                    or (self.maximum is not None and number > self.maximum):
                raise ValueError(self.rule)
            return number
        if self.kind == "boolean":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE or text in _FALSE:
                return text in _TRUE
            raise ValueError(self.rule)
        if not isinstance(value, str):
            raise ValueError(self.rule if self.kind != "string" else "must be text")
        if self.kind == "choice" and value not in self.choices:
            raise ValueError(self.rule)
        if self.kind == "string" and self.pattern and not re.fullmatch(self.pattern, value):
            raise ValueError(self.rule)
        return value


def _decimal(value: Any) -> float:
    """A JSON number, or text of ASCII digits only (``float`` alone would take Arabic-Indic or full-width
    digits and ``1_0``): ``[+-]digits[.digits][e[+-]digits]``."""
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if not re.fullmatch(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?", text):
        raise ValueError("not a number")
    return float(text)


def _integer(value: Any) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("not an integer")
        return int(value)
    text = str(value).strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,18}", text):
        raise ValueError("not an integer")
    return int(text)


@dataclass(slots=True)
class SearchOutcome:
    """A provider's answer to a search (module doc)."""

    items: list[Item]
    hint: str | None = None
    fetched: int = 0
    dropped: int = 0
    notices: list[str] = field(default_factory=list)
    #: Set when the items are partial (only ``id``, ``score``, ``matched_via``, ``importance``, ``similarity``):
    #: ``complete(items)`` -> those of ``items`` with every field loaded, in their order, leaving out any gone
    #: since (:mod:`mnemon_ls.spaces.providers.native_load`). ``None``: the items are complete.
    complete: Callable[[Sequence[Item]], list[Item]] | None = None


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


#: The entry point group third-party provider distributions register under.
ENTRY_POINT_GROUP = "mnemon_ls.providers"


class NoGraphNoMerge:
    """The refusals of a provider space without a related walk, typed links or merge (mixin of a third-party
    space class): :meth:`related` and :meth:`link` raise :class:`~mnemon_ls.errors.SpaceRefused` (``reason``
    ``related`` / ``link``) naming :attr:`engine_label` ("Mem0 spaces have no related walk"), :meth:`export_items`
    and :meth:`import_items` raise it with ``reason`` ``merge`` (merge is Mnemon-native only). The class sets
    :attr:`engine_label` and each space its ``space_id``; a class that has one of them defines its own. The core
    refuses these before a provider is reached when its capabilities say so; these answer a direct call."""

    engine_label = "This provider's"
    space_id: str

    def related(self, item_id: str, *, depth: int = 2, edge_type: str | None = None, limit: int = 20) -> list[Item]:
        """Refused (class doc)."""
        from ...errors import SpaceRefused

        raise SpaceRefused(f"{self.engine_label} spaces have no related walk", spaceId=self.space_id, reason="related")

    def link(self, source_id: str, target_id: str, *, edge_type: str = "semantic", weight: float = 0.5,
             metadata: dict[str, str] | None = None) -> dict[str, Any]:
        """Refused (class doc)."""
        from ...errors import SpaceRefused

        raise SpaceRefused(f"{self.engine_label} spaces cannot link items", spaceId=self.space_id, reason="link")

    def export_items(self) -> tuple[list[ExportItem], list[ExportEdge]]:
        """Refused (class doc)."""
        from ...errors import SpaceRefused

        raise SpaceRefused("merge is Mnemon-native only", spaceId=self.space_id, reason="merge")

    def import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = ()) -> dict[str, Any]:
        """Refused (class doc)."""
        from ...errors import SpaceRefused

        raise SpaceRefused("merge is Mnemon-native only", spaceId=self.space_id, reason="merge")


@dataclass(frozen=True, slots=True)
class Namespace:
    """One of a provider's own namespaces (a Holographic bank, a Mem0 user/agent/run scope): it becomes a
    space with id ``<providerId>-<24 hex of sha256(externalId)>`` (reference 6.2). ``connection`` holds the
    memory-scope fields :meth:`ProviderEngine.space` needs to reach it; ``items`` is a count when cheap."""

    external_id: str
    name: str | None = None
    description: str | None = None
    connection: dict[str, Any] = field(default_factory=dict)
    items: int | None = None

    def to_sync(self) -> dict[str, Any]:
        """The entry :meth:`~mnemon_ls.spaces.registry_providers.ProviderPlane.sync_namespaces` takes."""
        return {"externalId": self.external_id, "name": self.name, "description": self.description,
                "connection": dict(self.connection)}


@dataclass(frozen=True, slots=True)
class Health:
    """What ``provider test`` shows: ``ok``; ``engine`` (what runs, e.g. ``hermes-agent 0.19.0
    plugins/memory/holographic``); ``location`` (a path or an endpoint without credentials); ``items``
    (total, when cheap); ``latency_ms`` (the probe's wall time, ms); ``message`` for people;
    ``details`` (provider extras, never a credential)."""

    ok: bool
    engine: str
    location: str | None = None
    items: int | None = None
    latency_ms: float | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{ok, engine, location, items, latencyMs, message, details}``."""
        return {"ok": self.ok, "engine": self.engine, "location": self.location, "items": self.items,
                "latencyMs": None if self.latency_ms is None else round(self.latency_ms, 3),
                "message": self.message, "details": dict(self.details)}


@dataclass(frozen=True)
class Connection:
    """What a provider that talks to a server says about reaching it, without opening its engine
    (``ProviderPlugin.check_connection``, optional): ``state`` ``connected`` or ``unreachable``; ``location``
    (where, without a credential); ``message`` for people (the server and its version, or why it cannot be
    reached: never a credential); ``latency_ms`` (the check's wall time)."""

    state: str
    location: str | None
    message: str
    latency_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{state, location, message, latencyMs}``."""
        return {"state": self.state, "location": self.location, "message": self.message,
                "latencyMs": None if self.latency_ms is None else round(self.latency_ms, 3)}


class ProviderEngine(Protocol):
    """An opened provider (one per provider id and storage root; module doc)."""

    def health(self) -> Health: ...

    def discover(self) -> list[Namespace]: ...

    def create_namespace(self, name: str, description: str) -> Namespace: ...

    def space(self, connection: dict[str, Any], *, space_id: str) -> SpaceProvider: ...

    def close(self) -> None: ...


class ProviderPlugin(Protocol):
    """What a provider distribution registers (module doc). ``kind`` is ``local`` (data stays on this
    machine) or ``remote``; ``label`` is shown to people."""

    provider_id: str
    label: str
    kind: str
    capabilities: Capabilities
    service_fields: tuple[str, ...]
    memory_fields: tuple[str, ...]
    secret_fields: frozenset[str]
    #: Optional: ``{field: FieldRule}`` (fields without one are text); read with ``getattr(plugin,
    #: "field_rules", {})`` so a plugin written before it existed keeps working.
    field_rules: Mapping[str, FieldRule]

    def open(self, service: dict[str, Any], *, root: Any) -> ProviderEngine: ...

    # Optional, read with ``getattr``: ``capabilities_for(service: Mapping | None) -> Capabilities``, the
    # capabilities under the stored service fields (a field may change what the provider does: Mem0's
    # ``infer`` makes its writes ``async-extracting``); without it, :attr:`capabilities` whatever the fields.
    # ``check_connection(service: dict) -> Connection | None``: a quick, read-only check that the provider's
    # server can be reached with the stored fields (``provider list``, ``doctor`` and the editors' provider
    # views show it); ``None`` or absent: the provider has no server to reach.


def sparse_hint(count: int, limit: int) -> str | None:
    """The CLI's ``"sparse_results"`` hint: no results, or fewer than half the limit."""
    return "sparse_results" if count == 0 or count < limit / 2 else None


def filtered(items: Iterable[Item], category: str | None, source: str | None,
             keep: KeepFn | None) -> tuple[list[Item], int]:
    """``(kept, dropped)`` of a third-party search's ``items`` (best first): those of another ``category`` or
    ``source`` (when given) left out, those whose tags ``keep`` refuses left out and counted in ``dropped``
    (:attr:`SearchOutcome.dropped`: the branch scope hid them)."""
    kept: list[Item] = []
    dropped = 0
    for item in items:
        if (category is not None and item.category != category) or (source is not None and item.source != source):
            continue
        if keep is not None and not keep(item.tags):
            dropped += 1
            continue
        kept.append(item)
    return kept, dropped


def iter_chunks(seq: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``seq`` in consecutive slices of at most ``size``."""
    for start in range(0, len(seq), size):
        yield seq[start:start + size]
