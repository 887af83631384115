"""The provider's tables, versioned and migrated forward when the provider opens (never silently).

Schema ``<schema>`` (service field ``schema``, default ``mnemon``) holds:

- ``meta (key, value)``: ``schema_version`` (:data:`CURRENT`, an integer as text);
- ``spaces (id, name, description, access, owner_role, author, created_at)``: ``access`` ``team`` (every
  role that may use the schema reads and writes it) or ``user`` (only ``owner_role``, the role that made it);
- ``items (id, space_id, content, content_hash, category, importance, tags, entities, source, branches,
  author, author_role, created_at, updated_at, deleted_at, replaced_id, terms, tsv)``: ``branches`` the
  item's ``branch:<name>`` tags (the branch scope recall filters in SQL), ``terms`` the item's indexed terms
  (:data:`mnemon_ls.spaces.index.TOKENIZER`: words, identifier parts, CJK character pairs, folded) and ``tsv``
  their ``tsvector`` (``array_to_tsvector``: no language configuration, every term as it is), with a GIN
  index; a unique index on ``(space_id, content_hash)`` of the active items makes a concurrent duplicate a
  skip, never a second row.

Row-level security (``ENABLE`` and ``FORCE``, so the tables' owner is bound too; a superuser is not):
a role reads a space when it is ``team`` or its ``owner_role``, reads and changes the items of the spaces it
reads, and inserts only items whose ``author_role`` is itself (the column's default).

Versions (:data:`MIGRATIONS`): 1 the tables and policies; 2 ``pg_trgm`` and a trigram index on
``lower(content)`` (substring matches of identifiers and CJK text) when the server has the extension
(``meta.trigram`` ``on``/``off``); 3 the ``embedding vector(384)`` column and its HNSW index when the
server has pgvector (``meta.vectors``); 4 ``postings (space_id, term, created_at, item_id)``, one row per
indexed term of each active item (primary key in that order, so the newest items holding a term are one index
range read backwards, and how many hold it is counted up to a cap without reading the rest), kept by a trigger
on ``items`` in the writing transaction itself (an insert adds the rows, a soft delete or a change of the terms
removes or replaces them), filled for the existing active items by the migration (``meta.postings_backfilled``
their count), with the row-level security of ``items``; roles that could insert items are granted what the
trigger needs on it. :func:`migrate` applies the missing
steps in one transaction under an advisory lock (two machines opening at once migrate once) and returns
``(from, to)``; a database at a newer version than this package knows is refused, never rewritten.
"""

from __future__ import annotations

import re
from typing import Any

from mnemon_ls.errors import ProviderUnavailable

