"""mnemon-ls provider ``hindsight``: Memory Spaces in the banks of a Hindsight server (``hindsight-api``).

Mapping (reference dsh-mnemon.md 6.7 "hindsight"): a space is one Hindsight *bank* (memory field ``bankId``);
an item is one Hindsight *document* written by ``retain`` (its ``document_id``, which mnemon-ls chooses:
``mnemon-<32 hex>``), holding the memory units Hindsight made of it. Recall is the bank's ``recall`` (its
semantic, keyword, graph and temporal retrieval fused by Hindsight, the ``budget`` memory field choosing how
much it searches: ``low``, ``mid`` (default) or ``high``); forget deletes the document and every unit of it
(Hindsight's hard ``DELETE .../documents/{id}``). What it cannot do: ``related``, ``link``, ``graph``,
``merge``.

Writes: a Hindsight server without a language model (``HINDSIGHT_API_LLM_PROVIDER=none``) keeps the text as
given (chunks), so the write mode is ``exact``; one with a language model extracts facts from it, and the
service field ``extracting`` must then say so (write mode ``async-extracting``: capacity maintenance never
archives into such a space, and receipts say the text was handed to extraction).

Scores: Hindsight's ``final`` score is a fused rank score, not a 0..1 confidence; the item's ``score`` is the
cosine of query and memory unit (``scores.semantic``) under a model this package does not know, so scores
are declared unscaled (tier ``unknown``; ``strict-v2`` sends an assistant at most ``maxUnknownResults``).

Service fields (``mnemon-ls provider configure hindsight --set KEY=VALUE``): ``endpoint`` (required: the
server's base URL, e.g. ``http://127.0.0.1:8888``, no credentials in it), ``apiKey`` (sent as a bearer token
only, for a server behind an authenticating proxy or Hindsight Cloud), ``timeoutSeconds`` (30: for connecting and for each wait on an answer),
``extracting`` (``false``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from mnemon_ls.spaces.plugins import EnginePlugin
from mnemon_ls.spaces.providers.base import Capabilities, FieldRule

__all__ = ["PLUGIN"]


def extracting(service: Mapping[str, Any]) -> bool:
    """Whether the service says its server extracts facts with a language model (``extracting``)."""
    value = service.get("extracting")
    return value is True or str(value).strip().lower() in ("true", "1", "yes")


def _configured(capabilities: Capabilities, service: Mapping[str, Any]) -> Capabilities:
    """A server that extracts (``extracting`` true) stores the facts its language model finds, not the text:
    writes are ``async-extracting``."""
    return dataclasses.replace(capabilities, write="async-extracting") if extracting(service) else capabilities


#: The ``mnemon_ls.providers`` entry point ``hindsight`` (protocol: mnemon_ls.spaces.providers.base; the engine
#: module is imported only when the provider is opened).
PLUGIN = EnginePlugin(
    provider_id="hindsight", label="Hindsight", kind="remote",
    capabilities=Capabilities(search=True, browse=True, graph=False, entities=False, related=False, link=False,
                              forget=True, merge=False, write="exact", delete="hard", normalized_scores=False,
                              discover=True, create_namespace=True),
    service_fields=("endpoint", "apiKey", "timeoutSeconds", "extracting"),
    memory_fields=("bankId", "budget"),
    secret_fields=frozenset({"apiKey"}),
    engine="mnemon_ls_provider_hindsight.engine:HindsightEngine.open",
    field_rules={
        "endpoint": FieldRule("url"),
        "timeoutSeconds": FieldRule("number", 0.1, 600, text="must be a number of seconds between 0.1 and 600"),
        "extracting": FieldRule("boolean")},
    configured=_configured)
