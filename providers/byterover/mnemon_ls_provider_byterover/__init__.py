"""mnemon-ls provider ``byterover``: Memory Spaces in ByteRover projects (``byterover-cli``, the ``brv`` command).

Mapping (reference dsh-mnemon.md 6.7 "byterover"): a space is one ByteRover *project* (a directory with
``.brv/context-tree``, made by ``brv vc init``; memory field ``workingDirectory``, its absolute path); an item is
one *context-tree entry*, a markdown file ``<domain>/<topic>/<name>.md`` of the tree. Its item id is its path in
the tree with ``/`` written ``~`` (``decision~mnemon_ls~we_deploy_on_tuesdays_0a1b2c3d4e5f.md``; a path that
cannot be read back from that form is carried in base64url, ``b64~...``, or named by its hash, ``h~...``:
:func:`~.engine.item_id`).

- remember writes a new entry in ByteRover's own format (what its curate tool writes: YAML front matter
  ``title``, ``summary``, ``tags``, ``related``, ``keywords``, ``createdAt``, ``updatedAt``, then ``## Reason``
  and ``## Narrative`` / ``### Structure`` holding the text as given), atomically, at
  ``<category>/mnemon_ls/<words>_<12 hex>.md``; the category, importance and source are kept in three more
  front-matter keys ByteRover ignores (``mnemonCategory``, ``mnemonImportance``, ``mnemonSource``). The text is
  stored as given: write mode ``exact``. ``brv search`` sees a new entry once its index cache (5 s) expires.
- recall is ``brv search`` (ByteRover's local BM25 over the tree; no model, no network), run in the project;
  only entries of that project's own tree that still exist are returned (its index cache may still list a
  deleted file for 5 s), each read back from its file.
- forget deletes the entry's file and its derived siblings (``.abstract.md``, ``.overview.md``), as ByteRover's
  own curate DELETE does: a hard delete.
- discovery lists ``brv locations`` (the projects ByteRover knows on this machine, initialised ones only); a new
  space makes a project in the service field ``defaultDirectory`` (``brv vc init``).

What it cannot do: ``related``, ``link``, ``graph``, ``merge``, and ``browse`` (ByteRover lists nothing without a
query). Scores: ``brv search``'s score is BM25 squashed into 0..1 (``s / (1 + s)``) and mixed with its recency
and access signals, not a calibrated relevance: declared unscaled (tier ``unknown``).

Service fields (``mnemon-ls provider configure byterover --set KEY=VALUE``): ``cliPath`` (``brv``: the
``brv`` command, a name on ``PATH`` or an absolute path), ``timeoutSeconds`` (30: for each ``brv`` run; its
first run on a machine also starts ByteRover's daemon), ``defaultDirectory`` (where ``space create --provider
byterover`` makes new projects; unset: new spaces are refused, existing projects are discovered).
"""

from __future__ import annotations

from mnemon_ls.spaces.plugins import EnginePlugin
from mnemon_ls.spaces.providers.base import Capabilities, FieldRule

__all__ = ["PLUGIN"]

#: The ``mnemon_ls.providers`` entry point ``byterover`` (protocol: mnemon_ls.spaces.providers.base; the engine
#: module is imported only when the provider is opened).
PLUGIN = EnginePlugin(
    provider_id="byterover", label="ByteRover", kind="local",
    capabilities=Capabilities(search=True, browse=False, graph=False, entities=False, related=False, link=False,
                              forget=True, merge=False, write="exact", delete="hard", normalized_scores=False,
                              discover=True, create_namespace=True),
    service_fields=("cliPath", "timeoutSeconds", "defaultDirectory"),
    memory_fields=("workingDirectory",),
    secret_fields=frozenset(),
    engine="mnemon_ls_provider_byterover.engine:ByteRoverEngine.open",
    field_rules={
        "cliPath": FieldRule("string", pattern=r"[^\s'\"]+",
                             text="must be the brv command: a name on PATH or an absolute path, without spaces"),
        "timeoutSeconds": FieldRule("number", 1, 600, text="must be a number of seconds between 1 and 600"),
        "defaultDirectory": FieldRule("path", target="directory")})
