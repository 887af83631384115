"""mnemon-ls provider ``postgres``: Memory Spaces in a shared PostgreSQL database.

One database holds many spaces (table ``spaces``) and their items (table ``items``, in the schema named by
``schema``, default ``mnemon``); every machine and user configured with the same database sees the same
spaces at once. Items keep what native items keep (content, category, importance, tags, entities, source,
created/updated, soft delete, ``replaced_id`` lineage) plus ``author`` (the writer's user id, field
``author``, default the login name) and ``author_role`` (the database role that wrote it). A space is
``team`` (every member reads and writes) or ``user`` (only the role that made it reads and writes): enforced
by PostgreSQL row-level security (:mod:`.schema`), so a role sees nothing it may not read whatever client it
uses.

Service fields (``mnemon-ls provider configure postgres --set KEY=VALUE``): ``host``, ``port``, ``database``,
``user``, ``sslmode``, the password ``password`` (a secret: ``--secret password``), or one connection string
``dsn`` (a secret too: it may hold a password; ``postgresql://...`` or libpq's ``key=value`` form) --
``MNEMON_POSTGRES_DSN``, ``PGPASSWORD``, ``PGHOST``... and a ``.pgpass`` file work as libpq reads them;
``schema`` (``mnemon``), ``access`` (``team`` default, or ``user``: what ``space create --provider postgres``
makes), ``author`` (default the login name), ``semantic`` (``auto`` default, ``true``, ``false``: the pgvector
column and hybrid recall of :mod:`.vectors`), ``timeoutSeconds`` (10: connect and per-statement).
"""

from __future__ import annotations

from mnemon_ls.spaces.plugins import EnginePlugin
from mnemon_ls.spaces.providers.base import Capabilities, FieldRule

__all__ = ["PLUGIN"]

_PG_NAME = FieldRule(pattern=r"[^\x00-\x1f\x7f]{1,63}", text="must be a PostgreSQL name: 1..63 bytes, no control "
                                                             "characters")

#: The ``mnemon_ls.providers`` entry point ``postgres`` (the engine module, and psycopg, are imported only when
#: the provider is opened).
PLUGIN = EnginePlugin(
    provider_id="postgres", label="PostgreSQL", kind="remote",
    capabilities=Capabilities(search=True, browse=True, graph=False, entities=True, related=False, link=False,
                              forget=True, merge=False, write="exact", delete="soft", normalized_scores=True,
                              discover=True, create_namespace=True),
    service_fields=("dsn", "host", "port", "database", "user", "password", "sslmode", "schema", "access",
                    "author", "semantic", "timeoutSeconds"),
    memory_fields=("spaceKey",),
    secret_fields=frozenset({"password", "dsn"}),
    engine="mnemon_ls_provider_postgres.engine:PostgresEngine.open",
    connection="mnemon_ls_provider_postgres.connect:check",
    field_rules={
        "host": FieldRule(pattern=r"/[^\x00-\x1f\x7f]*|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?"
                                  r"|\[?[0-9A-Fa-f:.]+(?:%[A-Za-z0-9]+)?\]?",
                          text="must be a host name, an IP address or a Unix socket directory (not a URL: a "
                               "connection string goes in dsn, with --secret dsn)"),
        "port": FieldRule("integer", 1, 65535), "database": _PG_NAME, "user": _PG_NAME,
        "sslmode": FieldRule("choice", choices=("disable", "allow", "prefer", "require", "verify-ca",
                                                "verify-full")),
        "schema": FieldRule(pattern=r"[a-z_][a-z0-9_]{0,62}", text="must be 1..63 lower-case letters, digits or "
                                                                   "'_', not starting with a digit"),
        "access": FieldRule("choice", choices=("team", "user")),
        "semantic": FieldRule("choice", choices=("auto", "true", "false")),
        "author": FieldRule(pattern=r"[^\x00-\x1f\x7f]{1,128}", text="must be 1..128 characters, no control "
                                                                      "characters"),
        "timeoutSeconds": FieldRule("number", 0.5, 600, text="must be a number of seconds between 0.5 and 600")})
