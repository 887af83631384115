"""Where the provider connects, from its service fields and libpq's own sources, without ever showing a
password.

Sources, later ones overriding single parameters: the connection string ``dsn`` (service field, a secret) or
else ``MNEMON_POSTGRES_DSN``; then the fields ``host``, ``port``, ``database``, ``user``, ``sslmode`` and
``password`` (a secret). Whatever is still missing libpq takes from its environment (``PGHOST``,
``PGPASSWORD``, ...) and a ``.pgpass`` file (``PGPASSFILE``, default ``~/.pgpass``), as every PostgreSQL client
does; so a password need not be stored by mnemon-ls at all. The parameters are passed to libpq as keywords
(:func:`psycopg.conninfo.make_conninfo`): a password holding ``@``, ``/`` or ``'`` needs no escaping and never
appears in a URL.

:class:`Target` gives :attr:`~Target.location` (``postgresql host:port/database as user``, no password) and
:meth:`~Target.scrub`, which every error message of the provider goes through: it replaces each password
it knows (the configured one, the one inside ``dsn``, ``PGPASSWORD``) and the ``dsn`` itself by ``***``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from mnemon_ls.errors import InvalidInput

DSN_ENV = "MNEMON_POSTGRES_DSN"
DEFAULT_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Target:
    """One database: ``params`` the libpq keywords (password included when configured), ``secrets`` the texts
    never shown, ``timeout`` seconds (connect, and per statement)."""

    params: dict[str, Any]
    secrets: tuple[str, ...]
    timeout: float

    @property
    def location(self) -> str:
        """``postgresql <host>:<port>/<database> as <user>`` (libpq's defaults where nothing says)."""
        host = self.params.get("host") or os.environ.get("PGHOST") or "localhost"
        port = self.params.get("port") or os.environ.get("PGPORT") or 5432
        user = self.params.get("user") or os.environ.get("PGUSER") or _login()
        dbname = self.params.get("dbname") or os.environ.get("PGDATABASE") or user
        return f"postgresql {host}:{port}/{dbname} as {user}"

    def conninfo(self) -> str:
        """The libpq ``key=value`` string (holds the configured password; give it to libpq only)."""
        from psycopg.conninfo import make_conninfo

        return make_conninfo("", **{"connect_timeout": max(1, round(self.timeout)),
                                    "application_name": "mnemon-ls", **self.params})

    def scrub(self, text: str) -> str:
        """``text`` with every secret of :attr:`secrets` (and ``PGPASSWORD`` now) replaced by ``***``."""
        env = os.environ.get("PGPASSWORD")
        for secret in sorted({*self.secrets, *([env] if env else [])}, key=len, reverse=True):
            if secret:
                text = text.replace(secret, "***")
        return text


def _login() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        return "unknown"


def timeout_of(service: dict[str, Any]) -> float:
    """``timeoutSeconds`` (default 10), or :class:`InvalidInput` naming ``services.timeoutSeconds``."""
    try:
        value = float(service.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS)
    except (TypeError, ValueError):
        raise InvalidInput("services.timeoutSeconds", "must be a number of seconds between 0.5 and 600") from None
    if not 0.5 <= value <= 600:
        raise InvalidInput("services.timeoutSeconds", "must be a number of seconds between 0.5 and 600")
    return value


def target_of(service: dict[str, Any]) -> Target:
    """The :class:`Target` of the service fields (module doc). Raises :class:`InvalidInput` naming
    ``services.dsn`` (or the environment variable) when the connection string does not parse -- the message
    never holds it -- or the field whose value is wrong."""
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    timeout = timeout_of(service)
    dsn = str(service.get("dsn") or "").strip()
    field = "services.dsn"
    if not dsn and os.environ.get(DSN_ENV, "").strip():
        dsn, field = os.environ[DSN_ENV].strip(), DSN_ENV
    params: dict[str, Any] = {}
    if dsn:
        try:
            params = {k: v for k, v in conninfo_to_dict(dsn).items() if v is not None}
        except ProgrammingError:
            raise InvalidInput(field, "is not a PostgreSQL connection string (postgresql://HOST/DB or "
                                      "'host=... dbname=...'); it is not shown here") from None
    for name, key in (("host", "host"), ("port", "port"), ("database", "dbname"), ("user", "user"),
                      ("sslmode", "sslmode"), ("password", "password")):
        value = service.get(name)
        if value not in (None, ""):
            params[key] = str(value)
    if "port" in params:
        try:
            if not 1 <= int(params["port"]) <= 65535:
                raise ValueError
        except ValueError:
            raise InvalidInput("services.port", "must be an integer between 1 and 65535") from None
    secrets = tuple(s for s in (dsn, str(params.get("password") or "")) if s)
    return Target(params, secrets, timeout)


#: Seconds the connection check (:func:`check`) waits for the server at most (libpq's connect timeout).
CHECK_TIMEOUT_SECONDS = 5.0


def check(service: dict[str, Any]) -> Any:
    """The provider's connection check (``provider list``, ``doctor``, the editors' provider views): connect
    with the service fields (``timeoutSeconds``, at most :data:`CHECK_TIMEOUT_SECONDS`), read the server
    version, the role and the schema version, and disconnect; writes nothing. Returns a
    :class:`~mnemon_ls.spaces.providers.base.Connection`: ``connected`` (``PostgreSQL 16.2 as role mnemon;
    schema mnemon at version 3``, or that the schema is not made yet) or ``unreachable`` with libpq's reason
    (through :meth:`Target.scrub`: never a password); fields that do not make a connection are ``unreachable``
    naming the field."""
    import dataclasses
    import time

    from mnemon_ls.spaces.providers.base import Connection

    from .schema import SCHEMA_RE, version_of

    try:
        target = target_of(service)
    except InvalidInput as exc:
        return Connection("unreachable", None, f"the fields do not make a connection: {exc.message}")
    schema = str(service.get("schema") or "mnemon")
    target = dataclasses.replace(target, timeout=min(target.timeout, CHECK_TIMEOUT_SECONDS))
    import psycopg

    started = time.perf_counter()
    try:
        with psycopg.connect(target.conninfo(), autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            role = conn.execute("SELECT current_user").fetchone()[0]
            found = version_of(conn, schema) if SCHEMA_RE.fullmatch(schema) else 0
    except psycopg.Error as exc:
        reason = target.scrub(" ".join(f"{exc}".split()))[:400] or type(exc).__name__
        return Connection("unreachable", target.location, reason, (time.perf_counter() - started) * 1000)
    state = (f"schema {schema} at version {found}" if found else
             f"no mnemon-ls schema {schema} in this database yet (provider enable makes it)")
    return Connection("connected", target.location, f"PostgreSQL {version} as role {role}; {state}",
                      (time.perf_counter() - started) * 1000)
