"""The Memory Spaces service of one storage root: the directory, routing, federated recall, branch scope, cover.

Rules (shared/reference/dsh-mnemon.md 6.2-6.6, seed 000 "Memory Spaces", DESIGN.md section 4):

- Reads (recall, related, status) use active spaces only; naming an inactive or unknown space is
  :class:`~mnemon_ls.errors.InvalidInput` (``spaces[i]`` / ``spaceId``) and nothing runs.
- ``remember`` may target any registered space; without ``space_id`` exactly one space must be active.
  A *committed* remember into an inactive space activates it (``receipt.activated``). ``link`` and
  ``forget`` name their space explicitly and never change activation.
- Create: the first native space of a root without stores gets id ``default``, later ones UUIDs; new
  spaces are inactive unless ``active=True``. Delete refuses the last native store; deleting the CLI's
  default store (``<root>/active``) first points it at another store (registered active first, then by
  id, else any store directory). Merge is native-only and non-destructive: each source is imported
  into the target and deactivated only when every item is accounted for (``imported + skipped ==
  items`` and no error).
- Recall: candidates from every selected space (``candidateLimit`` of the policy), federated by
  reciprocal-rank fusion (``1/(60 + rank)``) when the spaces span more than one provider, else by score;
  then the recall-quality policy (:mod:`.policy`); at most :data:`~.model.MAX_RESULTS` (12) results.
  A failing space becomes a source with status ``unavailable`` and a hint, never a failed recall.
- Branch scope: an item tagged ``branch:<name>`` belongs to those branches. ``branch_recall``:
  ``filter`` (default) drops items tagged only for other branches, ``label`` keeps them with
  ``branchLabel: "other-branch"``, ``off`` ignores the tags. When ``branch`` is ``None`` (no branch
  known), branch-tagged items follow ``detached_head_policy``: ``hide`` (default) drops them, ``show``
  keeps them (``branchLabel: "branch-unknown"``). Hidden counts are reported in ``hidden``.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import fsio
from ..errors import InvalidInput, MnemonError
from ..redact import Scrubber
from . import policy as quality_policy
from .errors import ProviderUnavailable, SpaceRefused
from .model import (
    BRANCH_TAG_PREFIX,
    CATEGORIES,
    EDGE_TYPES,
    INTENTS,
    MAX_RESULTS,
    RECALL_MODES,
    SOURCES,
    Clock,
    Item,
    WriteReceipt,
    branch_tags,
    receipt_status,
    require_unicode,
    utc_now,
    validate_branch,
    validate_category,
    validate_content,
    validate_entities,
    validate_importance,
    validate_item_id,
    validate_limit,
    validate_query,
    validate_source,
    validate_space_id,
    validate_tags,
)
from .policy import RecallQuality
from .providers.base import Capabilities, SearchOutcome, SpaceProvider
from .providers.cli import CliProvider, CliRunner
from .providers.native import DB_FILE, NativeProvider
from .registry import NATIVE_PROVIDER, PROVIDER_LABELS, RegistryState, SpaceRecord, SpaceRegistry, provider_label, require
from .thirdparty import DEFAULT_TIMEOUT_SECONDS, ProviderHost, call_with_timeout

BRANCH_RECALL_MODES = ("filter", "label", "off")
DETACHED_HEAD_POLICIES = ("hide", "show")
NATIVE_DRIVERS = ("embedded", "cli")
RRF_K = 60


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


@dataclass(slots=True)
class RecallResult:
    """A federated recall (``to_dict()``)::

        {"query", "mode", "limit", "candidateLimit", "policy": {"id", "fallbackFrom"},
         "results": [{"spaceId", "spaceName", "providerId", "id", "content", "score", "normalizedScore",
                      "tier": high|medium|low|unknown, "category", "importance", "tags", "entities", "source",
                      "createdAt", "matchedVia", "branches", "branchLabel"?, "federatedScore"?}],
         "sources": [{"spaceId", "spaceName", "providerId", "status": ready|empty|unavailable|unsupported,
                      "hint"?, "stats": {"policyId", "fallbackFrom", "fetched", "retained", "selected",
                      "droppedLowScore", "droppedNonPositiveScore", "droppedInvalidScore", "unscored",
                      "unscaled", "branchHidden"}}],
         "hidden": {"otherBranch", "detachedHead"}, "branch": {"name", "recall", "detachedHeadPolicy"},
         "truncated", "hint", "notices"}
    """

    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.data

    @property
    def results(self) -> list[dict[str, Any]]:
        """The result items."""
        return self.data["results"]


@dataclass(slots=True)
class SpacesCover:
    """The wake snapshot's Memory Spaces block: ``text`` (at most ``budget_chars``), ``spaces`` shown
    (``[{id, name, items}]``, items ``None`` when the count failed), ``hidden`` active spaces left out for
    the budget, ``active`` active spaces in total, ``notices`` (registry repairs)."""

    text: str
    spaces: list[dict[str, Any]] = field(default_factory=list)
    hidden: int = 0
    active: int = 0
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "spaces": self.spaces, "hidden": self.hidden, "active": self.active,
                "notices": self.notices}


class SpacesService:
    """Memory Spaces of one storage root (module doc).

    ``clock`` returns UTC now; ``effective_store`` overrides the CLI's default store (``<root>/active``);
    ``quality`` is the recall-quality configuration; ``native_driver`` ``embedded`` (default, no binary
    needed) or ``cli`` (drive an installed ``mnemon`` with ``cli``); ``lock_timeout`` seconds bound every
    wait for another writer; ``track_access`` bumps the CLI's access counters on reads. Thread-safe.
    """

    def __init__(self, root: Path, *, clock: Clock = utc_now, effective_store: str | None = None,
                 quality: RecallQuality | None = None, native_driver: str = "embedded",
                 cli: CliOptions | None = None, lock_timeout: float = 10.0, track_access: bool = True,
                 secrets: str = "redact", provider_timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 semantic: Any = None) -> None:
        #: The process's :class:`mnemon_ls.semantic.engine.SemanticEngine` (hybrid recall of native
        #: spaces), or ``None`` for keyword-only recall.
        self.semantic = semantic
        #: The ``secrets`` setting: item content, tags, entities and space descriptions pass
        #: :mod:`mnemon_ls.redact` first; a credential in a space name or a branch is refused.
        self.secrets = Scrubber(secrets).mode
        if native_driver not in NATIVE_DRIVERS:
            raise InvalidInput("nativeDriver", "must be one of " + ", ".join(NATIVE_DRIVERS))
        self.root = Path(root)
        self.clock = clock
        self.quality = quality or RecallQuality()
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
                                      track_access=self.track_access, semantic=self.semantic)
            self._providers[record.id] = made
            return made

    def _capabilities(self, record: SpaceRecord) -> Capabilities | None:
        if not record.native:
            return self.thirdparty.capabilities(record.provider_id)
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
        """Write the batched access counters of recent reads (embedded stores); call it when idle."""
        with self._guard:
            providers = list(self._providers.values())
        for provider in providers:
            flush = getattr(provider, "flush_access", None)
            if flush is not None:
                flush()

    def close(self) -> None:
        """Close every open store (pending access counters are written first)."""
        with self._guard:
            providers, self._providers = list(self._providers.values()), {}
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
                         self._capabilities(record), available)

    def list_spaces(self, *, active_only: bool = False) -> list[SpaceView]:
        """Every registered space (native first, catalog order), or the active ones."""
        state = self.state()
        return [self._view(r, state) for r in state.all if r.active or not active_only]

    def get_space(self, space_id: str) -> SpaceView:
        """One space; :class:`InvalidInput` (``spaceId``) when unknown."""
        return self._view(require(self.state(), validate_space_id(space_id)))

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
        if provider is not None and provider != NATIVE_PROVIDER:
            return self._view(self.thirdparty.create_space(provider, name, description, active=bool(active)))
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
        return self._view(self.registry.update(validate_space_id(space_id), name=name, description=description))

    def activate(self, space_id: str) -> SpaceView:
        """Make a space take part in reads."""
        return self._view(self.registry.update(validate_space_id(space_id), active=True))

    def deactivate(self, space_id: str) -> SpaceView:
        """Keep a space out of reads (its data and the CLI's default store are unchanged)."""
        return self._view(self.registry.update(validate_space_id(space_id), active=False))

    def delete_space(self, space_id: str) -> dict[str, Any]:
        """Delete a space (module doc). Native: the store directory is removed; returns ``{"deleted",
        "providerId", "defaultStore": <the CLI's default store afterwards or None>, "message"}``."""
        space_id = validate_space_id(space_id)
        state = self.state()
        record = require(state, space_id)
        if not record.native:
            self._drop_provider(space_id)
            self.registry.remove(space_id)
            return {"deleted": space_id, "providerId": record.provider_id, "defaultStore": None,
                    "message": "Removed the local mapping; the provider's data is unchanged."}
        stores = self.registry.store_dirs()
        others = [s for s in stores if s != space_id]
        if space_id in stores and not others:
            raise SpaceRefused(f"space {space_id} holds the last native store of this root and cannot be deleted "
                               "(deactivate it instead)", spaceId=space_id, reason="last native store")
        effective = self.registry.effective_store
        replacement = None
        if others:
            registered = [b for b in state.bodies if b.id in others]
            ranked = sorted(registered, key=lambda b: (not b.active, b.id))
            replacement = ranked[0].id if ranked else sorted(others)[0]
        self._drop_provider(space_id)
        if self.native_driver == "cli" and space_id in stores:
            if effective == space_id and replacement:
                self.runner.set_default_store(replacement)
            self.runner.remove_store(space_id, replacement or effective)
        else:
            if effective == space_id and replacement and (self.root / "active").exists():
                fsio.write_file_atomically(self.root / "active", f"{replacement}\n".encode("utf-8"))
            directory = self.root / "data" / space_id
            if directory.is_dir():
                shutil.rmtree(directory)
        self.registry.remove(space_id)
        default = self.registry.effective_store
        return {"deleted": space_id, "providerId": NATIVE_PROVIDER, "defaultStore": default,
                "message": f"Deleted space {space_id} and its store."}

    def space_status(self, space_id: str) -> dict[str, Any]:
        """``{"space": SpaceView, "status": <provider status object>}``; the space must be active."""
        record = self._readable(space_id, "spaceId")
        return {"space": self._view(record).to_dict(), "status": self.provider(record).status()}

    def reindex(self, space_id: str) -> dict[str, Any]:
        """Rebuild a native space's side index (embedded driver): ``{"items", "seconds"}``."""
        record = require(self.state(), validate_space_id(space_id))
        provider = self.provider(record)
        if not isinstance(provider, NativeProvider):
            raise SpaceRefused("reindex applies to the embedded native driver only", spaceId=record.id,
                               reason="not embedded")
        return provider.reindex()

    # ------------------------------------------------------------------ provider services

    def provider_services(self) -> list[dict[str, Any]]:
        """Every third-party provider's service view (field names only, never values)."""
        state = self.state()
        return [self.registry.service_view(state, pid) for pid in PROVIDER_LABELS]

    def configure_provider(self, provider_id: str, fields: dict[str, Any] | None = None, *,
                           enabled: bool | None = None, clear_secrets: Sequence[str] = ()) -> dict[str, Any]:
        """Save a provider service (see :meth:`SpaceRegistry.configure_service`); returns its view."""
        return self.registry.configure_service(provider_id, fields, enabled=enabled, clear_secrets=clear_secrets)

    # ------------------------------------------------------------------ targets

    def _readable(self, space_id: Any, field_name: str) -> SpaceRecord:
        space_id = validate_space_id(space_id, field_name)
        record = require(self.state(), space_id, field_name)
        if not record.active:
            raise InvalidInput(field_name, "is not active for reading (activate it first)", spaceId=space_id)
        return record

    def _write_target(self, space_id: Any) -> SpaceRecord:
        state = self.state()
        if space_id is None:
            active = [b for b in state.all if b.active]
            if len(active) != 1:
                raise InvalidInput("spaceId", f"is required: {len(active)} spaces are active, and a write without "
                                              "a target needs exactly one", active=len(active))
            return active[0]
        return require(state, validate_space_id(space_id))

    # ------------------------------------------------------------------ writes

    def remember(self, content: str, *, space_id: str | None = None, category: str | None = None,
                 importance: int | None = None, tags: Sequence[str] | None = None,
                 entities: Sequence[str] | None = None, source: str | None = None,
                 branch: str | None = None) -> WriteReceipt:
        """Remember one item (module doc). ``branch`` adds a ``branch:<name>`` tag. Returns a
        :class:`WriteReceipt`: ``status`` ``committed`` with ``detail`` ``{"action": "added", "edgesCreated",
        "entities", "tags", "createdAt"[, "redacted"]}`` or ``skipped`` with ``duplicateOf`` (the existing
        id, also in ``id``). Content, tags and entities pass :mod:`mnemon_ls.redact` first."""
        scrub = Scrubber(self.secrets)
        content, branch = scrub.text("content", content), scrub.identifier("branch", branch)
        tags, entities = scrub.texts("tags", tags), scrub.texts("entities", entities)
        text = validate_content(content)
        cat = validate_category(category)
        imp = validate_importance(importance)
        tag_list = validate_tags(tags)
        entity_list = validate_entities(entities)
        src = validate_source(source)
        branch_name = validate_branch(branch)
        if branch_name is not None:
            tag = BRANCH_TAG_PREFIX + branch_name
            if tag not in tag_list:
                tag_list = validate_tags([*tag_list, tag])
        record = self._write_target(space_id)
        provider = self.provider(record)
        raw = provider.remember(text, category=cat or "general", importance=imp, tags=tag_list,
                                entities=entity_list, source=src)
        action = str(raw.get("action") or "")
        if action == "skipped":
            existing = raw.get("replaced_id") or raw.get("id")
            return WriteReceipt("skipped", "skipped", record.id, record.name, existing,
                                f"Already remembered in {record.name} as {existing}; nothing was written.",
                                {"duplicateOf": existing, **_redacted(scrub)})
        status = receipt_status(raw)
        activated = False
        if status == "committed" and not record.active:
            record = self.registry.update(record.id, active=True)
            activated = True
        detail = {"edgesCreated": raw.get("edges_created") or {}, "entities": raw.get("entities") or entity_list,
                  "tags": raw.get("tags") if isinstance(raw.get("tags"), list) else tag_list,
                  "createdAt": raw.get("created_at"), **_redacted(scrub)}
        message = f"Remembered in {record.name}." if status == "committed" else f"Provider answered {action or status}."
        return WriteReceipt(status, action or "added", record.id, record.name, raw.get("id"), message, detail, activated)

    def remember_many(self, space_id: str, items: Sequence[dict[str, Any]], *,
                      require_active: bool = True) -> list[WriteReceipt]:
        """Remember several items in one space as one batch (capacity maintenance, issue 9): with the
        embedded provider one write transaction (all or nothing), otherwise one provider call per item in
        order (an error stops the batch; the items before it stay written). ``items[i]`` holds
        :meth:`remember`'s keyword arguments (``content`` required; ``category``, ``importance``, ``tags``,
        ``entities``, ``source``), each validated and redacted like :meth:`remember` (fields named
        ``items[i].content`` etc.) before anything is written. ``require_active`` refuses an inactive space
        (:class:`InvalidInput` ``spaceId``) instead of activating it. Returns one :class:`WriteReceipt`
        per item, in order. An error of a one-by-one provider carries ``written``: the receipts of the
        items stored before it."""
        record = require(self.state(), validate_space_id(space_id))
        if require_active and not record.active:
            raise InvalidInput("spaceId", "is not active (a batch write never activates a space)", spaceId=record.id)
        scrubs, prepared = [], []
        for index, item in enumerate(items):
            where = f"items[{index}]"
            scrub = Scrubber(self.secrets)
            tags = validate_tags(scrub.texts(f"{where}.tags", item.get("tags")), f"{where}.tags")
            entities = validate_entities(scrub.texts(f"{where}.entities", item.get("entities")), f"{where}.entities")
            prepared.append({
                "content": validate_content(scrub.text(f"{where}.content", item.get("content")), f"{where}.content"),
                "category": validate_category(item.get("category"), f"{where}.category") or "general",
                "importance": validate_importance(item.get("importance"), f"{where}.importance"),
                "tags": tags, "entities": entities, "source": validate_source(item.get("source"), f"{where}.source")})
            scrubs.append(scrub)
        provider = self.provider(record)
        batch = getattr(provider, "remember_many", None)
        if batch is not None:
            return [self._write_receipt(record, raw, item, scrub)
                    for raw, item, scrub in zip(batch(prepared), prepared, scrubs)]
        receipts: list[WriteReceipt] = []
        try:
            for item, scrub in zip(prepared, scrubs):
                raw = provider.remember(item["content"], category=item["category"], importance=item["importance"],
                                        tags=item["tags"], entities=item["entities"], source=item["source"])
                receipts.append(self._write_receipt(record, raw, item, scrub))
        except Exception as exc:
            exc.written = receipts  # type: ignore[attr-defined]  # what the caller must know is stored
            raise
        return receipts

    @staticmethod
    def _write_receipt(record: SpaceRecord, raw: dict[str, Any], item: dict[str, Any], scrub: Scrubber) -> WriteReceipt:
        """The :class:`WriteReceipt` of one provider ``remember`` answer (as :meth:`remember` builds it)."""
        action = str(raw.get("action") or "")
        if action == "skipped":
            existing = raw.get("replaced_id") or raw.get("id")
            return WriteReceipt("skipped", "skipped", record.id, record.name, existing,
                                f"Already remembered in {record.name} as {existing}; nothing was written.",
                                {"duplicateOf": existing, **_redacted(scrub)})
        status = receipt_status(raw)
        detail = {"edgesCreated": raw.get("edges_created") or {}, "entities": raw.get("entities") or item["entities"],
                  "tags": raw.get("tags") if isinstance(raw.get("tags"), list) else item["tags"],
                  "createdAt": raw.get("created_at"), **_redacted(scrub)}
        message = f"Remembered in {record.name}." if status == "committed" else f"Provider answered {action or status}."
        return WriteReceipt(status, action or "added", record.id, record.name, raw.get("id"), message, detail)

    def link(self, space_id: str, source_id: str, target_id: str, *, edge_type: str = "semantic",
             weight: float = 0.5, metadata: dict[str, str] | None = None) -> WriteReceipt:
        """Link two items of one space. Raises :class:`InvalidInput` naming ``sourceId``/``targetId`` when an
        end is missing or forgotten, ``edgeType``/``weight``/``metadata`` when malformed."""
        record = require(self.state(), validate_space_id(space_id))
        src, tgt = validate_item_id(source_id, "sourceId"), validate_item_id(target_id, "targetId")
        if src == tgt:
            raise InvalidInput("targetId", "must differ from sourceId")
        if edge_type not in EDGE_TYPES:
            raise InvalidInput("edgeType", "must be one of " + ", ".join(EDGE_TYPES))
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise InvalidInput("weight", "must be a number 0..1")
        scrub = Scrubber(self.secrets)
        if isinstance(metadata, dict):
            metadata = {k: scrub.text(f"metadata.{k}", v) for k, v in metadata.items()}
        meta = _validate_metadata(metadata)
        self._capable(record, "link")
        raw = self.provider(record).link(src, tgt, edge_type=edge_type, weight=float(weight), metadata=meta)
        return WriteReceipt(receipt_status(raw), "linked", record.id, record.name, src,
                            f"Linked {src} -> {tgt} ({edge_type}).",
                            {"sourceId": src, "targetId": tgt, "edgeType": edge_type, "weight": float(weight),
                             **_redacted(scrub)})

    def forget(self, space_id: str, item_id: str) -> WriteReceipt:
        """Soft-delete one item by exact id. Raises :class:`InvalidInput` (``id``) for an unknown or
        already forgotten id."""
        record = require(self.state(), validate_space_id(space_id))
        key = validate_item_id(item_id, "id")
        self._capable(record, "forget")
        raw = self.provider(record).forget(key)
        status = receipt_status(raw)
        caps = self._capabilities(record)
        kind = caps.delete if caps is not None and caps.delete in ("soft", "hard") else "soft"
        return WriteReceipt(status, "deleted", record.id, record.name, key, f"Forgot {key} ({kind} delete).")

    def _capable(self, record: SpaceRecord, what: str) -> None:
        caps = self._capabilities(record)
        if caps is not None and not getattr(caps, what):
            raise SpaceRefused(f"space {record.id} does not support {what}", spaceId=record.id, reason=what)

    # ------------------------------------------------------------------ merge

    def merge(self, source_ids: Sequence[str], target_id: str, *, deactivate_sources: bool = True) -> dict[str, Any]:
        """Import each source space into ``target_id`` (module doc). Returns ``{"targetId", "status":
        committed|partial|failed, "sources": [{"spaceId", "items", "imported", "skipped", "errors", "status",
        "deactivated"}]}``; overall ``committed`` only when every source is."""
        if isinstance(source_ids, str) or not isinstance(source_ids, (list, tuple)) or not source_ids:
            raise InvalidInput("sourceIds", "must be a non-empty list of space ids")
        ids = [validate_space_id(s, f"sourceIds[{i}]") for i, s in enumerate(source_ids)]
        target_key = validate_space_id(target_id, "targetId")
        state = self.state()
        target = require(state, target_key, "targetId")
        sources = [require(state, s, f"sourceIds[{i}]") for i, s in enumerate(ids)]
        for index, record in enumerate(sources):
            if record.id == target.id:
                raise SpaceRefused("a space cannot be merged into itself", spaceId=record.id, reason="same space")
            if len(set(ids)) != len(ids):
                raise InvalidInput(f"sourceIds[{index}]", "is repeated")
        for record in (*sources, target):
            if not record.native:
                raise SpaceRefused(f"merge is Mnemon-native only; {record.id} is a {record.provider_id} space",
                                   spaceId=record.id, reason="not native")
        target_provider = self.provider(target)
        reports = []
        for record in sources:
            items, edges = self.provider(record).export_items()
            if items:
                raw = target_provider.import_items(items, edges)
            else:
                raw = {"imported": 0, "updated": 0, "skipped": 0, "errors": 0}
            imported, updated = int(raw.get("imported") or 0), int(raw.get("updated") or 0)
            skipped = int(raw.get("skipped") or 0)
            errors = raw.get("errors")
            error_count = int(errors) if isinstance(errors, (int, float)) and not isinstance(errors, bool) else (
                len(errors) if isinstance(errors, list) else 0)
            complete = error_count == 0 and imported + updated + skipped == len(items)
            mapped = receipt_status(raw) if items else "committed"
            status = "committed" if complete and mapped in ("committed", "unknown") else (
                "partial" if imported + updated + skipped else "failed")
            deactivated = False
            if status == "committed" and deactivate_sources and record.active:
                self.registry.update(record.id, active=False)
                deactivated = True
            reports.append({"spaceId": record.id, "items": len(items), "imported": imported, "updated": updated,
                            "skipped": skipped, "errors": error_count, "status": status, "deactivated": deactivated})
        overall = "committed" if all(r["status"] == "committed" for r in reports) else (
            "failed" if all(r["status"] == "failed" for r in reports) else "partial")
        return {"targetId": target.id, "status": overall, "sources": reports}

    # ------------------------------------------------------------------ reads

    def get_item(self, space_id: str, item_id: str) -> Item | None:
        """The active (not forgotten) item ``item_id`` of a registered space, active or not, or ``None``
        when it is gone; no access counters are touched. Raises :class:`InvalidInput` (``spaceId``) for an
        unknown space and the provider's errors when its store cannot be read. A provider without an
        exact lookup is searched for the id instead (keyword search, 50 results)."""
        record = require(self.state(), validate_space_id(space_id))
        key = validate_item_id(item_id, "id")
        provider = self.provider(record)
        get = getattr(provider, "get", None)
        if get is not None:
            return get(key)
        found = provider.search(key, limit=MAX_RESULTS, mode="keyword")
        return next((i for i in found.items if i.id == key), None)

    def has_exact_lookup(self, space_id: str) -> bool:
        """Whether the provider of space ``space_id`` can look an item up by id (else :meth:`get_item`
        falls back to a keyword search, which a vector-only provider cannot answer for an id)."""
        record = require(self.state(), validate_space_id(space_id))
        return getattr(self.provider(record), "get", None) is not None

    def related(self, space_id: str, item_id: str, *, depth: int = 2, edge_type: str | None = None,
                limit: int = 20) -> dict[str, Any]:
        """Walk the graph from one item of an active space: ``{"spaceId", "spaceName", "id", "items":
        [Item + depth, edgeType]}``."""
        record = self._readable(space_id, "spaceId")
        key = validate_item_id(item_id, "id")
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 5:
            raise InvalidInput("depth", "must be an integer 1..5")
        if edge_type is not None and edge_type not in EDGE_TYPES:
            raise InvalidInput("edgeType", "must be one of " + ", ".join(EDGE_TYPES))
        count = validate_limit(limit, default=20)
        self._capable(record, "related")
        items = self.provider(record).related(key, depth=depth, edge_type=edge_type, limit=count)
        return {"spaceId": record.id, "spaceName": record.name, "id": key, "items": [i.to_dict() for i in items]}

    def recall(self, query: str, *, spaces: Sequence[str] | None = None, limit: int | None = None,
               mode: str = "smart", category: str | None = None, source: str | None = None,
               intent: str | None = None, branch: str | None = None, branch_recall: str = "filter",
               detached_head_policy: str = "hide", quality: RecallQuality | None = None) -> RecallResult:
        """Federated recall across the selected active spaces (module doc; shape in :class:`RecallResult`).

        ``spaces`` ``None`` = every active space; ``limit`` 1..50 (default 10); ``mode`` smart | keyword |
        basic; ``category``/``source``/``intent`` filters as the CLI takes them; ``branch`` the workspace's
        current branch (``None``: unknown)."""
        text = validate_query(query)
        count = validate_limit(limit)
        if mode not in RECALL_MODES:
            raise InvalidInput("mode", "must be one of " + ", ".join(RECALL_MODES))
        if category is not None and category not in CATEGORIES:
            raise InvalidInput("category", "must be one of " + ", ".join(CATEGORIES))
        if source is not None and source not in SOURCES:
            raise InvalidInput("source", "must be one of " + ", ".join(SOURCES))
        if intent is not None and (not isinstance(intent, str) or intent.upper() not in INTENTS):
            raise InvalidInput("intent", "must be one of " + ", ".join(INTENTS))
        if branch_recall not in BRANCH_RECALL_MODES:
            raise InvalidInput("branchRecall", "must be one of " + ", ".join(BRANCH_RECALL_MODES))
        if detached_head_policy not in DETACHED_HEAD_POLICIES:
            raise InvalidInput("detachedHeadPolicy", "must be one of " + ", ".join(DETACHED_HEAD_POLICIES))
        if branch is not None and (not isinstance(branch, str) or not branch.strip()):
            raise InvalidInput("branch", "must be a branch name or null")
        config = quality or self.quality
        state = self.state()
        if spaces is None:
            selected = [r for r in state.all if r.active]
        else:
            if isinstance(spaces, str) or not isinstance(spaces, (list, tuple)):
                raise InvalidInput("spaces", "must be a list of space ids")
            selected = []
            for index, space in enumerate(spaces):
                key = validate_space_id(space, f"spaces[{index}]")
                record = require(state, key, f"spaces[{index}]")
                if not record.active:
                    raise InvalidInput(f"spaces[{index}]", "is not active for reading (activate it first)",
                                       spaceId=key)
                if record not in selected:
                    selected.append(record)
        chosen = quality_policy.plan(count, config)
        scope = _BranchScope(branch.strip() if branch else None, branch_recall, detached_head_policy)
        keep = scope.keep if scope.filters else None
        rows: list[tuple[SpaceRecord, int, int, Item, bool, str]] = []
        sources: list[dict[str, Any]] = []
        notices: list[str] = [p.message for p in self.registry.notices]
        hidden = {"otherBranch": 0, "detachedHead": 0}
        for order, record in enumerate(selected):
            entry: dict[str, Any] = {"spaceId": record.id, "spaceName": record.name,
                                     "providerId": self._provider_id(record), "status": "ready"}
            def ask(record: SpaceRecord = record) -> tuple[SpaceProvider, SearchOutcome]:
                found = self.provider(record)
                return found, found.search(text, limit=chosen.candidate_limit, mode=mode, category=category,
                                           source=source, intent=intent.upper() if intent else None, keep=keep)

            try:
                if record.native:
                    provider, outcome = ask()
                else:  # a slow or hung third-party engine must not hold the other spaces' evidence back
                    provider, outcome = call_with_timeout(ask, self.thirdparty.timeout, provider=record.provider_id,
                                                          space_id=record.id)
            except ProviderUnavailable as exc:
                entry.update(status="unavailable" if not exc.data.get("reason") == "no adapter" else "unsupported",
                             hint=exc.message, stats=None)
                sources.append(entry)
                continue
            except MnemonError as exc:
                entry.update(status="unsupported" if exc.data.get("reason") == "not-installed" else "unavailable",
                             hint=exc.message, stats=None)
                if exc.code in ("provider-timeout", "provider-not-configured"):
                    entry["error"] = exc.code
                sources.append(entry)
                continue
            except Exception as exc:  # a third-party engine's own error: this space fails, the recall answers
                if record.native:
                    raise
                entry.update(status="unavailable", hint=f"{type(exc).__name__}: {exc}", stats=None,
                             error="provider-failed")
                sources.append(entry)
                continue
            notices.extend(n for n in outcome.notices if n)
            hidden["detachedHead" if scope.branch is None else "otherBranch"] += outcome.dropped
            semantics = provider.capabilities.normalized_scores
            for rank, item in enumerate(outcome.items, start=1):
                rows.append((record, rank, order, item, semantics, entry["providerId"]))
            entry["hint"] = outcome.hint
            entry["branchHidden"] = outcome.dropped
            sources.append(entry)
        federated = len({r[5] for r in rows}) > 1 or len({self._provider_id(r) for r in selected}) > 1
        if federated:
            rows.sort(key=lambda r: (-1 / (RRF_K + r[1]), r[2]))
        else:
            rows.sort(key=lambda r: (-(r[3].score if r[3].score is not None and _finite(r[3].score) else 0.0), r[2]))
        selection = quality_policy.select([(r[3].score, r[4]) for r in rows], count, config, chosen)
        picked = selection.indexes
        results = []
        for index in picked[:MAX_RESULTS]:
            record, rank, _order, item, _sem, provider_id = rows[index]
            decision = selection.decisions[index]
            results.append(self._result(record, item, decision, provider_id, scope,
                                        1 / (RRF_K + rank) if federated else None))
        for entry in sources:
            if entry.get("stats", 0) is None:
                continue
            mine = [i for i, r in enumerate(rows) if r[0].id == entry["spaceId"]]
            decisions = selection.decisions
            stats = {
                "policyId": selection.policy_id, "fallbackFrom": selection.fallback_from,
                "fetched": len(mine),
                "retained": sum(1 for i in mine if selection.retains(decisions[i])),
                "selected": sum(1 for i in picked if rows[i][0].id == entry["spaceId"]),
                "droppedLowScore": sum(1 for i in mine if decisions[i].reason == "low-score"
                                       and not selection.retains(decisions[i])),
                "droppedNonPositiveScore": sum(1 for i in mine if decisions[i].reason == "non-positive-score"
                                               and not selection.retains(decisions[i])),
                "droppedInvalidScore": sum(1 for i in mine if not decisions[i].valid),
                "unscored": sum(1 for i in mine if decisions[i].reason == "unscored"),
                "unscaled": sum(1 for i in mine if decisions[i].reason == "unscaled-score"),
                "branchHidden": entry.pop("branchHidden", 0),
            }
            entry["stats"] = stats
            entry["status"] = "ready" if stats["retained"] else "empty"
        data = {
            "query": text, "mode": mode, "limit": count, "candidateLimit": chosen.candidate_limit,
            "policy": {"id": selection.policy_id, "fallbackFrom": selection.fallback_from},
            "results": results, "sources": sources, "hidden": hidden,
            "branch": {"name": scope.branch, "recall": branch_recall, "detachedHeadPolicy": detached_head_policy},
            "truncated": max(0, len(picked) - MAX_RESULTS),
            "hint": None if results else ("no active space" if not selected else "no result passed the quality policy"
                                          if rows else "nothing matched"),
            "notices": notices,
            "failed": [s["spaceId"] for s in sources if s["status"] == "unavailable"],
        }
        for entry in sources:
            if entry["status"] == "unavailable":
                notices.append(f"space {entry['spaceName']} ({entry['spaceId']}) failed: {entry.get('hint')}")
        return RecallResult(data)

    def _provider_id(self, record: SpaceRecord) -> str:
        if not record.native:
            return record.provider_id
        return "mnemon-cli" if self.native_driver == "cli" else NATIVE_PROVIDER

    @staticmethod
    def _result(record: SpaceRecord, item: Item, decision: quality_policy.Decision, provider_id: str,
                scope: "_BranchScope", federated: float | None) -> dict[str, Any]:
        branches = branch_tags(item.tags)
        data: dict[str, Any] = {
            "spaceId": record.id, "spaceName": record.name, "providerId": provider_id, "id": item.id,
            "content": item.content, "score": item.score, "normalizedScore": decision.normalized,
            "tier": decision.tier, "category": item.category, "importance": item.importance,
            "tags": list(item.tags), "entities": list(item.entities), "source": item.source,
            "createdAt": item.created_at, "matchedVia": item.matched_via, "branches": branches,
        }
        label = scope.label(branches)
        if label:
            data["branchLabel"] = label
        if federated is not None:
            data["federatedScore"] = round(federated, 6)
        return data

    # ------------------------------------------------------------------ wake cover

    def cover(self, budget_chars: int = 1200, recall_hint: str = "mnemon/recall") -> SpacesCover:
        """The bounded Memory Spaces block of the wake snapshot: the active spaces' names, ids, item counts
        and descriptions, telling the assistant to recall before assuming. Empty text when no space is
        registered; at most ``budget_chars`` characters (spaces that do not fit are counted in ``hidden``).
        ``recall_hint`` names the route the reader recalls through (:data:`mnemon_ls.guidance.RECALL_HINTS`)."""
        state = self.state()
        notices = [p.message for p in self.registry.notices]
        if not state.all:
            return SpacesCover("", notices=notices)
        active = [r for r in state.all if r.active]
        if not active:
            text = ("MNEMON MEMORY SPACES\nNo Memory Space is active for reading; long-term memory is not recalled "
                    "until one is activated.\n")
            return SpacesCover(text if len(text) <= budget_chars else "", notices=notices)
        header = ("MNEMON MEMORY SPACES\nLong-term memory lives in these active spaces. Before assuming a past "
                  f"decision, preference or fact is unknown, recall it from them ({recall_hint}).\n")
        if len(header) > budget_chars:
            return SpacesCover("", hidden=len(active), active=len(active), notices=notices)
        lines: list[str] = []
        shown: list[dict[str, Any]] = []
        used = len(header)
        for index, record in enumerate(active):
            try:
                items: int | None = self.provider(record).count()
            except MnemonError:
                items = None
            description = " ".join(record.description.split())
            count_text = (f"{items} item" + ("" if items == 1 else "s")) if items is not None else "item count unavailable"
            line = f"- {record.name} (id {record.id}, {count_text}): {description}\n"
            remaining = len(active) - index - 1
            tail = len(f"({remaining} more active spaces not shown)\n") if remaining else 0
            if used + len(line) + tail > budget_chars:
                room = budget_chars - used - len(f"({len(active) - index} more active spaces not shown)\n")
                short = f"- {record.name} (id {record.id}, {count_text})\n"
                if len(short) <= room and not remaining:
                    lines.append(short)
                    used += len(short)
                    shown.append({"id": record.id, "name": record.name, "items": items})
                    continue
                break
            lines.append(line)
            used += len(line)
            shown.append({"id": record.id, "name": record.name, "items": items})
        hidden = len(active) - len(shown)
        text = header + "".join(lines) + (f"({hidden} more active spaces not shown)\n" if hidden else "")
        return SpacesCover(text, shown, hidden, len(active), notices)


class _BranchScope:
    """The branch rule of one recall (module doc)."""

    def __init__(self, branch: str | None, mode: str, detached: str) -> None:
        self.branch = branch
        self.mode = mode
        self.detached = detached

    @property
    def filters(self) -> bool:
        """True when some branch-tagged items are dropped."""
        if self.mode == "off":
            return False
        return self.branch is not None and self.mode == "filter" or self.branch is None and self.detached == "hide"

    def keep(self, tags: Sequence[str]) -> bool:
        branches = branch_tags(tags)
        if not branches:
            return True
        if self.branch is None:
            return self.detached == "show"
        return self.branch in branches or self.mode != "filter"

    def label(self, branches: list[str]) -> str | None:
        if self.mode == "off" or not branches:
            return None
        if self.branch is None:
            return "branch-unknown"
        return None if self.branch in branches else "other-branch"


def _finite(value: float) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))


def _validate_metadata(metadata: Any) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata", "must be an object of strings")
    if len(metadata) > 20:
        raise InvalidInput("metadata", "must hold at most 20 entries")
    out = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key or len(key) > 100:
            raise InvalidInput("metadata", "keys must be strings of 1..100 characters")
        require_unicode(key, "metadata")
        if not isinstance(value, str) or len(value) > 1000:
            raise InvalidInput(f"metadata.{key}", "must be a string of at most 1000 characters")
        require_unicode(value, f"metadata.{key}")
        out[key] = value
    return out


def _redacted(scrub: Scrubber) -> dict[str, Any]:
    """``{"redacted": summary}`` when the redaction pass replaced something, else ``{}``."""
    summary = scrub.summary()
    return {"redacted": summary} if summary else {}
