"""Installed third-party provider distributions (entry point group ``mnemon_ls.providers``).

A provider is *installed* when a distribution in this Python environment declares an entry point in
:data:`~.providers.base.ENTRY_POINT_GROUP` whose name is the provider id (``holographic``, ``mem0``, or a
new id matching ``^[a-z][a-z0-9-]{1,40}$``). Listing reads package metadata only; :func:`load` imports
the entry point's module (cheap by contract: engines are imported by ``ProviderPlugin.open``). Nothing
here decides to *use* a provider: that needs the user's configuration (seed 003). A provider package
declares its entry point object with :class:`EnginePlugin` (the declarations plus the engine's opener named
by string, imported at the first open).

Errors: :func:`load` raises :class:`~mnemon_ls.errors.ProviderNotConfigured` (``reason`` ``not-installed``,
message from :func:`not_installed`: an install hint only for the packages of :data:`PACKAGES`) for an id no
distribution provides and :class:`~mnemon_ls.errors.ProviderUnavailable` (``reason``
``plugin-failed``) when the entry point cannot be imported or is not a provider.
"""

from __future__ import annotations

import importlib
import re
import threading
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import ProviderNotConfigured, ProviderUnavailable
from .providers.base import ENTRY_POINT_GROUP, Capabilities, FieldRule, ProviderPlugin

PROVIDER_ID_RE = re.compile(r"^[a-z][a-z0-9-]{1,40}$")
_REQUIRED = ("provider_id", "label", "kind", "capabilities", "service_fields", "memory_fields", "secret_fields",
             "open")

#: The provider packages this project ships (``providers/<id>`` of a mnemon-ls checkout): the only ones an
#: install hint may name. Any other id gets no hint built from it (it may be anything a person typed).
PACKAGES = {"byterover": "mnemon-ls-provider-byterover", "hindsight": "mnemon-ls-provider-hindsight",
            "holographic": "mnemon-ls-provider-holographic", "mem0": "mnemon-ls-provider-mem0",
            "openviking": "mnemon-ls-provider-openviking", "postgres": "mnemon-ls-provider-postgres"}

_lock = threading.Lock()
_entry_points: dict[str, metadata.EntryPoint] | None = None
_loaded: dict[str, ProviderPlugin] = {}


@dataclass(frozen=True, slots=True)
class EnginePlugin:
    """A ready-made :class:`~.providers.base.ProviderPlugin` for a provider package: the declarations and an
    ``engine`` opener named by string, so the entry point's module imports nothing heavy (the engine module
    is imported by :meth:`open`, the first time a configured provider is used).

    ``provider_id`` (the entry point name), ``label`` (shown to people), ``kind`` (``local`` | ``remote``),
    ``capabilities``, ``service_fields`` / ``memory_fields`` (configuration keys the provider reads beyond the
    reference's), ``secret_fields`` (of those, the credentials: never shown back), and ``engine``:
    ``"module:attribute.path"`` of a callable ``opener(service: dict) -> ProviderEngine`` (e.g.
    ``"mnemon_ls_provider_mem0.engine:Mem0Engine.open"``); it raises
    :class:`~mnemon_ls.errors.ProviderUnavailable` / :class:`~mnemon_ls.errors.InvalidInput` as the
    protocol says. A package declares::

        PLUGIN = EnginePlugin(provider_id="mem0", label="Mem0", kind="local", capabilities=Capabilities(...),
                              service_fields=(...), memory_fields=(...), secret_fields=frozenset({...}),
                              engine="mnemon_ls_provider_mem0.engine:Mem0Engine.open")
    """

    provider_id: str
    label: str
    kind: str
    capabilities: Capabilities
    service_fields: tuple[str, ...]
    memory_fields: tuple[str, ...]
    secret_fields: frozenset[str]
    engine: str
    field_rules: Mapping[str, FieldRule] = field(default_factory=dict)
    #: Cross-field check of the merged service fields (stored plus new, after each field's rule):
    #: ``check_service(fields)`` raises :class:`~mnemon_ls.errors.InvalidInput` naming ``services.<field>``
    #: and the rule; run by configure and enable before anything is written or opened.
    check_service: Callable[[Mapping[str, Any]], None] | None = None
    #: What the capabilities are under a configuration: ``configured(capabilities, service) -> Capabilities``
    #: for a provider whose behaviour a service field changes (Mem0's ``infer`` makes writes extracting); run
    #: on the stored fields without opening the engine. ``None``: :attr:`capabilities` whatever the fields.
    configured: Callable[[Capabilities, Mapping[str, Any]], Capabilities] | None = None
    #: ``"module:attribute.path"`` of ``checker(service: dict) -> Connection``: a quick, read-only check that the
    #: provider's server can be reached with the stored fields, without opening the engine
    #: (:meth:`check_connection`); ``None``: the provider has no server to reach.
    connection: str | None = None

    def capabilities_for(self, service: Mapping[str, Any] | None) -> Capabilities:
        """:attr:`capabilities` under the stored service fields ``service`` (``None``: not configured)."""
        if service is None or self.configured is None:
            return self.capabilities
        return self.configured(self.capabilities, service)

    def opener(self) -> Any:
        """The callable ``engine`` names (imports its module; :class:`ImportError` / :class:`AttributeError`
        when it does not exist)."""
        return _named(self.engine)

    def check_connection(self, service: dict[str, Any]) -> Any:
        """``checker(service)`` of :attr:`connection` (a :class:`~.providers.base.Connection`), or ``None`` when
        the provider declares none. Raises what the checker raises (the caller reports it)."""
        return _named(self.connection)(dict(service)) if self.connection else None

    def open(self, service: dict[str, Any], *, root: Path) -> Any:
        """``opener(service)``: the opened :class:`~.providers.base.ProviderEngine` (``root`` is the storage
        root asking; the engines of this project keep their data where ``service`` says, not under it)."""
        return self.opener()(dict(service))