#: The schema version this package writes.
CURRENT = 4
_LOCK_KEY = 0x6D6E656D6F6E  # "mnemon": the advisory lock of a migration
SCHEMA_RE = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _v1(s: str) -> list[str]:
    return [
        f'CREATE TABLE IF NOT EXISTS "{s}".spaces ('
        " id text PRIMARY KEY, name text NOT NULL, description text NOT NULL DEFAULT '',"
        " access text NOT NULL CHECK (access IN ('team', 'user')),"
        " owner_role name NOT NULL DEFAULT current_user, author text NOT NULL,"
        " created_at timestamptz NOT NULL DEFAULT now())",
        f'CREATE TABLE IF NOT EXISTS "{s}".items ('
        " id text PRIMARY KEY,"
        f' space_id text NOT NULL REFERENCES "{s}".spaces (id),'
        " content text NOT NULL, content_hash text NOT NULL, category text NOT NULL,"
        " importance integer NOT NULL CHECK (importance BETWEEN 1 AND 5),"
        " tags text[] NOT NULL DEFAULT '{}', entities text[] NOT NULL DEFAULT '{}', source text,"
        " branches text[] NOT NULL DEFAULT '{}', author text NOT NULL,"
        " author_role name NOT NULL DEFAULT current_user,"
        " created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),"
        " deleted_at timestamptz, replaced_id text,"
        " terms text[] NOT NULL DEFAULT '{}',"
        " tsv tsvector GENERATED ALWAYS AS (array_to_tsvector(terms)) STORED)",
        f'CREATE UNIQUE INDEX IF NOT EXISTS items_active_content ON "{s}".items (space_id, content_hash)'
        " WHERE deleted_at IS NULL",
        f'CREATE INDEX IF NOT EXISTS items_tsv ON "{s}".items USING gin (tsv)',
        f'CREATE INDEX IF NOT EXISTS items_space_created ON "{s}".items (space_id, created_at)',
        f'ALTER TABLE "{s}".spaces ENABLE ROW LEVEL SECURITY',
        f'ALTER TABLE "{s}".spaces FORCE ROW LEVEL SECURITY',
        f'ALTER TABLE "{s}".items ENABLE ROW LEVEL SECURITY',
        f'ALTER TABLE "{s}".items FORCE ROW LEVEL SECURITY',
        f'CREATE POLICY spaces_read ON "{s}".spaces FOR SELECT'
        " USING (access = 'team' OR owner_role = current_user)",
        f'CREATE POLICY spaces_make ON "{s}".spaces FOR INSERT WITH CHECK (owner_role = current_user)',
        f'CREATE POLICY spaces_change ON "{s}".spaces FOR UPDATE USING (owner_role = current_user)'
        " WITH CHECK (owner_role = current_user)",
        f'CREATE POLICY items_read ON "{s}".items FOR SELECT'
        f' USING (EXISTS (SELECT 1 FROM "{s}".spaces p WHERE p.id = space_id))',
        f'CREATE POLICY items_write ON "{s}".items FOR INSERT WITH CHECK (author_role = current_user'
        f' AND EXISTS (SELECT 1 FROM "{s}".spaces p WHERE p.id = space_id))',
        f'CREATE POLICY items_change ON "{s}".items FOR UPDATE'
        f' USING (EXISTS (SELECT 1 FROM "{s}".spaces p WHERE p.id = space_id))'
        f' WITH CHECK (EXISTS (SELECT 1 FROM "{s}".spaces p WHERE p.id = space_id))',
    ]


def _v2(s: str, conn: Any = None) -> list[str]:
    """The trigram index, when the server has ``pg_trgm`` (PostgreSQL's contrib; the pgserver wheel lacks it):
    without it the substring matches are read without an index (``meta.trigram`` says which)."""
    have = conn is None or conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')").fetchone()[0]
    if not have:
        return [f"INSERT INTO \"{s}\".meta (key, value) VALUES ('trigram', 'off') ON CONFLICT (key) DO UPDATE "
                "SET value = excluded.value"]
    return ["CREATE EXTENSION IF NOT EXISTS pg_trgm",
            f'CREATE INDEX IF NOT EXISTS items_trgm ON "{s}".items USING gin (lower(content) gin_trgm_ops)',
            f"INSERT INTO \"{s}\".meta (key, value) VALUES ('trigram', 'on') ON CONFLICT (key) DO UPDATE "
            "SET value = excluded.value"]


def _v3(s: str, conn: Any = None) -> list[str]:
    """The vector column of semantic recall (:mod:`.vectors`), when the server has pgvector: 384 dimensions
    (the bundled model's) and an HNSW index on the cosine distance (``meta.vectors`` says which)."""
    have = conn is None or conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").fetchone()[0]
    if not have:
        return [f"INSERT INTO \"{s}\".meta (key, value) VALUES ('vectors', 'off') ON CONFLICT (key) DO UPDATE "
                "SET value = excluded.value"]
    return ["CREATE EXTENSION IF NOT EXISTS vector",
            f'ALTER TABLE "{s}".items ADD COLUMN IF NOT EXISTS embedding vector(384)',
            f'CREATE INDEX IF NOT EXISTS items_embedding ON "{s}".items USING hnsw (embedding vector_cosine_ops)',
            f"INSERT INTO \"{s}\".meta (key, value) VALUES ('vectors', 'on') ON CONFLICT (key) DO UPDATE "
            "SET value = excluded.value"]


