"""mnemon-ls provider ``openviking``: Memory Spaces in the memory folders of an OpenViking server (``openviking``).

Mapping (reference dsh-mnemon.md 6.7 "openviking"): OpenViking keeps each user's memories as files under
``viking://user/<user>/memories``. A space is, in the memory field ``targetUri``, either that root, holding what
OpenViking writes itself (the files directly in it, such as ``identity.md``, and its own folders
``preferences/``, ``entities/``, ``events/``...), or another folder directly under it (what ``space create``
makes, ``viking://user/<user>/memories/<slug>``, or a folder of OpenViking's clients), a space of its own: no
file is in two spaces. Discovery lists both kinds for every user the server shows. An item is one non-dot ``.md``
file of its space, its path relative to ``targetUri`` naming it (item id: the file name without ``.md`` for what
mnemon-ls writes, ``mnemon-<32 hex>``; any other path carried by
:func:`mnemon_ls.spaces.providers.carried_ids.carry`; OpenViking writes a space in a file name as ``_``).
Remember writes a new file (``POST /api/v1/content/write``, ``processing_mode`` ``vectors_only``: the text as
given, embedded, no language model called, so the write mode is ``exact``; a write that fails leaves no file);
recall is OpenViking's ``find`` (vector search over the space's files, ``level`` 2: files only); forget deletes
the file and its vectors (``DELETE /api/v1/fs``, hard). What it cannot do: ``related``, ``link``, ``graph``,
``merge``.

Search tags: OpenViking keeps ``key=value`` tags (one value per key, lower-cased) and filters by them; category,
importance and source are kept as ``category=``, ``importance=``, ``source=`` (a source with upper-case letters,
``=``, spaces or other characters as ``source_hex=`` + the hex of its UTF-8 bytes) and mnemon-ls's tags as
``tags=`` + the hex of their UTF-8 JSON list (hex survives the lower-casing).

Scores: ``find``'s score is the cosine of the server's embedding model, which this package does not know, so
scores are declared unscaled (tier ``unknown``; ``strict-v2`` sends an assistant at most
``maxUnknownResults``). ``find`` has no keyword retrieval: ``mode`` ``keyword`` searches by meaning too.

Service fields (``mnemon-ls provider configure openviking --set KEY=VALUE``): ``endpoint`` (required: the
server's base URL, e.g. ``http://127.0.0.1:1933``, no credentials in it), ``apiKey`` (sent as ``X-API-Key``: a
user key of a server with ``root_api_key`` set; secret), ``user`` (the user whose memories a new space goes
under, ``default``; a server in dev mode, without keys, is told it in ``X-OpenViking-User``; a key names its own
user, taken when ``user`` is empty, and another ``user`` is refused unless the key is the root key), ``timeoutSeconds`` (30: for connecting and for each wait on an answer).
"""

from __future__ import annotations

from mnemon_ls.spaces.plugins import EnginePlugin
from mnemon_ls.spaces.providers.base import Capabilities, FieldRule

__all__ = ["PLUGIN"]

#: A user id OpenViking accepts in a URI, and so mnemon-ls does (OpenViking 0.5's ``validate_user_id``: 1..255
#: letters, digits, ``_``, ``.``, ``@``, ``-``, at most one ``@``, not ``.`` or ``..``; e.g. ``alice@acme.com``).
USER_PATTERN = (r"(?!\.\.?(?![A-Za-z0-9_.@-]))(?![A-Za-z0-9_.-]*@[A-Za-z0-9_.-]*@)"
                r"[A-Za-z0-9_.@-]{1,255}")

USER_RULE = ("must be an OpenViking user id: 1..255 letters, digits, '_', '.', '@' or '-', at most one '@', "
             "not '.' or '..'")

#: The ``mnemon_ls.providers`` entry point ``openviking`` (protocol: mnemon_ls.spaces.providers.base; the engine
#: module is imported only when the provider is opened).
PLUGIN = EnginePlugin(
    provider_id="openviking", label="OpenViking", kind="remote",
    capabilities=Capabilities(search=True, browse=True, graph=False, entities=False, related=False, link=False,
                              forget=True, merge=False, write="exact", delete="hard", normalized_scores=False,
                              discover=True, create_namespace=True),
    service_fields=("endpoint", "apiKey", "user", "timeoutSeconds"),
    memory_fields=("targetUri",),
    secret_fields=frozenset({"apiKey"}),
    engine="mnemon_ls_provider_openviking.engine:OpenVikingEngine.open",
    field_rules={
        "endpoint": FieldRule("url"),
        "user": FieldRule("string", pattern=USER_PATTERN,
                          text=USER_RULE),
        "timeoutSeconds": FieldRule("number", 0.1, 600, text="must be a number of seconds between 0.1 and 600")})
