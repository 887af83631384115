"""The PostgreSQL engine and its spaces (package doc for the mapping and the fields; :mod:`.schema` for the
tables and row-level security; :mod:`.recall` for the ranking).

One engine holds one connection (psycopg 3, autocommit, each write one transaction), used under a lock.
When the server goes away (stopped, restarted, the network cut) the call in progress raises
:class:`~mnemon_ls.errors.ProviderUnavailable` (``reason`` ``engine-failed``, the location, the cause without
any password) and its transaction is never committed, so no part of a write is kept; the connection is
dropped and the next call connects again.

Errors: ``ProviderUnavailable`` ``engine-missing`` when psycopg does not import, ``engine-failed`` when the
database does not open or fails during a call, ``format-too-new`` (:func:`.schema.migrate`);
:class:`~mnemon_ls.errors.SpaceRefused` (``reason`` ``access``) when row-level security refuses a write (a
``user`` space of another role); :class:`~mnemon_ls.errors.InvalidInput` for a bad field or an id that is not
an active item of the space.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from mnemon_ls.errors import InvalidInput, MnemonError, ProviderUnavailable, SpaceRefused, choice_rule
from mnemon_ls.spaces.providers.base import Health, Namespace

from .connect import Target, _login, target_of
from .schema import CURRENT, SCHEMA_RE, flag, migrate, recheck_extensions, version_of

if TYPE_CHECKING:
    from .space import PostgresSpace

T = TypeVar("T")
INSTALL = "pip install mnemon-ls-provider-postgres"


class _MissingStore:
    """What ``provider test`` opens when the database has no mnemon schema yet (it writes nothing)."""

    def __init__(self, location: str) -> None:
        self.location = location

    def health(self) -> Health:
        return Health(False, "PostgreSQL", self.location, 0, None,
                      "no mnemon-ls schema in this database yet (provider enable creates it; provider test writes "
                      "nothing)")

    def discover(self) -> list[Namespace]:
        return []

    def close(self) -> None:
        return None


class PostgresEngine:
    """One database (module doc). ``migrated`` is ``(from, to)`` when this open migrated the schema."""

    def __init__(self, target: Target, schema: str, access: str, author: str) -> None:
        self.target = target
        self.schema = schema
        self.access = access
        self.author = author
        self.location = target.location
        self.migrated: tuple[int, int] | None = None
        self.added: list[str] = []  # meta keys an open turned on (:func:`.schema.recheck_extensions`)
        #: ``(found, current)`` when ``provider test`` found an older schema and left it as it is
        self.pending: tuple[int, int] | None = None
        #: semantic recall on (:mod:`.vectors`), and why not when it is off (or the model failed to load)
        self.semantic = False
        self.semantic_note: str | None = None
        self._conn: Any = None
        self._lock = threading.RLock()

    @classmethod
    def open(cls, service: dict[str, Any]) -> Any:
        """Connect, then migrate the schema forward (or, for ``provider test`` (``probe``), write nothing: a
        database without the schema gives an unhealthy answer, one at an older version is read as it is and
        the answer says so; both are left as they are)."""
        import importlib.util

        if importlib.util.find_spec("psycopg") is None:
            raise ProviderUnavailable(f"provider postgres: psycopg is not installed; {INSTALL}",
                                      provider="postgres", reason="engine-missing")
        schema = str(service.get("schema") or "mnemon")
        if not SCHEMA_RE.fullmatch(schema):
            raise InvalidInput("services.schema", "must be 1..63 lower-case letters, digits or '_', not starting "
                                                  "with a digit")
        access = str(service.get("access") or "team")
        if access not in ("team", "user"):
            raise InvalidInput("services.access", choice_rule(("team", "user"), access))
        engine = cls(target_of(service), schema, access, str(service.get("author") or _login()))
        found = engine.call(lambda conn: version_of(conn, schema))
        if service.get("probe") and found == 0:
            engine.close()
            return _MissingStore(engine.location)
        if service.get("probe") and found < CURRENT:
            engine.pending = (found, CURRENT)  # provider test writes nothing: the next open migrates it
        else:
            found, now = engine.call(lambda conn: migrate(conn, schema, engine.location))
            if found != now:
                engine.migrated = (found, now)
            engine.added = engine.call(lambda conn: recheck_extensions(conn, schema))
        from . import vectors

        on, why = vectors.wanted(service)
        if on and not engine.call(lambda conn: flag(conn, schema, "vectors")):
            on, why = False, "the server has no pgvector extension"
        engine.semantic, engine.semantic_note = on, (None if on else f"semantic recall is off: {why}")
        return engine

    # ------------------------------------------------------------------ connection

    def _connect(self) -> Any:
        import psycopg

        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        self._drop()
        conn = psycopg.connect(self.target.conninfo(), autocommit=True)
        conn.execute(f"SET statement_timeout = {int(self.target.timeout * 1000)}")
        self._conn = conn
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # already broken: nothing to release
                pass

    def call(self, fn: Callable[[Any], T], *, space_id: str | None = None) -> T:
        """``fn(connection)`` under the engine's lock (connecting first when there is no live connection).

        A lost or refused connection drops the connection and raises :class:`ProviderUnavailable`; a write
        row-level security refuses raises :class:`SpaceRefused`; errors of mnemon-ls pass as they are."""
        import psycopg

        with self._lock:
            try:
                return fn(self._connect())
            except MnemonError:
                raise
            except psycopg.errors.InsufficientPrivilege as exc:
                raise SpaceRefused(f"provider postgres: {self.target.scrub(' '.join(str(exc).split()))[:300]} "
                                   "(a user space is read and written by its own role only)",
                                   spaceId=space_id, reason="access") from None
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self._drop()
                cause = self.target.scrub(" ".join(f"{type(exc).__name__}: {exc}".split()))[:300]
                raise ProviderUnavailable(f"provider postgres: the database at {self.location} failed: {cause}; "
                                          "nothing was written by this call", provider="postgres",
                                          reason="engine-failed", location=self.location) from None
            except psycopg.Error as exc:
                cause = self.target.scrub(" ".join(f"{type(exc).__name__}: {exc}".split()))[:300]
                raise ProviderUnavailable(f"provider postgres: the database at {self.location} refused: {cause}",
                                          provider="postgres", reason="engine-failed",
                                          location=self.location) from None

    # ------------------------------------------------------------------ protocol

    def health(self) -> Health:
        """Server version, schema version, the items this role can read; ``details.migrated`` when this open
        migrated the schema (``"1 -> 2"``)."""
        started = time.perf_counter()

        def read(conn: Any) -> tuple[str, int, str]:
            version = conn.execute("SHOW server_version").fetchone()[0]
            count = conn.execute(f'SELECT count(*) FROM "{self.schema}".items WHERE deleted_at IS NULL').fetchone()[0]
            role = conn.execute("SELECT current_user").fetchone()[0]
            return version, count, role

        version, count, role = self.call(read)
        details: dict[str, Any] = {"schema": self.schema, "schemaVersion": CURRENT, "role": role,
                                   "author": self.author, "access": self.access, "semantic": self.semantic}
        if self.semantic_note:
            details["semanticNote"] = self.semantic_note
        message = f"{count} items readable by role {role} in schema {self.schema}"
        if self.migrated:
            details["migrated"] = f"{self.migrated[0]} -> {self.migrated[1]}"
            message += f" (schema migrated from version {self.migrated[0]} to {self.migrated[1]})"
        if self.added:
            details["added"] = list(self.added)
            message += (" (" + " and ".join({"trigram": "the pg_trgm substring index",
                                              "vectors": "the pgvector column"}[k] for k in self.added)
                        + " added: the server has the extension now)")
        if self.pending:
            details["schemaVersion"] = self.pending[0]
            message += (f" (schema version {self.pending[0]}: the next provider enable or use migrates it to "
                        f"{self.pending[1]})")
        return Health(True, f"PostgreSQL {version}", self.location, count, (time.perf_counter() - started) * 1000,
                      message, details)

    def discover(self) -> list[Namespace]:
        """Every space this role can read (team spaces, and its own user spaces), oldest first."""
        rows = self.call(lambda conn: conn.execute(
            f'SELECT s.id, s.name, s.description, s.access, (SELECT count(*) FROM "{self.schema}".items i '
            f'WHERE i.space_id = s.id AND i.deleted_at IS NULL) FROM "{self.schema}".spaces s '
            "ORDER BY s.created_at, s.id").fetchall())
        return [Namespace(key, name, description or f"PostgreSQL {access} space", {"spaceKey": key}, count)
                for key, name, description, access, count in rows]

    def create_namespace(self, name: str, description: str) -> Namespace:
        """A new space of :attr:`access` (``team`` or ``user``) owned by this role."""
        key = uuid.uuid4().hex
        self.call(lambda conn: conn.execute(
            f'INSERT INTO "{self.schema}".spaces (id, name, description, access, author) VALUES (%s, %s, %s, %s, %s)',
            (key, name, description or "", self.access, self.author)))
        return Namespace(key, name, description, {"spaceKey": key}, 0)

    def space(self, connection: dict[str, Any], *, space_id: str) -> "PostgresSpace":
        """The space of ``connection["spaceKey"]`` (:class:`InvalidInput` without it)."""
        key = str(connection.get("spaceKey") or "")
        if not key:
            raise InvalidInput("connection", "needs spaceKey", spaceId=space_id)
        from .space import PostgresSpace

        return PostgresSpace(self, key, space_id)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._drop()