def _v4(s: str, conn: Any = None) -> list[str]:
    """The postings of recall's candidates (module doc; :mod:`.recall`), their trigger, policies, grants and
    backfill. The backfill reads every active item, whoever may read it: both tables' row-level security is
    lifted for the owner inside this transaction only (the migration runs as the owner: creating a trigger on
    ``items`` needs it)."""
    exists = f'EXISTS (SELECT 1 FROM "{s}".spaces p WHERE p.id = space_id)'
    changed = ("NEW.terms IS DISTINCT FROM OLD.terms OR NEW.created_at IS DISTINCT FROM OLD.created_at "
               "OR NEW.space_id IS DISTINCT FROM OLD.space_id")
    return [
        f'CREATE TABLE "{s}".postings ('
        ' space_id text NOT NULL, term text COLLATE "C" NOT NULL, created_at timestamptz NOT NULL,'
        " item_id text NOT NULL)",
        f'ALTER TABLE "{s}".postings ENABLE ROW LEVEL SECURITY',
        f'ALTER TABLE "{s}".postings FORCE ROW LEVEL SECURITY',
        f'CREATE POLICY postings_read ON "{s}".postings FOR SELECT USING ({exists})',
        f'CREATE POLICY postings_write ON "{s}".postings FOR INSERT WITH CHECK ({exists})',
        f'CREATE POLICY postings_drop ON "{s}".postings FOR DELETE USING ({exists})',
        f'CREATE OR REPLACE FUNCTION "{s}".items_postings() RETURNS trigger LANGUAGE plpgsql AS $body$\n'
        "BEGIN\n"
        "  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL AND (TG_OP = 'DELETE'"
        f" OR NEW.deleted_at IS NOT NULL OR {changed}) THEN\n"
        f'    DELETE FROM "{s}".postings WHERE space_id = OLD.space_id AND term = ANY(OLD.terms)'
        " AND created_at = OLD.created_at AND item_id = OLD.id;\n"
        "  END IF;\n"
        "  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL AND (TG_OP = 'INSERT'"
        f" OR OLD.deleted_at IS NOT NULL OR {changed}) THEN\n"
        f'    INSERT INTO "{s}".postings (space_id, term, created_at, item_id)'
        " SELECT NEW.space_id, t, NEW.created_at, NEW.id FROM unnest(NEW.terms) t ON CONFLICT DO NOTHING;\n"
        "  END IF;\n"
        "  RETURN NULL;\n"
        "END\n"
        "$body$",
        f'DROP TRIGGER IF EXISTS items_postings ON "{s}".items',
        f'CREATE TRIGGER items_postings AFTER INSERT OR UPDATE OR DELETE ON "{s}".items'
        f' FOR EACH ROW EXECUTE FUNCTION "{s}".items_postings()',
        # the roles granted items before this version get what the trigger does on their behalf
        "DO $grants$ DECLARE r record; BEGIN FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants"
        f" WHERE table_schema = '{s}' AND table_name = 'items' AND privilege_type = 'INSERT'"
        " AND grantee <> current_user LOOP"
        f" EXECUTE format('GRANT SELECT, INSERT, DELETE ON %I.postings TO %I', '{s}', r.grantee);"
        " END LOOP; END $grants$",
        f'ALTER TABLE "{s}".items NO FORCE ROW LEVEL SECURITY',
        f'ALTER TABLE "{s}".postings NO FORCE ROW LEVEL SECURITY',
        # the rows first, then the key's index built from them in one sort (an insert into the index row by row
        # took ten times as long at 1,000,000 items)
        f'INSERT INTO "{s}".postings (space_id, term, created_at, item_id) SELECT DISTINCT space_id, t, created_at,'
        f' id FROM "{s}".items, unnest(terms) t WHERE deleted_at IS NULL',
        f'ALTER TABLE "{s}".postings ADD PRIMARY KEY (space_id, term, created_at, item_id)',
        f"INSERT INTO \"{s}\".meta (key, value) SELECT 'postings_backfilled', count(*)::text FROM \"{s}\".items"
        " WHERE deleted_at IS NULL ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        f'ALTER TABLE "{s}".items FORCE ROW LEVEL SECURITY',
        f'ALTER TABLE "{s}".postings FORCE ROW LEVEL SECURITY',
    ]


#: ``{version: statements(schema, connection)}``: what brings a database from ``version - 1`` to ``version``.
MIGRATIONS = {1: lambda s, conn=None: _v1(s), 2: _v2, 3: _v3, 4: _v4}


