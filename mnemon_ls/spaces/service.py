"""The Memory Spaces service of one storage root: the directory, routing, federated recall, branch scope, cover.

Rules (shared/reference/dsh-mnemon.md 6.2-6.6, seed 000 "Memory Spaces", DESIGN.md section 4):

- Every operation names a space by its id or its unique name (:func:`.naming.resolve`: an unknown one is
  answered with suggestions, a name two spaces share with ``ambiguous-match``); names are unique in the root
  ignoring case (:func:`.naming.require_free_name`, on create and rename).
- Reads (recall, related, status) use active spaces only; naming an inactive or unknown space is
  :class:`~mnemon_ls.errors.InvalidInput` (``spaces[i]`` / ``spaceId``) and nothing runs.
- ``remember`` may target any registered space; without ``space_id`` exactly one space must be active.
  A *committed* remember into an inactive space activates it (``receipt.activated``). ``link`` and
  ``forget`` name their space explicitly and never change activation.
- Create: the first native space of a root without stores gets id ``default``, later ones UUIDs; new
  spaces are inactive unless ``active=True``. Delete refuses the last native store, and a space holding
  live items unless confirmed (``ConfirmationRequired``, nothing changed); deleting the CLI's
  default store (``<root>/active``) first points it at another store (registered active first, then by
  id, else any store directory); a native store is moved to ``data/.deleted/`` (:mod:`.deleted`), never
  erased. Merge is native-only and non-destructive: each source is imported
  into the target and deactivated only when every item is accounted for (``imported + skipped ==
  items`` and no error).
- Recall: candidates from every selected space (``candidateLimit`` of the policy), federated by
  reciprocal-rank fusion (``1/(60 + rank)``) when the spaces span more than one provider, else by score;
  then the recall-quality policy (:mod:`.policy`); at most :data:`~.model.MAX_RESULTS` (12) results.
  A failing space becomes a source with status ``unavailable`` and a hint, never a failed recall.
  For an ``assistant`` audience (MCP tools, hooks, the VS Code language-model tools: decided by
  :func:`mnemon_ls.ops.audience.audience_of`) an item found by meaning alone whose tier is ``low`` is not
  sent: it is counted in ``withheld.lowConfidence`` (the ones the policy would have sent) instead.
- Branch scope: an item tagged ``branch:<name>`` belongs to those branches. ``branch_recall``:
  ``filter`` (default) drops items tagged only for other branches, ``label`` keeps them with
  ``branchLabel: "other-branch"``, ``off`` ignores the tags. When ``branch`` is ``None`` (no branch
  known), branch-tagged items follow ``detached_head_policy``: ``hide`` (default) drops them, ``show``
  keeps them (``branchLabel: "branch-unknown"``). Hidden counts are reported in ``hidden``.

Layout: this module holds the service's providers and space directory (create, update, activate, delete,
status, reindex, provider services); its other methods come from mixins: :mod:`.service_writes` (targets,
remember, link, forget, merge) and :mod:`.service_recall` (get_item, related, federated recall, wake cover,
and the :class:`RecallResult`/:class:`SpacesCover` shapes, re-exported here).
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .. import fsio
from ..errors import ConfirmationRequired, InvalidInput, MnemonError, choice_rule
from ..redact import Scrubber
from .accessflush import AccessFlusher
from .deleted import set_aside
from .errors import SpaceRefused
from .model import Clock, utc_now
from .naming import require_free_name, resolve
from .policy import RecallQuality
from .providers.base import Capabilities, SpaceProvider
from .providers.cli import CliProvider, CliRunner
from .providers.native import DB_FILE, NativeProvider
from .provider_fields import PROVIDER_LABELS, provider_label
from .registry import SpaceRegistry
from .registry_model import NATIVE_PROVIDER, RegistryState, SpaceRecord
from .service_recall import (
    BRANCH_RECALL_MODES,
    DETACHED_HEAD_POLICIES,
    RRF_K,
    RecallResult,
    SpacesCover,
    SpacesRecall,
)
from .service_writes import SpacesWrites
from .thirdparty import DEFAULT_TIMEOUT_SECONDS, ProviderHost

#: Public names; the recall shapes and constants are defined in :mod:`.service_recall` and re-exported here.
__all__ = ["BRANCH_RECALL_MODES", "DETACHED_HEAD_POLICIES", "NATIVE_DRIVERS", "RRF_K", "CliOptions", "RecallResult",
           "SpaceView", "SpacesCover", "SpacesService"]

NATIVE_DRIVERS = ("embedded", "cli")


@dataclass(frozen=True, slots=True)
class CliOptions:
    """How the ``cli`` native driver runs ``mnemon``: ``path`` (``None``: discovery), ``timeout`` seconds,
    ``embed_endpoint`` (``MNEMON_EMBED_ENDPOINT`` for the child, ``None``: inherited)."""

    path: str | None = None
    timeout: float = 10.0
    embed_endpoint: str | None = None


@dataclass(slots=True)
class SpaceView:
    """A space as clients see it (``to_dict()``): ``{id, name, description, active, providerId,
    providerLabel, kind: native|third-party, driver?: embedded|cli, location: {dataDir, store, path} |
    {externalId, connectionFields}, capabilities, available, createdAt, updatedAt, metadataSource?,
    placement?}``. Connection values and credentials are never included (field names only)."""

    record: SpaceRecord
    driver: str | None
    root: Path
    capabilities: Capabilities | None
    available: bool

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        data: dict[str, Any] = {
            "id": r.id, "name": r.name, "description": r.description, "active": r.active,
            "providerId": r.provider_id,
            "providerLabel": "Mnemon" if r.native else provider_label(r.provider_id),
            "kind": "native" if r.native else "third-party",
        }
        if r.native:
            data["driver"] = self.driver
            data["location"] = {"dataDir": str(self.root), "store": r.id,
                                "path": str(self.root / "data" / r.id / DB_FILE)}
        else:
            data["location"] = {"externalId": r.external_id, "connectionFields": sorted(r.connection)}
            data["metadataSource"] = r.metadata_source
        data["capabilities"] = self.capabilities.to_dict() if self.capabilities else None
        data["available"] = self.available
        data["createdAt"] = r.created_at
        data["updatedAt"] = r.updated_at
        if r.placement is not None:
            data["placement"] = r.placement
        return data


class SpacesService(SpacesWrites, SpacesRecall):
    """Memory Spaces of one storage root (module doc).

    ``clock`` returns UTC now; ``effective_store`` overrides the CLI's default store (``<root>/active``);
    ``quality`` is the recall-quality configuration (``quality_auto``: its policy is ``recallPolicy``
    ``auto``'s fallback, see :attr:`quality_auto`); ``native_driver`` ``embedded`` (default, no binary
    needed) or ``cli`` (drive an installed ``mnemon`` with ``cli``); ``lock_timeout`` seconds bound every
    wait for another writer; ``track_access`` bumps the CLI's access counters on reads; ``background_access``
    writes them in a thread of their own (a long-lived server, :mod:`.accessflush`), each write inside
    ``access_gate()`` when given (the host's pack gate). Thread-safe.
    """

    def __init__(self, root: Path, *, clock: Clock = utc_now, effective_store: str | None = None,
                 quality: RecallQuality | None = None, native_driver: str = "embedded",
                 cli: CliOptions | None = None, lock_timeout: float = 10.0, track_access: bool = True,
                 secrets: str = "redact", provider_timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 semantic: Any = None, quality_auto: bool = False, background_access: bool = False,
                 access_gate: Any = None) -> None:
        #: The process's :class:`mnemon_ls.semantic.engine.SemanticEngine` (hybrid recall of native
        #: spaces), or ``None`` for keyword-only recall.
        self.semantic = semantic
        #: Why :attr:`semantic` is ``None`` (:func:`mnemon_ls.semantic.off_reason`), shown by ``space status``;
        #: set by the Host that chose it.
        self.semantic_off_reason: str | None = None
        #: The ``secrets`` setting: item content, tags, entities and space descriptions pass
        #: :mod:`mnemon_ls.redact` first; a credential in a space name or a branch is refused.
        self.secrets = Scrubber(secrets).mode
        if native_driver not in NATIVE_DRIVERS:
            raise InvalidInput("nativeDriver", choice_rule(NATIVE_DRIVERS, native_driver))
        self.root = Path(root)
        self.clock = clock
        self.quality = quality or RecallQuality()
        #: ``recallPolicy`` ``auto``: a recall without its own ``quality`` uses ``balanced-v1`` instead of
        #: :attr:`quality`'s policy while :attr:`semantic` is ready (:meth:`recall`).
        self.quality_auto = quality_auto
        self.native_driver = native_driver
        self.cli_options = cli or CliOptions()
        self.lock_timeout = lock_timeout
        self.track_access = track_access
        self.registry = SpaceRegistry(self.root, clock=clock, effective_store=effective_store,
                                      lock_timeout=lock_timeout)
        #: Third-party providers (installed + configured + enabled); ``provider_timeout`` seconds bound
        #: each of their calls inside a federated recall.
        self.thirdparty = ProviderHost(self.registry, timeout=provider_timeout, on_forget=self._forget_provider)
        self._providers: dict[str, SpaceProvider] = {}
        self._guard = threading.RLock()
        self._runner: CliRunner | None = None
        #: ``background_access`` (a long-lived server): the access counters of the native spaces are written by
        #: this thread of their own, never inside a read (:mod:`.accessflush`).
        self.access_flusher = AccessFlusher(access_gate) if background_access else None
        self._access_gate = access_gate

    # ------------------------------------------------------------------ providers

    @property
    def runner(self) -> CliRunner:
        """The ``mnemon`` runner of this root (``cli`` driver)."""
        if self._runner is None:
            self._runner = CliRunner(self.root, cli_path=self.cli_options.path, timeout=self.cli_options.timeout,
                                     embed_endpoint=self.cli_options.embed_endpoint)
        return self._runner

    def provider(self, record: SpaceRecord, *, create: bool = False) -> SpaceProvider:
        """The data plane of ``record`` (cached). A third-party space needs its provider installed, configured
        and enabled (:class:`~mnemon_ls.errors.ProviderNotConfigured` otherwise; an engine that does not
        open is :class:`ProviderUnavailable`)."""
        if not record.native:  # opened outside the lock: a hung engine must not block the other spaces
            with self._guard:
                cached = self._providers.get(record.id)
            if cached is not None:
                return cached
            made_third = self.thirdparty.space(record)
            with self._guard:
                return self._providers.setdefault(record.id, made_third)
        with self._guard:
            cached = self._providers.get(record.id)
            if cached is not None:
                return cached
            if self.native_driver == "cli":
                made: SpaceProvider = CliProvider(self.runner, record.id)
            else:
                made = NativeProvider(self.root / "data" / record.id / DB_FILE, space_id=record.id, clock=self.clock,
                                      lock_timeout=self.lock_timeout, create=create,
                                      track_access=self.track_access, semantic=self.semantic,
                                      access_flusher=self.access_flusher)
            self._providers[record.id] = made
            return made

    def _capabilities(self, record: SpaceRecord, state: RegistryState | None = None) -> Capabilities | None:
        if not record.native:
            return self.thirdparty.capabilities(record.provider_id, state)
        return CliProvider.capabilities if self.native_driver == "cli" else NativeProvider.capabilities

    def _forget_provider(self, provider_id: str) -> None:
        """Drop the cached data planes of a third-party provider's spaces (its engine is being closed)."""
        with self._guard:
            for key in [k for k in self._providers if k.startswith(f"{provider_id}-")]:
                self._providers.pop(key)

    def _drop_provider(self, space_id: str) -> None:
        with self._guard:
            provider = self._providers.pop(space_id, None)
        if provider is not None:
            provider.close()

    def flush_access(self) -> None:
        """Write the batched access counters of recent reads (embedded stores); call it when idle. With
        ``background_access`` they are written on a connection of their own (reads go on meanwhile)."""
        with self._guard:
            providers = list(self._providers.values())
        aside = self.access_flusher is not None
        for provider in providers:
            flush = getattr(provider, "flush_access_aside" if aside else "flush_access", None)
            if flush is not None:
                flush()

    def close(self) -> None:
        """Close every open store (pending access counters are written first: the background write under way
        is waited for). The service may be used again (its stores reopen)."""
        with self._guard:
            providers, self._providers = list(self._providers.values()), {}
            flusher = self.access_flusher
            if flusher is not None:
                self.access_flusher = AccessFlusher(self._access_gate)  # for the stores opened after this close
        if flusher is not None:
            flusher.close()
        for provider in providers:
            provider.close()
        self.thirdparty.close()

    # ------------------------------------------------------------------ directory

    def state(self) -> RegistryState:
        """The registry (repaired and with discovered stores registered; see :class:`SpaceRegistry`)."""
        return self.registry.read()

    def notices(self) -> list[dict[str, Any]]:
        """Registry repairs done by this service (``[{file, reason, quarantined, recovered, message}]``)."""
        return [p.to_dict() for p in self.registry.notices]

    def _view(self, record: SpaceRecord, state: RegistryState | None = None) -> SpaceView:
        available = record.native or self.thirdparty.usable(record.provider_id, state)
        return SpaceView(record, self.native_driver if record.native else None, self.root,
                         self._capabilities(record, state), available)

    def list_spaces(self, *, active_only: bool = False) -> list[SpaceView]:
        """Every registered space (native first, catalog order), or the active ones."""
        state = self.state()
        return [self._view(r, state) for r in state.all if r.active or not active_only]

    def get_space(self, space_id: str) -> SpaceView:
        """One space; :class:`InvalidInput` (``spaceId``) when unknown."""
        return self._view(resolve(self.state(), space_id))

    def create_space(self, name: str, description: str, *, active: bool = False,
                     provider: str | None = None) -> SpaceView:
        """Create a native space and its store (module doc for the id rule), all or nothing. With a
        third-party ``provider`` (installed, enabled, ``capabilities.create_namespace``) the provider makes
        the namespace and the space maps it (:meth:`.thirdparty.ProviderHost.create_space`).

        Every field is validated first (:class:`InvalidInput` naming ``name``/``description``, nothing
        touched). The embedded driver builds ``mnemon.db`` in a staging directory ``data/.creating-*`` and
        :meth:`SpaceRegistry.publish_native` renames it to ``data/<id>`` and registers it under the registry
        lock; the ``cli`` driver has ``mnemon`` create ``data/<id>`` and removes it again if registering
        fails. Any failure (ENOSPC, ``sqlite3`` "database or disk is full", an I/O error) is raised after
        removing what was made: no store is left for discovery and no registry entry is written."""
        from .model import validate_description, validate_name
        scrub = Scrubber(self.secrets)
        name, description = scrub.identifier("name", name), scrub.text("description", description)
        name, description = validate_name(name), validate_description(description)
        require_free_name(self.state().all, name)  # again under the registry lock for native spaces
        if provider is not None and provider != NATIVE_PROVIDER:
            return self._view(self.thirdparty.create_space(provider, name, description, active=bool(active)))
        self.state().require_native()  # before a store is made: a newer version's catalog is read-only here
        if self.native_driver == "cli":
            space_id = self.registry.new_native_id(self.state())
            try:
                self.runner.create_store(space_id)
                record = self.registry.add_native(space_id, name, description, active=bool(active))
            except BaseException:
                shutil.rmtree(self.root / "data" / space_id, ignore_errors=True)
                raise
            return self._view(record)
        self.state()  # repairs and discovery first, so the new store is not "discovered" by them
        staged = self.registry.staging_dir()
        try:
            provider = NativeProvider(staged / DB_FILE, space_id=staged.name, clock=self.clock,
                                      lock_timeout=self.lock_timeout, create=True, track_access=self.track_access)
            try:
                provider.count()  # creates the database in the CLI's schema
            finally:
                provider.close()
            record = self.registry.publish_native(staged, name, description, active=bool(active))
        finally:
            if staged.exists():
                shutil.rmtree(staged, ignore_errors=True)
        return self._view(record)

    def update_space(self, space_id: str, *, name: str | None = None, description: str | None = None) -> SpaceView:
        """Rename / re-describe a space."""
        scrub = Scrubber(self.secrets)
        name, description = scrub.identifier("name", name), scrub.text("description", description)
        record = resolve(self.state(), space_id)
        if name is not None:
            from .model import validate_name

            name = validate_name(name)
            require_free_name(self.state().all, name, except_id=record.id)
        return self._view(self.registry.update(record.id, name=name, description=description, unique_name=True))

    def activate(self, space_id: str) -> SpaceView:
        """Make a space take part in reads."""
        return self._view(self.registry.update(resolve(self.state(), space_id).id, active=True))

    def deactivate(self, space_id: str) -> SpaceView:
        """Keep a space out of reads (its data and the CLI's default store are unchanged)."""
        return self._view(self.registry.update(resolve(self.state(), space_id).id, active=False))

    def delete_space(self, space_id: str, *, confirm: bool = False) -> dict[str, Any]:
        """Delete a space (module doc). A space that holds live items (or whose count cannot be read) needs
        ``confirm``: without it :class:`~mnemon_ls.errors.ConfirmationRequired` (``data``: ``field``
        ``"confirm"``, ``spaceId``, ``spaceName``, ``items``: the live items, ``None`` when not countable) and
        nothing changes. Native: the store directory is moved to ``data/.deleted/<stamp>-<id>/``, never erased
        (:func:`.deleted.set_aside`). Returns ``{"deleted", "providerId", "items", "keptAt": <the copy's
        absolute path, or None>, "defaultStore": <the CLI's default store afterwards or None>, "message"}``."""
        state = self.state()
        record = resolve(state, space_id)
        space_id = record.id
        stores = self.registry.store_dirs()
        others = [s for s in stores if s != space_id]
        if record.native and space_id in stores and not others:
            raise SpaceRefused(f"space {space_id} holds the last native store of this root and cannot be deleted "
                               "(deactivate it instead)", spaceId=space_id, reason="last native store")
        items = self._live_items(record)
        if items != 0 and confirm is not True:
            held = "an unknown number of items (they cannot be counted now)" if items is None else (
                "1 item" if items == 1 else f"{items} items")
            after = (f"its store is then moved to {self.root / 'data' / '.deleted'}, not erased" if record.native
                     else "the provider keeps its items; only this root's mapping is removed")
            raise ConfirmationRequired(
                f"confirm: space {record.name} ({space_id}) holds {held}; deleting it needs explicit confirmation "
                f"(--confirm / \"confirm\": true); {after}", field="confirm", spaceId=space_id,
                spaceName=record.name, items=items)
        if not record.native:
            self._drop_provider(space_id)
            self.registry.remove(space_id)
            return {"deleted": space_id, "providerId": record.provider_id, "items": items, "keptAt": None,
                    "defaultStore": None, "message": "Removed the local mapping; the provider's data is unchanged."}
        effective = self.registry.effective_store
        replacement = None
        if others:
            registered = [b for b in state.bodies if b.id in others]
            ranked = sorted(registered, key=lambda b: (not b.active, b.id))
            replacement = ranked[0].id if ranked else sorted(others)[0]
        self._drop_provider(space_id)
        if effective == space_id and replacement:
            if self.native_driver == "cli" and space_id in stores:
                self.runner.set_default_store(replacement)
            elif (self.root / "active").exists():
                fsio.write_file_atomically(self.root / "active", f"{replacement}\n".encode("utf-8"))
        kept = set_aside(self.registry, space_id)
        default = self.registry.effective_store
        message = f"Deleted space {record.name} ({space_id})."
        if kept is not None:
            message += (f" Its store was moved to {kept} (to restore it, move that folder back to "
                        f"{self.root / 'data' / space_id}).")
        return {"deleted": space_id, "providerId": NATIVE_PROVIDER, "items": items,
                "keptAt": str(kept) if kept is not None else None, "defaultStore": default, "message": message}

    def purge_deleted(self, *, confirm: bool = False) -> dict[str, Any]:
        """Remove the stores that deleting native spaces kept in ``data/.deleted/`` for good
        (:func:`.deleted.purge`). With stores kept, ``confirm`` is required: without it
        :class:`~mnemon_ls.errors.ConfirmationRequired` (``data``: ``field`` ``"confirm"``, ``count``,
        ``bytes``, ``path``) and nothing changes. Returns ``{removed, bytes, path, message}`` (``removed`` 0:
        none was kept, nothing to confirm)."""
        from .deleted import kept_summary, purge, size_words, stores_words

        summary = kept_summary(self.registry.data_dir)
        if summary is not None and confirm is not True:
            count, size = summary["count"], int(summary["bytes"])  # type: ignore[call-overload]
            raise ConfirmationRequired(
                f"confirm: {summary['path']} keeps {count} deleted {stores_words(count)} ({size_words(size)}); "
                "removing them for good "
                "needs explicit confirmation (--confirm / \"confirm\": true); they cannot be restored afterwards",
                field="confirm", count=count, bytes=summary["bytes"], path=summary["path"])
        return purge(self.registry)

    def _live_items(self, record: SpaceRecord) -> int | None:
        """The live (not forgotten) items of ``record``'s space: its provider's ``count()``; ``None`` when it
        cannot be counted (a provider unreachable or failing, a store that does not open)."""
        try:
            return int(self.provider(record).count())
        except (MnemonError, OSError, ValueError, TypeError, sqlite3.Error):
            return None

    def space_status(self, space_id: str) -> dict[str, Any]:
        """``{"space": SpaceView, "status": <provider status object>}``. An inspection: works on an inactive
        space too (``active`` governs reads of items only, reference 6.3). Unless ``secrets`` is ``allow``, the
        categories and entities another program stored are shown redacted, with a ``notice``
        (:func:`.foreign.redact_status`)."""
        record = resolve(self.state(), space_id)
        status = self.provider(record).status()
        semantic = status.get("semantic") if isinstance(status, dict) else None
        if isinstance(semantic, dict) and semantic.get("state") == "off" and not semantic.get("reason"):
            semantic["reason"] = self.semantic_off_reason
        if isinstance(status, dict) and self.secrets != "allow":  # labels another program stored (.foreign)
            from .foreign import redact_status

            notice = redact_status(status, (record.id, record.name))
            if notice:
                status["notice"] = f"{status['notice']}; {notice}" if status.get("notice") else notice
        return {"space": self._view(record).to_dict(), "status": status}

    def reindex(self, space_id: str) -> dict[str, Any]:
        """Rebuild a native space's side index (embedded driver): ``{"items", "seconds"}``."""
        record = resolve(self.state(), space_id)
        provider = self.provider(record)
        if not isinstance(provider, NativeProvider):
            raise SpaceRefused("reindex applies to the embedded native driver only", spaceId=record.id,
                               reason="not embedded")
        return provider.reindex()

    # ------------------------------------------------------------------ provider services

    def provider_services(self) -> list[dict[str, Any]]:
        """Every third-party provider's service view (field names only, never values)."""
        state = self.state()
        return [self.registry.provider_plane.service_view(state, pid) for pid in PROVIDER_LABELS]

    def configure_provider(self, provider_id: str, fields: dict[str, Any] | None = None, *,
                           enabled: bool | None = None, clear_secrets: Sequence[str] = ()) -> dict[str, Any]:
        """Save a provider service (see :meth:`~.registry_providers.ProviderPlane.configure_service`); returns its
        view."""
        return self.registry.provider_plane.configure_service(provider_id, fields,
                                                              enabled=enabled, clear_secrets=clear_secrets)
