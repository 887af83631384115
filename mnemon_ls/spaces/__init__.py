"""Memory Spaces Source: named long-term stores (Mnemon ``mnemon.db``), routing, federated recall, branch scope.

Modules:

- :mod:`.model` field rules, value formats, :class:`Item`, :class:`WriteReceipt`, ``receipt_status`` (pure);
- :mod:`.graph` entity extraction and causal cues for automatic edges (pure);
- :mod:`.policy` recall-quality policies ``strict-v2`` / ``strict-v1`` / ``balanced-v1`` / ``exhaustive-v1`` (pure);
- :mod:`.querysense` what a recall query says beyond its words: its time range, asking words, names (pure);
- :mod:`.registry` ``data/.dsh-memory-bodies.json`` + ``state/memory-providers.json`` (locked, repaired), with
  its file model :mod:`.registry_model`, provider plane :mod:`.registry_providers` and the repair of a damaged
  file :mod:`.registry_repair`;
- :mod:`.index` the side search index ``data/<id>/.mnemon-ls-index.db`` (derived, FTS5) and the spaces'
  configuration of the shared tokenizer :mod:`mnemon_ls.text` (``TOKENIZER``);
- :mod:`.providers.native` the embedded provider on ``data/<id>/mnemon.db`` (the Mnemon CLI's schema);
- :mod:`.providers.cli` the same operations through an installed ``mnemon`` binary;
- :mod:`.providers.base` the public provider protocol (capabilities, receipts, evidence, namespaces, health);
- :mod:`.plugins` installed provider distributions (entry point group ``mnemon_ls.providers``);
- :mod:`.thirdparty` configured providers: engines, discovery, health, the recall timeout;
- :mod:`.provider_fields` the provider plane's field rules;
- :mod:`.service` :class:`SpacesService`, the one object the Host wires;
- :mod:`.errors` ``provider-unavailable``, ``provider-failed``, ``space-read-only``, ``space-refused``.

Public API (JSON via ``to_dict()``; every error is a :class:`~mnemon_ls.errors.MnemonError` with a stable
``code``; bad input is ``invalid-input`` with ``data.field``)::

    svc = SpacesService(root, clock=utc_now, effective_store=None, quality=RecallQuality.from_dict(cfg),
                        native_driver="embedded"|"cli", cli=CliOptions(path, timeout, embed_endpoint),
                        lock_timeout=10.0, track_access=True)
    # directory
    svc.list_spaces(active_only=False) -> list[SpaceView]
    svc.get_space(space_id) -> SpaceView
    svc.create_space(name, description, active=False) -> SpaceView      # first id "default", then UUIDs
    svc.update_space(space_id, name=None, description=None) -> SpaceView
    svc.activate(space_id) / svc.deactivate(space_id) -> SpaceView
    svc.delete_space(space_id) -> {"deleted", "providerId", "defaultStore", "message"}
    svc.merge(source_ids, target_id, deactivate_sources=True) -> {"targetId", "status", "sources": [...]}
    svc.space_status(space_id) -> {"space": SpaceView dict, "status": {...CLI status + index}}
    svc.reindex(space_id) -> {"items", "seconds"}
    svc.provider_services() -> [{"providerId", "label", "enabled", "configuredFields", "configuredSecrets", "spaces"}]
    svc.configure_provider(provider_id, fields, enabled=None, clear_secrets=()) -> same view  # registry only
    # third-party providers (installed + configured + enabled; mnemon_ls.spaces.thirdparty)
    svc.thirdparty.list() / .view(id) -> [{"providerId", "installed", "configured", "enabled", "usable",
                                           "capabilities", "configuredFields", "configuredSecrets", ...}]
    svc.thirdparty.configure(id, fields, clear_secrets=()) / .enable(id, fields) / .disable(id)
    svc.thirdparty.test(id) -> {"providerId", "health", "namespaces"}; .discover(id) -> [SpaceRecord]
    svc.create_space(name, description, active=False, provider="holographic")
    svc.notices() -> [{"file", "reason", "quarantined", "recovered", "message"}]   # registry repairs
    # memory
    svc.remember(content, space_id=None, category=None, importance=None, tags=None, entities=None,
                 source=None, branch=None) -> WriteReceipt        # status committed | skipped (duplicateOf)
    svc.recall(query, spaces=None, limit=None, mode="smart", category=None, source=None, intent=None,
               branch=None, branch_recall="filter", detached_head_policy="hide", quality=None) -> RecallResult
    svc.related(space_id, item_id, depth=2, edge_type=None, limit=20) -> {"spaceId", "spaceName", "id", "items"}
    svc.link(space_id, source_id, target_id, edge_type="semantic", weight=0.5, metadata=None) -> WriteReceipt
    svc.forget(space_id, item_id) -> WriteReceipt
    svc.cover(budget_chars) -> SpacesCover                        # wake snapshot block
    svc.flush_access()                                            # idle hook: batched access counters
    svc.close()

Shapes: :class:`SpaceView`, :class:`RecallResult`, :class:`SpacesCover` and :class:`WriteReceipt` document
their ``to_dict()``. Files: ``data/.dsh-memory-bodies.json`` and ``state/memory-providers.json`` (truth,
0600), ``data/.dsh-memory-bodies.lock`` (lock marker), ``state/.dsh-memory-bodies.last-good.json``,
``data/.quarantine/`` and ``state/quarantine/`` (damaged registries), ``data/<id>/mnemon.db`` (the CLI's
store), ``data/<id>/.mnemon-ls-index.db*`` (derived; exclude from packs; safe to delete),
``data/.deleted/<stamp>-<id>/`` and ``<stamp>-<id>.json`` (a deleted space's store and catalog entry, kept:
:mod:`.deleted`).
"""

from typing import Any

#: Public name -> submodule, imported on first use: the wake's cover reads the registry without the service,
#: the providers or the semantic engine (:mod:`.cover`).
_EXPORTS = {
    "ProviderFailed": "errors", "ProviderUnavailable": "errors", "SpaceReadOnly": "errors", "SpaceRefused": "errors",
    "MAX_RESULTS": "model", "Item": "model", "WriteReceipt": "model", "receipt_status": "model", "utc_now": "model",
    "RecallQuality": "policy", "register_policy": "policy", "unregister_policy": "policy", "SpaceRecord": "registry",
    "SpaceRegistry": "registry", "CliOptions": "service", "RecallResult": "service", "SpacesCover": "service",
    "SpacesService": "service", "SpaceView": "service"
}
__all__ = [
    "MAX_RESULTS", "CliOptions", "Item", "ProviderFailed", "ProviderUnavailable", "RecallQuality", "RecallResult",
    "SpaceReadOnly", "SpaceRecord", "SpaceRefused", "SpaceRegistry", "SpaceView", "SpacesCover", "SpacesService",
    "WriteReceipt", "receipt_status", "register_policy", "unregister_policy", "utc_now",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
