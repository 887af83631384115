"""Mem0's vector store, from the service fields (``vectorStore``):

- ``qdrant-local`` (default): Mem0's in-process Qdrant in ``<dataPath>/qdrant`` (one process at a time);
- ``qdrant``: a Qdrant server at ``vectorEndpoint`` (http(s), no credentials in it), key ``vectorApiKey``;
  :func:`probe_qdrant` asks it for its collections once before anything else opens, so a server that is
  down, does not answer in ``timeoutSeconds`` or refuses the key is a
  :class:`~mnemon_ls.errors.ProviderUnavailable` naming the field, the URL and the cause (never the key);
- ``pgvector``: a PostgreSQL server with the pgvector extension at ``pgHost`` (host name, IP address or a
  Unix socket directory), ``pgPort`` (5432), ``pgDatabase`` (``postgres``), ``pgUser``, password
  ``pgPassword`` (a secret field: stored 0600 in ``state/memory-providers.json``, never shown back),
  ``pgSslMode`` (libpq's ``sslmode``). The collection is one table (Mem0's schema: ``id uuid``, ``vector``,
  ``payload jsonb``, an HNSW cosine index).

For pgvector this module opens the connection pool itself (``psycopg_pool``, handed to Mem0 as its
``connection_pool``): one probe connection first, so a wrong password, a missing database, a server that is
down or lacks pgvector is a :class:`~mnemon_ls.errors.ProviderUnavailable` at once, naming
``host:port/database`` and the user (never the password) instead of a pool waiting out its timeout. The
libpq parameters are passed as keywords (``psycopg.conninfo.make_conninfo``), so a password with ``@``,
``/`` or ``:`` needs no escaping and never appears in a URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemon_ls.errors import InvalidInput, ProviderUnavailable, choice_rule

VECTOR_STORES = ("qdrant-local", "qdrant", "pgvector")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
PGVECTOR_INSTALL = "pip install 'mnemon-ls-provider-mem0[pgvector]'"
#: A host name, an IPv4 address or an IPv6 address (bracketed or not); a socket directory is an absolute path.
_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[?[0-9A-Fa-f:.]+(?:%[A-Za-z0-9]+)?\]?)$")


@dataclass(frozen=True)
class PgTarget:
    """One PostgreSQL database (fields as in the module doc); ``timeout`` in seconds."""

    host: str
    port: int
    dbname: str
    user: str
    password: str | None
    sslmode: str | None
    timeout: float

    @property
    def location(self) -> str:
        """``postgresql <host>:<port>/<dbname> as <user>``: where it is, without the password."""
        return f"postgresql {self.host}:{self.port}/{self.dbname} as {self.user}"

    def conninfo(self) -> str:
        """libpq keyword/value connection string (psycopg quotes every value)."""
        from psycopg.conninfo import make_conninfo

        params: dict[str, Any] = {"host": self.host.strip("[]"), "port": self.port, "dbname": self.dbname,
                                  "user": self.user, "connect_timeout": max(1, round(self.timeout)),
                                  "application_name": "mnemon-ls"}
        if self.password:
            params["password"] = self.password
        if self.sslmode:
            params["sslmode"] = self.sslmode
        return make_conninfo("", **params)

    def scrub(self, text: str) -> str:
        """``text`` with the password (if any) replaced by ``***``."""
        return text.replace(self.password, "***") if self.password else text


def _name(service: dict[str, Any], field: str, default: str | None) -> str:
    value = service.get(field)
    text = str(value).strip() if value not in (None, "") else default
    if not text:
        raise InvalidInput(f"services.{field}", "is required with vectorStore pgvector")
    if len(text.encode()) > 63 or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise InvalidInput(f"services.{field}", "must be a PostgreSQL name: 1..63 bytes, no control characters")
    return text


def pg_target(service: dict[str, Any], timeout: float) -> PgTarget:
    """The database of ``vectorStore pgvector`` or :class:`InvalidInput` naming ``services.<field>`` (values
    are never echoed)."""
    host = str(service.get("pgHost") or "").strip()
    if not host:
        raise InvalidInput("services.pgHost", "is required with vectorStore pgvector")
    if "://" in host or "@" in host or "?" in host:
        raise InvalidInput("services.pgHost", "must be a host name or IP address, not a URL (the user goes in "
                                              "pgUser, the password in pgPassword)")
    if not (host.startswith("/") or _HOST.match(host)):
        raise InvalidInput("services.pgHost", "must be a host name, an IP address or a Unix socket directory")
    try:
        port = int(service.get("pgPort") or 5432)
    except (TypeError, ValueError):
        raise InvalidInput("services.pgPort", "must be an integer 1..65535") from None
    if not 1 <= port <= 65535:
        raise InvalidInput("services.pgPort", "must be an integer 1..65535")
    sslmode = str(service.get("pgSslMode") or "").strip() or None
    if sslmode is not None and sslmode not in SSL_MODES:
        raise InvalidInput("services.pgSslMode", choice_rule(SSL_MODES, sslmode))
    password = service.get("pgPassword")
    return PgTarget(host, port, _name(service, "pgDatabase", "postgres"), _name(service, "pgUser", None),
                    str(password) if password not in (None, "") else None, sslmode, timeout)


def vector_store_config(service: dict[str, Any], store: str, data: Path, collection: str, dims: int,
                        timeout: float) -> dict[str, Any]:
    """Mem0's ``vector_store`` entry (pgvector's ``connection_pool`` is added by :func:`open_pg_pool`)."""
    if store not in VECTOR_STORES:
        raise InvalidInput("services.vectorStore", choice_rule(VECTOR_STORES, store))
    config: dict[str, Any] = {"collection_name": collection, "embedding_model_dims": dims}
    if store == "qdrant-local":
        config.update(path=str(data / "qdrant"), on_disk=True)
        return {"provider": "qdrant", "config": config}
    if store == "qdrant":
        if not service.get("vectorEndpoint"):
            raise InvalidInput("services.vectorEndpoint", "is required with vectorStore qdrant (the Qdrant "
                                                          "server's http(s) URL; its key goes in vectorApiKey)")
        config.update(url=str(service["vectorEndpoint"]), api_key=service.get("vectorApiKey") or None)
        return {"provider": "qdrant", "config": config}
    pg_target(service, timeout)  # validated before anything opens
    config.update(hnsw=True, diskann=False)
    return {"provider": "pgvector", "config": config}


def probe_qdrant(url: str, api_key: str | None, timeout: float) -> None:
    """One ``GET /collections`` on the Qdrant server at ``url`` through ``qdrant_client`` (``timeout`` seconds,
    rounded up to whole seconds, the client's unit), so ``enable`` and ``test`` fail at once and change nothing.

    Raises :class:`ProviderUnavailable` (``engine-failed``, ``location`` ``Qdrant server <url>``) with
    ``field`` ``services.vectorEndpoint`` when the server cannot be reached or does not answer as Qdrant
    (connection refused, a timeout, an HTTP error status), or ``services.vectorApiKey`` when it answers HTTP
    401/403 (the key is wrong or missing); the message names the URL and the cause, never the key.
    ``engine-missing`` when qdrant-client (a dependency of mem0ai) does not import."""
    import math
    import warnings

    try:
        from qdrant_client import QdrantClient
        from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse
    except ImportError as exc:
        raise ProviderUnavailable(f"provider mem0: vectorStore qdrant needs qdrant-client ({exc}); pip install "
                                  "mem0ai==2.2.1", provider="mem0", reason="engine-missing") from None
    location = f"Qdrant server {url}"

    def failed(field: str, cause: str) -> ProviderUnavailable:
        if api_key:
            cause = cause.replace(api_key, "***")
        return ProviderUnavailable(f"provider mem0: the {location} ({field}) {cause}", provider="mem0",
                                   reason="engine-failed", location=location, field=field)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Api key is used with an insecure connection" (the URL says http)
        client = QdrantClient(url=url, api_key=api_key or None, timeout=max(1, math.ceil(timeout)),
                              check_compatibility=False)
    try:
        client.get_collections()
    except UnexpectedResponse as exc:
        if exc.status_code in (401, 403):
            said = "refused the key in vectorApiKey" if api_key else "needs a key: set vectorApiKey"
            raise failed("services.vectorApiKey", f"{said} (HTTP {exc.status_code})") from None
        raise failed("services.vectorEndpoint", f"does not answer as a Qdrant server: HTTP {exc.status_code} "
                                                f"{exc.reason_phrase}".rstrip()) from None
    except ResponseHandlingException as exc:
        source = getattr(exc, "source", exc)
        cause = " ".join(f"{type(source).__name__}: {source}".split())[:300]
        if "Timeout" in type(source).__name__:
            cause += f" (no answer within {timeout:g} s, timeoutSeconds)"
        raise failed("services.vectorEndpoint", f"cannot be reached: {cause}") from None
    except Exception as exc:
        cause = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise failed("services.vectorEndpoint", f"does not answer as a Qdrant server: {cause[:300]}") from None
    finally:
        client.close()


def open_pg_pool(target: PgTarget) -> Any:
    """A ``psycopg_pool.ConnectionPool`` (1..4 connections, ``timeout`` seconds to get one) on ``target``,
    opened after one probe connection proved the login and the pgvector extension (module doc).

    Raises :class:`ProviderUnavailable` (``engine-missing`` without psycopg, ``engine-failed`` naming
    :attr:`PgTarget.location` otherwise)."""
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError as exc:
        raise ProviderUnavailable(f"provider mem0: vectorStore pgvector needs psycopg ({exc}); {PGVECTOR_INSTALL}",
                                  provider="mem0", reason="engine-missing") from None
    info = target.conninfo()

    def failed(cause: str) -> ProviderUnavailable:
        return ProviderUnavailable(f"provider mem0: the pgvector store at {target.location} {target.scrub(cause)}",
                                   provider="mem0", reason="engine-failed", location=target.location)

    try:
        with psycopg.connect(info) as probe:
            row = probe.execute("SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                                "EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").fetchone()
    except psycopg.Error as exc:
        raise failed("does not open: " + " ".join(str(exc).split())) from None
    if row is None or (row[0] is None and not row[1]):
        raise failed("has no pgvector extension (install pgvector on the server, then CREATE EXTENSION vector)")
    pool = ConnectionPool(info, min_size=1, max_size=4, open=False, timeout=target.timeout, name="mnemon-ls-mem0")
    try:
        pool.open(wait=True, timeout=target.timeout)
    except Exception as exc:
        pool.close()
        raise failed(f"does not open: {type(exc).__name__}: {exc}") from None
    return pool