def _named(spec: str) -> Any:
    """The object ``"module:attribute.path"`` names (imports the module)."""
    module_name, _, path = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in path.split(".") if path else ():
        target = getattr(target, part)
    return target


def installed() -> dict[str, metadata.EntryPoint]:
    """``{provider id: entry point}`` of every installed provider distribution (metadata only, cached for
    the process; :func:`refresh` forgets it). Entry points whose name is not a valid id are ignored;
    ``mnemon-native``/``mnemon-cli`` cannot be replaced."""
    global _entry_points
    with _lock:
        if _entry_points is None:
            found: dict[str, metadata.EntryPoint] = {}
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
                if PROVIDER_ID_RE.match(ep.name) and ep.name not in ("mnemon-native", "mnemon-cli"):
                    found.setdefault(ep.name, ep)
            _entry_points = found
        return dict(_entry_points)


def refresh() -> None:
    """Forget what :func:`installed` and :func:`load` cached (after a ``pip install`` in this process)."""
    global _entry_points
    with _lock:
        _entry_points = None
        _loaded.clear()


def distribution_of(provider_id: str) -> str | None:
    """``"<distribution> <version>"`` that provides ``provider_id``, or ``None``."""
    ep = installed().get(provider_id)
    dist = getattr(ep, "dist", None) if ep is not None else None
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else None


def load(provider_id: str) -> ProviderPlugin:
    """The :class:`ProviderPlugin` of an installed provider (module doc for the errors)."""
    with _lock:
        cached = _loaded.get(provider_id)
    if cached is not None:
        return cached
    ep = installed().get(provider_id)
    if ep is None:
        raise not_installed(provider_id)
    try:
        obj: Any = ep.load()
        plugin = obj() if isinstance(obj, type) else obj
    except Exception as exc:  # a broken plugin must not take the server down
        raise ProviderUnavailable(f"provider {provider_id}: its package {ep.value} cannot be loaded: "
                                  f"{type(exc).__name__}: {exc}", provider=provider_id,
                                  reason="plugin-failed") from None
    missing = [name for name in _REQUIRED if not hasattr(plugin, name)]
    if missing or not isinstance(getattr(plugin, "capabilities", None), Capabilities) \
            or getattr(plugin, "provider_id", None) != provider_id:
        raise ProviderUnavailable(f"provider {provider_id}: {ep.value} is not a mnemon-ls provider (missing "
                                  f"{', '.join(missing) or 'a matching provider_id / Capabilities'})",
                                  provider=provider_id, reason="plugin-failed")
    with _lock:
        _loaded[provider_id] = plugin
    return plugin


def install_hint(provider_id: str) -> str:
    """How to install a provider of :data:`PACKAGES` (``"install the mnemon-ls-provider-<id> package (from a
    checkout of mnemon-ls: pip install ./providers/<id>)"``), or ``""`` for any other id."""
    if provider_id not in PACKAGES:
        return ""
    return (f"install the {PACKAGES[provider_id]} package (from a checkout of mnemon-ls: pip install "
            f"./providers/{provider_id})")


def not_installed(provider_id: str) -> ProviderNotConfigured:
    """The ``not-installed`` error of ``provider_id`` (``data``: ``provider``, ``reason``). For an id of
    :data:`PACKAGES` the message names that package and how to install it (:func:`install_hint`); for any
    other id it says that no mnemon-ls package provides it and lists the ids that are installed and the ones
    that have a package, so nothing the caller typed is turned into a command to run."""
    available = ", ".join(sorted(installed())) or "none"
    if provider_id in PACKAGES:
        return ProviderNotConfigured(f"provider {provider_id} is not installed: {install_hint(provider_id)}; "
                                     f"installed providers: {available}", provider=provider_id, reason="not-installed")
    return ProviderNotConfigured(
        f"provider {provider_id} is not installed and no mnemon-ls package provides it; installed providers: "
        f"{available}; provider packages: {', '.join(sorted(PACKAGES))}", provider=provider_id,
        reason="not-installed")


def try_load(provider_id: str) -> ProviderPlugin | None:
    """:func:`load`, or ``None`` when the provider is not installed or its plugin is broken."""
    try:
        return load(provider_id)
    except (ProviderNotConfigured, ProviderUnavailable):
        return None


def field_rules(provider_id: str) -> Mapping[str, FieldRule]:
    """``{field: FieldRule}`` an installed plugin declares (empty when it declares none or is not installed)."""
    plugin = try_load(provider_id)
    rules = getattr(plugin, "field_rules", None) if plugin is not None else None
    return {k: v for k, v in rules.items() if isinstance(v, FieldRule)} if isinstance(rules, Mapping) else {}


def declared_fields(provider_id: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """``(service fields, memory fields, secret fields)`` an installed plugin adds to the reference's; empty
    sets when it is not installed (then only the reference's fields are accepted)."""
    plugin = try_load(provider_id)
    if plugin is None:
        return frozenset(), frozenset(), frozenset()
    return frozenset(plugin.service_fields), frozenset(plugin.memory_fields), frozenset(plugin.secret_fields)
