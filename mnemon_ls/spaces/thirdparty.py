"""Third-party providers of one storage root: installed + configured -> opened engines, discovery, health.

Rules (seed 003, seed 000 "Creation, Discovery, and Merge", shared/reference/dsh-mnemon.md 6.2/6.7):

- A provider is *used* only when its distribution is installed (:mod:`.plugins`) and its service is
  configured and enabled in ``state/memory-providers.json``. Otherwise every data-plane call raises
  :class:`~mnemon_ls.errors.ProviderNotConfigured` (``reason`` ``not-installed`` | ``not-configured`` |
  ``disabled``) and nothing on disk changes.
- :meth:`ProviderHost.enable` opens the engine and lists its namespaces *before* writing anything: an engine
  that is missing or fails to open is :class:`~mnemon_ls.errors.ProviderUnavailable` and the provider file
  keeps its bytes. Then the enabled flag and the discovered spaces are written together.
- :meth:`ProviderHost.disable` removes the provider's local mappings (its spaces in the registry), keeps
  its service configuration, and never touches provider content.
- :meth:`ProviderHost.test` is read-only: it opens the engine in probe mode (no store is created where none
  is), reports :class:`~.providers.base.Health`, the namespaces and one recall of a probe query, and writes
  nothing under the storage root or in the provider's store; its ``ok`` is false when a step failed.
- Views list configured field *names*; credential values never leave the process.
- A provider file written by a newer version (:class:`~mnemon_ls.errors.FormatTooNew`) fails every
  operation here before anything opens or is written (:meth:`~.registry_model.RegistryState.require_providers`).
- Engines open lazily: the first call that needs one (recall, remember, ... through one of its spaces) opens
  it, once per :class:`ProviderHost` (per storage root and process); listing spaces, the wake cover and
  ``doctor`` (without ``--providers``: :meth:`ProviderHost.diagnose`) never open one.
- Every engine and space call runs under :func:`mnemon_ls.output.third_party`: what the engine prints,
  warns or logs goes to our log at debug level, never into the CLI's output or a server's stdout.
- :func:`call_with_timeout` runs one provider call on a daemon thread and gives up after ``timeout``
  seconds (:class:`~mnemon_ls.errors.ProviderTimedOut`); federated recall uses it so one slow provider
  never holds the others' evidence back. A call that timed out and is still running when the process ends
  is left behind with :func:`end_process` (the interpreter's finalisation would stop its thread inside the
  engine's native code, which aborts the process).
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from .. import output
from ..errors import (ConfirmationRequired, InvalidInput, MnemonError, ProviderNotConfigured, ProviderTimedOut,
                      ProviderUnavailable)
from ..findings import Finding
from . import plugins
from .providers.base import Capabilities, Health, ProviderEngine, ProviderPlugin, SpaceProvider
from .provider_availability import unavailable_reason
from .provider_fields import PROVIDER_LABELS, REMOTE_PROVIDERS, provider_label
from .registry import SpaceRegistry
from .registry_model import RegistryState, SpaceRecord

T = TypeVar("T")

#: The query of ``provider test``'s read-only recall (:meth:`ProviderHost.test`).
PROBE_QUERY = "mnemon-ls provider test probe"
#: Seconds a third-party provider call may take inside a federated recall (``providerTimeout``).
DEFAULT_TIMEOUT_SECONDS = 10.0


def call_with_timeout(fn: Callable[[], T], timeout: float, *, provider: str, space_id: str | None = None) -> T:
    """``fn()``, or :class:`ProviderTimedOut` after ``timeout`` seconds (the call goes on in a daemon thread
    and its late answer is dropped). Exceptions of ``fn`` are re-raised here."""
    box: queue.Queue = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            box.put((True, fn()))
        except BaseException as exc:  # handed to the caller
            box.put((False, exc))

    thread = threading.Thread(target=run, name=f"provider-{provider}", daemon=True)
    thread.start()
    try:
        ok, value = box.get(timeout=timeout)
    except queue.Empty:
        with _abandoned_lock:  # (finished ones are dropped, so a long-running server keeps only live ones)
            _abandoned.difference_update([t for t in _abandoned if not t.is_alive()])
            _abandoned.add(thread)
        raise ProviderTimedOut(f"provider {provider} did not answer within {timeout * 1000:.0f} ms (the setting "
                               f"providerTimeoutMs; `mnemon-ls provider test {provider}` says why it is slow or down)",
                               provider=provider, spaceId=space_id, timeoutMs=round(timeout * 1000)) from None
    if ok:
        return value
    raise value


_abandoned: set[threading.Thread] = set()
_abandoned_lock = threading.Lock()


def abandoned_calls() -> list[str]:
    """Thread names (``provider-<id>``) of the :func:`call_with_timeout` calls that timed out and are still
    running."""
    with _abandoned_lock:
        _abandoned.difference_update([t for t in _abandoned if not t.is_alive()])
        return sorted(t.name for t in _abandoned)


def end_process(code: int) -> int:
    """Called by the process entry point (:func:`mnemon_ls.__main__.main`) with the exit ``code`` it is about
    to return. When a provider call that timed out is still running (:func:`abandoned_calls`: e.g. a Mem0
    engine still importing gRPC and opening its store), the process ends here with ``os._exit(code)`` after
    flushing standard output, standard error and the log: letting the interpreter finalise would stop that
    daemon thread inside the engine's native code, and glibc aborts the process (``FATAL: exception not
    rethrown``, exit code 134) after the answer was printed. Nothing of ours is left unwritten: every file
    write is already committed (temp + fsync + rename) and no ``atexit`` handler is registered. Returns
    ``code`` when no such call is running."""
    if not abandoned_calls():
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(code)


class ProviderHost:
    """Opened third-party engines of ``registry``'s root (module doc). Thread-safe."""

    def __init__(self, registry: SpaceRegistry, *, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 on_forget: Callable[[str], None] | None = None) -> None:
        #: Called with a provider id whenever its engine is dropped (the service forgets its cached spaces).
        self.on_forget = on_forget
        self.registry = registry
        self.root = Path(registry.root)
        self.timeout = timeout
        self._engines: dict[str, ProviderEngine] = {}
        self._guard = threading.RLock()

    # ------------------------------------------------------------------ lookup

    @staticmethod
    def known_ids() -> list[str]:
        """The reference's provider ids, then those of any other installed provider or package this project ships
        (``postgres``), in order."""
        return [*PROVIDER_LABELS, *sorted((set(plugins.installed()) | set(plugins.PACKAGES)) - set(PROVIDER_LABELS))]

    def require_known(self, provider_id: Any) -> str:
        """``provider_id`` when it is one of :meth:`known_ids`, else :class:`InvalidInput` (``providerId``)
        listing the installed providers and the provider packages (the value itself is not repeated: it
        may be anything a person typed)."""
        if isinstance(provider_id, str) and provider_id in self.known_ids():
            return provider_id
        installed = ", ".join(sorted(plugins.installed())) or "none"
        raise InvalidInput("providerId", f"is not a known provider (installed: {installed}; provider packages: "
                                         f"{', '.join(sorted(plugins.PACKAGES))}; the reference's other providers: "
                                         f"{', '.join(p for p in PROVIDER_LABELS if p not in plugins.PACKAGES)})")

    def plugin(self, provider_id: str) -> ProviderPlugin:
        """The installed plugin of a known provider (:meth:`require_known`, :func:`.plugins.load` errors)."""
        return plugins.load(self.require_known(provider_id))

    def capabilities(self, provider_id: str, state: RegistryState | None = None) -> Capabilities | None:
        """The installed plugin's capabilities under its stored service fields (``capabilities_for``, when the
        plugin has it: a field may change what the provider does), ``None`` when it is not installed or
        broken. ``state``: the registry already read (read here otherwise)."""
        plugin = plugins.try_load(provider_id)
        if plugin is None:
            return None
        for_service = getattr(plugin, "capabilities_for", None)
        if for_service is None:
            return plugin.capabilities
        service = (state or self.registry.read()).services.get(provider_id)
        try:
            return for_service(service)
        except Exception:  # a provider's own code: a broken rule shows its declared capabilities
            return plugin.capabilities

    def usable(self, provider_id: str, state: RegistryState | None = None) -> bool:
        """Installed, configured and enabled (no engine is opened)."""
        state = state or self.registry.read()
        return provider_id in plugins.installed() and provider_id in state.services \
            and bool(state.enabled.get(provider_id))

    def _service(self, provider_id: str, state: RegistryState) -> dict[str, Any]:
        if provider_id not in plugins.installed():
            raise plugins.not_installed(provider_id)
        if provider_id not in state.services:
            raise ProviderNotConfigured(f"provider {provider_id} is installed but not configured for the storage "
                                        f"root {self.root} (each storage root has its own providers: run "
                                        f"`mnemon-ls provider enable {provider_id}` for this workspace; "
                                        "--set KEY=VALUE changes a field from its default)",
                                        provider=provider_id, reason="not-configured")
        return dict(state.services[provider_id])

    def _open(self, provider_id: str, service: Mapping[str, Any]) -> ProviderEngine:
        """The opened engine, every call of it (and of its spaces, :meth:`space`) run under
        :func:`mnemon_ls.output.third_party`: what it prints, warns or logs goes to our log at debug."""
        plugin = self.plugin(provider_id)
        from .provider_fields import check_outside_roots, is_path_field, validate_endpoint
        rules = getattr(plugin, "field_rules", {}) or {}
        for name, value in service.items():  # a provider file edited by hand
            if is_path_field(name) and isinstance(value, str) and value:
                check_outside_roots(value, f"services.{name}", (self.root,))
            if isinstance(value, str) and value and (name == "endpoint" or name.endswith("Endpoint")
                                                     or getattr(rules.get(name), "kind", None) == "url"):
                # the configure rules again (never echoing the value): a credential typed into the file by
                # hand (https://user:pw@host) would otherwise reach the engine and its error messages
                validate_endpoint(value, f"services.{name}")
        try:
            with output.third_party():
                return output.ThirdPartyCalls(plugin.open(dict(service), root=self.root))  # type: ignore[return-value]
        except MnemonError:
            raise
        except Exception as exc:
            raise ProviderUnavailable(f"provider {provider_id}: the engine failed to open: {type(exc).__name__}: "
                                      f"{exc}", provider=provider_id, reason="engine-failed") from None

    def engine(self, provider_id: str) -> ProviderEngine:
        """The opened engine of an installed, configured and enabled provider (cached)."""
        with self._guard:
            cached = self._engines.get(provider_id)
        if cached is not None:
            return cached
        state = self.registry.read().require_providers()
        service = self._service(provider_id, state)
        if not state.enabled.get(provider_id):
            raise ProviderNotConfigured(f"provider {provider_id} is configured but disabled (mnemon-ls provider "
                                        f"enable {provider_id})", provider=provider_id, reason="disabled")
        made = self._open(provider_id, service)  # outside the lock: opening may hang (a locked database)
        with self._guard:
            kept = self._engines.setdefault(provider_id, made)
        if kept is not made:
            made.close()
        return kept

    def space(self, record: SpaceRecord) -> SpaceProvider:
        """The data plane of a third-party space."""
        space = self.engine(record.provider_id).space(dict(record.connection), space_id=record.id)
        return output.ThirdPartyCalls(space)  # type: ignore[return-value]

    def forget_engine(self, provider_id: str) -> None:
        """Close and drop an opened engine (after its configuration changed)."""
        with self._guard:
            engine = self._engines.pop(provider_id, None)
        if self.on_forget is not None:
            self.on_forget(provider_id)
        if engine is not None:
            engine.close()

    def close(self) -> None:
        """Close every opened engine."""
        with self._guard:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()

    # ------------------------------------------------------------------ configuration

    def view(self, provider_id: str, state: RegistryState | None = None) -> dict[str, Any]:
        """``{providerId, label, kind: local|remote, installed, distribution, configured, enabled, usable,
        configuredFields, configuredSecrets, spaces, capabilities, fields: {service, memory, secret},
        unavailable?}``: field names only, never values; ``unavailable`` (only for an engine that no installed
        package provides and that cannot run on this project's machines) is the reason, from
        :mod:`.provider_availability`."""
        state = state or self.registry.read()
        view = self.registry.provider_plane.service_view(state, provider_id)
        plugin = plugins.try_load(provider_id)
        installed = provider_id in plugins.installed()
        view.update(
            label=provider_label(provider_id),
            kind=getattr(plugin, "kind", None) or ("remote" if provider_id in REMOTE_PROVIDERS else "local"),
            installed=installed, distribution=plugins.distribution_of(provider_id),
            usable=installed and plugin is not None and view["configured"] and view["enabled"],
            capabilities=plugin.capabilities.to_dict() if plugin is not None else None,
            fields={"service": list(plugin.service_fields), "memory": list(plugin.memory_fields),
                    "secret": sorted(plugin.secret_fields)} if plugin is not None else None)
        reason = None if installed else unavailable_reason(provider_id)
        if reason is not None:  # an engine no package provides, and why (provider_availability.py)
            view["unavailable"] = reason
        return view

    def list(self) -> list[dict[str, Any]]:
        """:meth:`view` of every known provider (reference ids first, then other installed ones); a configured
        provider that has a server to reach also gets ``connection`` (:meth:`connection`)."""
        state = self.registry.read().require_providers()
        views = [self.view(pid, state) for pid in self.known_ids()]
        for view in views:
            found = self.connection(view["providerId"], state) if view["configured"] else None
            if found is not None:
                view["connection"] = found
        return views

    def connection(self, provider_id: str, state: RegistryState | None = None) -> dict[str, Any] | None:
        """``{state: connected|unreachable, location, message, latencyMs}`` of an installed, configured
        provider whose plugin checks its server (:mod:`.provider_connection`: read-only, opens no engine,
        never a credential), else ``None``."""
        state = state or self.registry.read()
        plugin = plugins.try_load(provider_id) if provider_id in state.services else None
        if plugin is None:
            return None
        from .provider_connection import check

        return check(plugin, provider_id, state.services[provider_id], self.timeout, call_with_timeout)

    def configure(self, provider_id: str, fields: Mapping[str, Any] | None = None, *,
                  clear_secrets: tuple[str, ...] | list[str] = (), force: bool = False) -> dict[str, Any]:
        """Save service fields (checked against the provider's schema first,
        :func:`.provider_fields.validate_service_fields`; merged over the stored ones; ``None`` or a blank
        value clears a field; the plugin must be installed so its fields are known). An enabled provider is re-opened
        and re-discovered with the new fields first: when that fails nothing is written. Changing a path field
        (``dataPath``...) of an enabled provider that has mapped spaces points those spaces at another store: refused
        with :class:`~mnemon_ls.errors.ConfirmationRequired` (``field``, ``warnings``; nothing written) unless
        ``force``; with ``force`` the view carries ``warnings``: ``"space NAME now reads NEW; its N items stay in OLD"``
        per mapped space. Returns :meth:`view` (plus ``warnings`` when there are any)."""
        from .provider_fields import merge_service, validate_service_fields

        self.plugin(provider_id)
        clean = validate_service_fields(fields or {}, provider_id, (self.root,))
        self.registry.provider_plane.validate_clear_secrets(provider_id, clear_secrets)
        state = self.registry.read().require_providers()
        merged = merge_service(state.services.get(provider_id, {}), clean, provider_id)
        if state.enabled.get(provider_id):
            for name in clear_secrets:
                merged.pop(name, None)
            engine = self._open(provider_id, merged)
            try:
                found = engine.discover() if self.plugin(provider_id).capabilities.discover else []
                warnings = self._moved_store(provider_id, state, merged, engine, force)
            finally:
                engine.close()
            self.registry.provider_plane.configure_service(provider_id, clean, clear_secrets=clear_secrets)
            self.registry.provider_plane.sync_namespaces(provider_id, [n.to_sync() for n in found])
            self.forget_engine(provider_id)
        else:
            warnings = []
            self.registry.provider_plane.configure_service(provider_id, clean, clear_secrets=clear_secrets)
        view = self.view(provider_id)
        return view | {"warnings": warnings} if warnings else view

    def _moved_store(self, provider_id: str, state: Any, merged: Mapping[str, Any], new_engine: Any,
                     force: bool) -> list[str]:
        """The warnings of a configure that changes a path field of an enabled provider with mapped spaces
        (:meth:`configure`); raises :class:`ConfirmationRequired` without ``force``."""
        from .provider_fields import is_path_field, service_schema

        stored = state.services.get(provider_id, {})
        rules = service_schema(provider_id)[3]
        moved = [name for name in sorted(set(stored) | set(merged))
                 if (is_path_field(name) or getattr(rules.get(name), "kind", None) == "path")
                 and stored.get(name) != merged.get(name)]
        spaces = [b for b in state.provider_bodies if b.provider_id == provider_id]
        if not moved or not spaces:
            return []
        counts: dict[str, int | None] = {}
        old_location = "the old store"
        try:
            old = self._open(provider_id, {**stored, "probe": True})
            try:
                old_location = old.health().location or old_location
                counts = {n.external_id: n.items for n in old.discover()}
            finally:
                old.close()
        except MnemonError:
            pass  # the old store does not open: the warning names it without counts
        new_location = new_engine.health().location
        warnings = []
        for body in spaces:
            items = counts.get(body.external_id)
            held = (f"its {items} item stays" if items == 1 else f"its {items} items stay" if items is not None
                    else "its items stay")
            warnings.append(f"space {body.name} now reads {new_location}; {held} in {old_location}")
        if not force:
            raise ConfirmationRequired(
                f"services.{moved[0]}: changing it points the mapped spaces at another store ("
                + "; ".join(warnings) + "); give --force (force: true) to change it anyway",
                field=f"services.{moved[0]}", warnings=warnings)
        return warnings

    def enable(self, provider_id: str, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Open the engine with the stored (plus ``fields``) configuration, list its namespaces, then write
        the enabled flag and the discovered spaces (module doc). Returns :meth:`view` plus ``health``,
        ``discovered`` (space ids) and ``renamed``: the spaces the naming rule gave another name or id than
        the provider's because a space made while the provider was disabled holds it (the shape of
        :meth:`~.registry_providers.ProviderPlane.sync_namespaces`; that space keeps its name and id)."""
        from .provider_fields import merge_service, validate_service_fields

        plugin = self.plugin(provider_id)
        clean = validate_service_fields(fields or {}, provider_id, (self.root,))
        state = self.registry.read().require_providers()
        service = merge_service(state.services.get(provider_id, {}), clean, provider_id)
        engine = self._open(provider_id, service)
        try:
            health = engine.health()
            if not health.ok:
                raise ProviderUnavailable(f"provider {provider_id}: {health.message or 'the engine is not healthy'}",
                                          provider=provider_id, reason="engine-failed")
            found = engine.discover() if plugin.capabilities.discover else []
        except BaseException:
            engine.close()
            raise
        self.forget_engine(provider_id)
        self.registry.provider_plane.configure_service(provider_id, clean, enabled=True)
        renamed: list[dict[str, Any]] = []
        spaces = self.registry.provider_plane.sync_namespaces(provider_id,
                                                              [n.to_sync() for n in found], renamed=renamed)
        with self._guard:
            self._engines[provider_id] = engine
        return self.view(provider_id) | {"health": health.to_dict(), "discovered": [s.id for s in spaces],
                                         "renamed": renamed}

    def disable(self, provider_id: str) -> dict[str, Any]:
        """Disable: drop the provider's spaces from the registry (never its data), keep its configuration."""
        self.require_known(provider_id)
        if provider_id not in self.registry.read().require_providers().services:
            raise ProviderNotConfigured(f"provider {provider_id} is not configured; nothing to disable",
                                        provider=provider_id, reason="not-configured")
        if not self.registry.read().enabled.get(provider_id):
            return self.view(provider_id) | {"changed": False}
        self.forget_engine(provider_id)
        self.registry.provider_plane.configure_service(provider_id, {}, enabled=False)
        return self.view(provider_id) | {"changed": True}

    def test(self, provider_id: str) -> dict[str, Any]:
        """Read-only check of a configured provider (enabled or not), with the stored configuration: open the
        engine in probe mode (``probe``: an engine whose store does not exist yet opens nothing and reports
        unhealthy; no store, table or file is created), its health, its namespaces, and one recall of
        :data:`PROBE_QUERY` through the first namespace (or the engine's default one). Nothing is written,
        under the storage root or in the provider's store.

        Returns ``{providerId, ok, health: Health, recall: {ok, query, namespace, items, latencyMs,
        message} | None (not run: the engine is unhealthy), namespaces: [{externalId, name, items}]}``;
        ``ok`` is false when the health or the recall failed (the CLI then exits 1). Raises what opening
        raises (:class:`ProviderUnavailable`, :class:`ProviderNotConfigured`, :class:`InvalidInput`)."""
        self.require_known(provider_id)
        state = self.registry.read().require_providers()
        service = self._service(provider_id, state)
        started = time.perf_counter()
        engine = self._open(provider_id, {**service, "probe": True})
        try:
            health = engine.health()
            found = engine.discover() if health.ok and self.plugin(provider_id).capabilities.discover else []
            recall = self._probe_recall(provider_id, engine, found) if health.ok else None
        finally:
            engine.close()
        if health.latency_ms is None:
            health = Health(health.ok, health.engine, health.location, health.items,
                            (time.perf_counter() - started) * 1000, health.message, health.details)
        return {"providerId": provider_id, "ok": bool(health.ok and recall is not None and recall["ok"]),
                "health": health.to_dict(), "recall": recall,
                "namespaces": [{"externalId": n.external_id, "name": n.name, "items": n.items} for n in found]}

    @staticmethod
    def _probe_recall(provider_id: str, engine: ProviderEngine, found: list[Any]) -> dict[str, Any]:
        """One read-only ``search`` of :data:`PROBE_QUERY` (limit 1) in the first namespace of ``found`` (else
        the engine's default namespace): ``{ok, query, namespace, items, latencyMs, message}``."""
        namespace = found[0] if found else None
        started = time.perf_counter()
        out: dict[str, Any] = {"query": PROBE_QUERY, "namespace": namespace.external_id if namespace else None}
        try:
            with output.third_party():
                space = engine.space(dict(namespace.connection) if namespace else {}, space_id=f"{provider_id}-probe")
                outcome = space.search(PROBE_QUERY, limit=1)
        except InvalidInput as exc:  # no namespace to search in (Mem0 needs a user/agent/run id)
            return out | {"ok": True, "items": None, "latencyMs": None,
                          "message": f"recall not run: no namespace to search yet ({exc.rule})"}
        except Exception as exc:
            said = exc.message if isinstance(exc, MnemonError) else f"{type(exc).__name__}: {exc}"
            return out | {"ok": False, "items": None, "latencyMs": round((time.perf_counter() - started) * 1000, 3),
                          "message": f"recall failed: {said}"}
        items = len(outcome.items)
        return out | {"ok": True, "items": items, "latencyMs": round((time.perf_counter() - started) * 1000, 3),
                      "message": f"recall answered ({items} item{'' if items == 1 else 's'})"}

    def discover(self, provider_id: str) -> list[SpaceRecord]:
        """Re-list an enabled provider's namespaces into spaces (reference 6.2 sync rules)."""
        self.require_known(provider_id)
        engine = self.engine(provider_id)
        if not self.plugin(provider_id).capabilities.discover:
            return [b for b in self.registry.read().provider_bodies if b.provider_id == provider_id]
        found = engine.discover()
        return self.registry.provider_plane.sync_namespaces(provider_id, [n.to_sync() for n in found])

    def create_space(self, provider_id: str, name: str, description: str, *, active: bool = False) -> SpaceRecord:
        """``space create --provider``: a new namespace in the provider, mapped as a space."""
        plugin = self.plugin(provider_id)
        if not plugin.capabilities.create_namespace:
            raise InvalidInput("provider", f"{provider_label(provider_id)} cannot create namespaces; enable it to "
                                           "discover the existing ones (mnemon-ls provider enable)")
        namespace = self.engine(provider_id).create_namespace(name, description)
        return self.registry.provider_plane.add_provider_space(provider_id, namespace.external_id, name, description,
                                                connection=namespace.connection, active=active)

    # ------------------------------------------------------------------ doctor

    def diagnose(self, *, open_engines: bool = False) -> list[Finding]:
        """``mnemon-ls doctor`` findings of the third-party providers, subject ``provider <id>``: one per
        configured provider (none when nothing is configured), from package metadata and
        ``state/memory-providers.json`` alone (installed or not, enabled, spaces and active spaces, configured
        field names):
        ``ok``, or ``warning`` when an enabled provider's package is not installed (its spaces are
        unavailable) or its server cannot be reached (the connection check of a provider that has one,
        :meth:`connection`: read-only, quick). No engine is opened (importing and opening one can take seconds) unless
        ``open_engines``: then every enabled, installed provider is opened as :meth:`test` does (health,
        namespaces; writes nothing) and a failure is a ``problem`` naming the error."""
        state = self.registry.read()
        installed = plugins.installed()
        findings: list[Finding] = []
        if state.providers_refused is not None:  # a newer version's file: read-only, nothing to check here
            return [Finding("warning", "providers", state.providers_refused.message,
                            "upgrade mnemon-ls; the file is left as it is")]
        for provider_id in self.known_ids():
            configured, enabled = provider_id in state.services, bool(state.enabled.get(provider_id))
            if not configured:  # an installed package alone is not a choice to use it (seed 003)
                continue
            subject = f"provider {provider_id}"
            view = self.view(provider_id, state)
            spaces = [b for b in state.provider_bodies if b.provider_id == provider_id]
            fields = ", ".join([*view["configuredFields"], *(f"{n} (secret)" for n in view["configuredSecrets"])])
            summary = (f"{'enabled' if enabled else 'configured, disabled'}; {len(spaces)} "
                       f"space{'' if len(spaces) == 1 else 's'} "
                       f"({sum(1 for b in spaces if b.active)} active); fields: {fields or 'none (defaults)'}")
            if provider_id not in installed:
                findings.append(Finding("warning" if enabled else "ok", subject, f"{summary}; its package is not "
                                        "installed" + (", so its spaces are unavailable" if enabled else ""),
                                        plugins.install_hint(provider_id)))
                continue
            if not (enabled and open_engines):
                findings.append(self._unopened_finding(provider_id, state, subject, f"{summary}; "
                                                       f"{view['distribution']}", enabled))
                continue
            started = time.perf_counter()
            try:
                tested = self.test(provider_id)
            except MnemonError as exc:
                findings.append(Finding("problem", subject, f"{summary}; the engine does not work: {exc.message}",
                                        f"`mnemon-ls provider test {provider_id}` after fixing it; `mnemon-ls "
                                        f"provider configure {provider_id} --set KEY=VALUE` changes its fields"))
                continue
            health = tested["health"]
            level = "ok" if tested["ok"] else "problem"
            findings.append(Finding(level, subject, f"{summary}; engine {health['engine']}: "
                                    f"{health['message'] or ('healthy' if health['ok'] else 'not healthy')}; "
                                    + (f"{tested['recall']['message']}; " if tested["recall"] and
                                       not tested["recall"]["ok"] else "") +
                                    f"{len(tested['namespaces'])} "
                                    f"namespace{'' if len(tested['namespaces']) == 1 else 's'} (opened and checked in "
                                    f"{(time.perf_counter() - started) * 1000:.0f} ms)"))
        return findings

    def _unopened_finding(self, provider_id: str, state: RegistryState, subject: str, summary: str,
                          enabled: bool) -> Finding:
        """The doctor's finding of a provider whose engine it does not open: ``ok``, with the connection state
        when the provider checks its server (:meth:`connection`); ``warning`` when an enabled one's cannot be
        reached."""
        from .provider_connection import describe

        found = self.connection(provider_id, state)
        test = f"`mnemon-ls provider test {provider_id}`"
        if found is not None and found["state"] != "connected":
            return Finding("warning" if enabled else "ok", subject, f"{summary}; {describe(found)}",
                           f"start the server or correct the fields (`mnemon-ls provider configure {provider_id} "
                           f"--set KEY=VALUE`, `--secret KEY`), then {test}" +
                           ("; its spaces are unavailable until then" if enabled else ""))
        return Finding("ok", subject, summary + (f"; {describe(found)}" if found is not None else "") +
                       ("; engine not opened" if enabled else ""),
                       f"{test} or `mnemon-ls doctor --providers` opens it and checks its health" if enabled else "")
