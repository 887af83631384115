"""mnemon-ls provider ``holographic``: Memory Spaces on Hermes Agent's Holographic memory engine.

The engine is the one the ``hermes-agent`` package ships (``plugins/memory/holographic/store.py``,
``retrieval.py``, ``holographic.py``): one SQLite file (``facts``, ``entities``, ``fact_entities``,
``memory_banks``, FTS5 ``facts_fts``), exact dedup on content, retrieval = FTS5 candidates, word overlap
and hash-derived HRR similarity, weighted by trust. This package loads those modules by file (without
Hermes' plugin glue ``__init__``) and drives them, so a Hermes Agent on the same machine sees the same facts.

Mapping (reference dsh-mnemon.md 6.7 "holographic"):

- a *bank* (a fact ``category``; Hermes keeps one ``memory_banks`` row ``cat:<category>`` per bank) is a
  space: discovery lists every category that holds facts; ``space create --provider holographic`` names a
  new bank (connection ``bankId``);
- a *fact* is an item (id = ``fact_id``); tags go to the fact's comma-separated ``tags``; the engine's own
  extracted *entities* are the item's entities and drive ``related`` (facts sharing entities or terms,
  weighted by trust, top 20);
- *trust* decides the recall tier around ``defaultTrust`` (default 0.5, the trust of new facts): at it the
  score is the engine's relevance, so a literal hit keeps the tier its relevance gives; trust raised by
  Hermes' ``helpful`` feedback moves the score toward 1, trust lowered by ``unhelpful`` scales it down to
  0 at ``minTrust`` (default 0.3, Hermes' default), below which the engine returns no fact
  (``engine.recall_score``);
- what it cannot do: ``link`` (no typed edges), ``merge``, ``graph``; forget is a *hard* delete.

Service fields (``mnemon-ls provider configure holographic --set KEY=VALUE``): ``dataPath`` (the SQLite
file; default ``$HERMES_HOME/memory_store.db``, ``HERMES_HOME`` defaulting to ``~/.hermes``, as Hermes),
``enginePath`` (the ``plugins/memory/holographic`` directory or the site-packages holding it; default: this
Python's, else the one of the ``hermes`` command on ``PATH``), ``defaultTrust``, ``minTrust``.
"""

from __future__ import annotations

from typing import Any, Mapping

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces.plugins import EnginePlugin
from mnemon_ls.spaces.providers.base import Capabilities, FieldRule

__all__ = ["PLUGIN"]

def _check_trust(service: Mapping[str, Any]) -> None:
    """``minTrust`` must stay below ``defaultTrust`` (defaults 0.3 and 0.5): the engine returns no fact below
    ``minTrust``, so a new fact (at ``defaultTrust``) would never be recalled. :class:`InvalidInput`
    naming ``services.minTrust`` otherwise."""
    low = float(service.get("minTrust", 0.3))
    default = float(service.get("defaultTrust", 0.5))
    if low >= default:
        raise InvalidInput("services.minTrust", f"must be below defaultTrust ({default:g}) (got {low:g}): the engine "
                                                "returns no fact below minTrust, so new facts could not be recalled")


#: The ``mnemon_ls.providers`` entry point ``holographic`` (protocol: mnemon_ls.spaces.providers.base; the
#: engine module is imported only when the provider is opened).
PLUGIN = EnginePlugin(
    provider_id="holographic", label="Holographic", kind="local",
    capabilities=Capabilities(search=True, browse=True, graph=False, entities=True, related=True, link=False,
                              forget=True, merge=False, write="exact", delete="hard", normalized_scores=True,
                              discover=True, create_namespace=True),
    service_fields=("dataPath", "enginePath", "defaultTrust", "minTrust"),
    memory_fields=("bankId", "defaultTrust", "minTrust"),
    secret_fields=frozenset(),
    engine="mnemon_ls_provider_holographic.engine:HolographicEngine.open",
    # checked when configured (mnemon-ls provider configure); an empty value clears a field to its default
    field_rules={"dataPath": FieldRule("path", target="file"),
                 "enginePath": FieldRule("path", target="directory"),
                 "defaultTrust": FieldRule("number", 0, 1), "minTrust": FieldRule("number", 0, 1)},
    check_service=_check_trust)