def recheck_extensions(conn: Any, schema: str) -> list[str]:
    """Add what an earlier migration left out because the server lacked the extension (``meta.trigram`` or
    ``meta.vectors`` ``off``), now that the server has it: the same statements as :func:`_v2` / :func:`_v3`, in
    one transaction, without the statement timeout. Returns the keys turned ``on``; ``[]`` when nothing was
    off, the extensions are still missing, or this role may not add them (the owner's next open does; nothing
    is changed then)."""
    import psycopg

    row = conn.execute(f"SELECT array_agg(key) FROM \"{schema}\".meta WHERE key IN ('trigram', 'vectors') AND "
                       "value = 'off'").fetchone()
    off = sorted(row[0] or []) if row else []
    if not off:
        return []
    names = {"trigram": "pg_trgm", "vectors": "vector"}
    available = {r[0] for r in conn.execute("SELECT name FROM pg_available_extensions WHERE name = ANY(%s)",
                                            ([names[k] for k in off],)).fetchall()}
    wanted = [k for k in off if names[k] in available]
    if not wanted:
        return []
    try:
        with conn.transaction():
            conn.execute("SET LOCAL statement_timeout = 0")
            for key in wanted:
                for statement in (_v2 if key == "trigram" else _v3)(schema, None):
                    conn.execute(statement)
    except psycopg.errors.InsufficientPrivilege:
        return []
    return wanted


def flag(conn: Any, schema: str, key: str) -> bool:
    """Whether ``meta.<key>`` (``trigram``, ``vectors``) is ``on``."""
    row = conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s', (key,)).fetchone()
    return bool(row) and row[0] == "on"


def version_of(conn: Any, schema: str) -> int:
    """The stored ``schema_version`` (0 when the schema or its ``meta`` table does not exist)."""
    row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".meta',)).fetchone()
    if row is None or row[0] is None:
        return 0
    found = conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s', ("schema_version",)).fetchone()
    return int(found[0]) if found else 0


def migrate(conn: Any, schema: str, location: str, target: int = CURRENT) -> tuple[int, int]:
    """Bring ``schema`` to ``target`` (default :data:`CURRENT`) on ``conn`` (a psycopg connection, not in a
    transaction) in one transaction under an advisory lock, without the connection's statement timeout (a
    backfill of a large database takes minutes; cut short it would start over at every open); returns
    ``(version found, version now)``.

    Raises :class:`ProviderUnavailable` (``reason`` ``format-too-new``) when the database is at a newer
    version than this package knows (nothing is changed), and ``engine-failed`` naming ``location`` and the
    version needed when the role may not migrate (e.g. no ``CREATE`` on the database: an administrator opens
    it once, or grants it)."""
    if not SCHEMA_RE.fullmatch(schema):
        raise ValueError("schema must be 1..63 lower-case letters, digits or '_'")
    import psycopg

    with conn.transaction():
        found = version_of(conn, schema)
        if found > CURRENT:
            raise ProviderUnavailable(
                f"provider postgres: the database at {location} has schema version {found}, newer than this "
                f"package knows ({CURRENT}); upgrade mnemon-ls-provider-postgres (nothing was changed)",
                provider="postgres", reason="format-too-new", location=location, schemaVersion=found)
        if found >= target:
            return found, found
        # not bound by the per-statement timeout (``timeoutSeconds``): version 4's backfill reads every item
        # (bench/results/postgres_scale.md: minutes at 1M), and a migration cut short would start over at each open
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        found = version_of(conn, schema)  # another machine may have migrated while this one waited
        if found >= target:
            return found, found
        try:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            conn.execute(f'CREATE TABLE IF NOT EXISTS "{schema}".meta (key text PRIMARY KEY, value text NOT NULL)')
            for version in range(found + 1, target + 1):
                for statement in MIGRATIONS[version](schema, conn):
                    conn.execute(statement)
            conn.execute(f'INSERT INTO "{schema}".meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE '
                         "SET value = excluded.value", ("schema_version", str(target)))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise ProviderUnavailable(
                f"provider postgres: the database at {location} is at schema version {found} and this role may "
                f"not migrate it to {target} ({' '.join(str(exc).split())}); open it once as its owner",
                provider="postgres", reason="engine-failed", location=location, schemaVersion=found) from None
    return found, target
